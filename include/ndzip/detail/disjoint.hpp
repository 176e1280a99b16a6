// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The refusal of overlapping buffers that every entry point makes (ndzip::compressor, the frame
// functions): from the addresses alone, so that it serves device memory without a host read.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ndzip::detail {

// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte (an empty range
// shares none).
inline bool ranges_overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

// Compressing into memory that holds the values, or decoding into memory that holds the
// stream (or, for a frame, its header), would let kernels or the host overwrite what is still
// to be read: refused before anything runs. `buffer` names the other buffer ("stream buffer",
// "frame buffer").
inline void check_disjoint(const void* values, std::size_t values_bytes, const void* other,
                           std::size_t other_bytes, const char* buffer = "stream buffer") {
  if (ranges_overlap(values, values_bytes, other, other_bytes))
    throw std::invalid_argument("ndzip: the " + std::string(buffer) + " (" +
                                std::to_string(other_bytes) + " bytes) and the values (" +
                                std::to_string(values_bytes) +
                                " bytes) overlap in memory; compress and decompress need "
                                "disjoint buffers");
}

}  // namespace ndzip::detail
