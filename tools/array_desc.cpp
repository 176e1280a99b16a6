// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "array_desc.hpp"

#include <limits>
#include <stdexcept>

namespace ndzip_cli {

std::size_t element_size(element_type type) {
  return type == element_type::float32 ? sizeof(float) : sizeof(double);
}

const char* type_name(element_type type) {
  return type == element_type::float32 ? "float" : "double";
}

std::optional<element_type> parse_type_name(std::string_view name) {
  if (name == "float") return element_type::float32;
  if (name == "double") return element_type::float64;
  return std::nullopt;
}

std::optional<std::size_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t max = std::numeric_limits<std::size_t>::max();
  if (a > max || b > max || (a != 0 && b > max / a)) return std::nullopt;
  return static_cast<std::size_t>(a * b);
}

std::size_t element_count(const array_desc& array) {
  std::optional<std::size_t> count = 1;
  for (int a = 0; a < array.dims && count; ++a) count = checked_mul(*count, array.extents[a]);
  if (!count)
    throw std::runtime_error("an array of " + extents_string(array) +
                             " elements is too large to address");
  return *count;
}

std::size_t byte_size(const array_desc& array) {
  const auto bytes = checked_mul(element_count(array), element_size(array.type));
  if (!bytes) throw std::runtime_error("a " + describe(array) + " array is too large to address");
  return *bytes;
}

std::string extents_string(const array_desc& array) {
  std::string s;
  for (int a = 0; a < array.dims; ++a) {
    if (a) s += 'x';  // appended piece by piece: see ndzip::to_string
    s += std::to_string(array.extents[a]);
  }
  return s;
}

std::string describe(const array_desc& array) {
  return std::string(type_name(array.type)) + " " + extents_string(array);
}

bool operator==(const array_desc& l, const array_desc& r) {
  return l.type == r.type && l.dims == r.dims && l.extents == r.extents;
}

}  // namespace ndzip_cli
