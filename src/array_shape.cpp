// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip::array_shape (ndzip/array_shape.hpp).

#include "ndzip/array_shape.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace ndzip {

const char* element_type_name(element_type type) {
  return type == element_type::float32 ? "float" : "double";
}

std::optional<element_type> parse_element_type(std::string_view name) {
  if (name == "float") return element_type::float32;
  if (name == "double") return element_type::float64;
  return std::nullopt;
}

std::size_t element_size(element_type type) { return type == element_type::float32 ? 4 : 8; }

array_shape::array_shape(element_type type, std::initializer_list<std::uint64_t> extents)
    : array_shape(type, static_cast<int>(extents.size()), extents.begin()) {}

array_shape::array_shape(element_type type, int rank, const std::uint64_t* extents)
    : m_type(type), m_rank(rank) {
  if (type != element_type::float32 && type != element_type::float64)
    throw std::invalid_argument("ndzip: unknown element type code " +
                                std::to_string(static_cast<int>(type)) +
                                " (ndzip compresses float and double)");
  if (rank < 1 || rank > max_rank)
    throw std::invalid_argument("ndzip: an array of " + std::to_string(rank) +
                                " dimensions (ndzip holds 1 to 3)");
  std::copy(extents, extents + rank, m_extents.begin());
}

array_shape array_shape::of(const frame_info& frame) {
  return array_shape(frame.type, frame.dimensions, frame.extents.data());
}

std::uint64_t array_shape::extent(int axis) const {
  if (axis < 0 || axis >= m_rank)
    throw std::out_of_range("ndzip: axis " + std::to_string(axis) + " of a " +
                            std::to_string(m_rank) + "-D array");
  return m_extents[axis];
}

std::size_t array_shape::addressable_extent(int axis) const {
  const std::uint64_t n = extent(axis);
  if (n > std::numeric_limits<std::size_t>::max())
    throw std::overflow_error("ndzip: a " + to_string() + " array is too large to address");
  return static_cast<std::size_t>(n);
}

std::size_t array_shape::element_count() const {
  std::size_t count = 1;
  for (int a = 0; a < m_rank; ++a) {
    const std::size_t n = addressable_extent(a);
    if (n != 0 && count > std::numeric_limits<std::size_t>::max() / n)
      throw std::overflow_error("ndzip: a " + to_string() + " array is too large to address");
    count *= n;
  }
  // An empty array has no elements, whatever the other extents.
  return count;
}

std::size_t array_shape::byte_size() const {
  const std::size_t count = element_count();
  if (count > std::numeric_limits<std::size_t>::max() / element_bytes())
    throw std::overflow_error("ndzip: a " + to_string() + " array is too large to address");
  return count * element_bytes();
}

array_shape array_shape::with_type(element_type type) const {
  return array_shape(type, m_rank, m_extents.data());
}

array_shape array_shape::with_extent(int axis, std::uint64_t n) const {
  extent(axis);  // checks the axis
  array_shape shape = *this;
  shape.m_extents[axis] = n;
  return shape;
}

// Appended piece by piece: see ndzip::to_string(extent).
std::string array_shape::extents_string() const {
  std::string s;
  for (int a = 0; a < m_rank; ++a) {
    if (a) s += 'x';
    s += std::to_string(m_extents[a]);
  }
  return s;
}

std::string array_shape::to_string() const {
  std::string s = element_type_name(m_type);
  s += ' ';
  s += extents_string();
  return s;
}

}  // namespace ndzip
