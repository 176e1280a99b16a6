// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What an asynchronous decompression (compressor::decompress_async) reports: written by the
// kernels into a View the caller provides, read by the caller once the execution-space instance
// has been fenced, and turned into the synchronous call's result or ndzip::stream_error by
// compressor::check_outcome.

#include <cstdint>

namespace ndzip {

struct decompress_outcome {
  // no_failure, or the first failure found: (hypercube index << 8) | failure code, the lowest
  // index winning. The codes are internal; check_outcome explains them.
  std::uint64_t failure;
  // The stream's size in bytes as its offset table gives it (the bytes consumed; when the stream
  // View is shorter, what it would need).
  std::uint64_t stream_bytes;
  // The size of the stream View that was decoded.
  std::uint64_t given_bytes;

  static constexpr std::uint64_t no_failure = ~std::uint64_t{0};
};

}  // namespace ndzip
