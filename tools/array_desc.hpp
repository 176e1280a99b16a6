// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the tool knows about an array: element type and extents (slowest first), and the codec
// mode of its stream.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <ndzip/frame_format.hpp>

namespace ndzip_cli {

// The library's, whose codes are the frame's element-type byte.
using ndzip::element_type;

struct array_desc {
  element_type type = element_type::float32;
  int dims = 0;                            // 1..3
  std::array<std::uint64_t, 3> extents{};  // slowest first; entries past `dims` are 0
  ndzip::codec_mode mode = ndzip::codec_mode::ndzip;  // how its stream is coded
};

std::size_t element_size(element_type type);
// "float" or "double", as on the command line.
const char* type_name(element_type type);
std::optional<element_type> parse_type_name(std::string_view name);

// a * b, or nothing if the product does not fit in std::size_t.
std::optional<std::size_t> checked_mul(std::uint64_t a, std::uint64_t b);

// Number of elements and of bytes of the array. Throw std::runtime_error if they do not fit in
// std::size_t.
std::size_t element_count(const array_desc& array);
std::size_t byte_size(const array_desc& array);

// "100x200" (slowest first).
std::string extents_string(const array_desc& array);
// "float 100x200".
std::string describe(const array_desc& array);

bool operator==(const array_desc& l, const array_desc& r);
inline bool operator!=(const array_desc& l, const array_desc& r) {
  return !(l == r);
}

}  // namespace ndzip_cli
