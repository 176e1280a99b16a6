// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A deliberately simple, sequential encoder written from the stream format specification
// (../shared/spec/ndzip-stream-format.md), used as an oracle for shapes the reference vectors do
// not cover. It is checked against every reference stream in test_generator.cpp.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ndzip_test {

// The stream for the element bit patterns `values` (C order) of a grid with `dims` dimensions
// and the given extents (slowest first; unused axes ignored). Padding is written as zeros.
template <class Bits>
std::vector<unsigned char> model_compress(const std::vector<Bits>& values, int dims,
                                          const std::array<std::size_t, 3>& extents);

// The stream-format facts of a grid, computed independently of the library.
struct model_layout {
  std::size_t side = 0;             // s
  std::size_t hypercubes = 0;       // n
  std::size_t header_bytes = 0;     // P
  std::size_t border_elements = 0;  // B
  std::size_t word_bytes = 0;       // U
  std::size_t size_bound = 0;       // P + n*512*(W+1) + B*U
};
model_layout model_layout_of(bool is_double, int dims, const std::array<std::size_t, 3>& extents);

}  // namespace ndzip_test
