// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The three commands. Each throws std::runtime_error (or a subclass) saying what went wrong;
// OUT is then left untouched (but see write_output: a device or FIFO may have been written to,
// and a directory that cannot be synced is reported after OUT is in place).

#include "options.hpp"

namespace ndzip_cli {

void run_compress(const options& opts);
void run_decompress(const options& opts);
// Prints the description of the frame to standard output.
void run_info(const options& opts);

}  // namespace ndzip_cli
