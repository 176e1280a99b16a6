// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The operations on the command line's operands: compress, decompress, list (info). Each input
// is handled on its own: its failure is reported as "ndzip: error: ..." and the others go on.
// A failed input leaves its output untouched (but see write_output: a device or FIFO may have
// been written to, and a directory that cannot be synced is reported after the output is in
// place), and its input in place even with --rm.

#include "options.hpp"

namespace ndzip_cli {

// Runs opts.op on every operand; returns the exit status: 0, or 1 if any input failed.
int run_operands(const options& opts);

}  // namespace ndzip_cli
