// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::array_shape, an array's element type, rank and extents known at run time, and
// ndzip::visit_shape, which turns one into the compile-time types of ndzip::compressor and the
// View API (ndzip/dynamic.hpp is the run-time codec over them).

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "ndzip/export.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/frame_format.hpp"

namespace ndzip {

// An element type as a type, for visitors (visit_shape).
template <class T>
struct type_tag {
  using type = T;
};

// "float" or "double", as the command-line tool spells them.
NDZIP_EXPORT const char* element_type_name(element_type type);
// The element type named "float" or "double"; nothing for any other name.
NDZIP_EXPORT std::optional<element_type> parse_element_type(std::string_view name);
// Bytes per element: 4 or 8.
NDZIP_EXPORT std::size_t element_size(element_type type);

// The shape of a dense C-order array: element type, rank 1..3 and extents, slowest first (an
// extent may be 0: an empty array). Its sizes are checked, not assumed to fit in std::size_t.
class NDZIP_EXPORT array_shape {
 public:
  static constexpr int max_rank = 3;

  // An empty one-dimensional float array.
  array_shape() = default;
  // Throws std::invalid_argument unless there are 1 to 3 extents and `type` is one of
  // element_type's values.
  array_shape(element_type type, std::initializer_list<std::uint64_t> extents);
  array_shape(element_type type, int rank, const std::uint64_t* extents);
  template <int Dims>
  array_shape(element_type type, const ndzip::extent<Dims>& grid)
      : array_shape(type, Dims, extents_of(grid).data()) {}

  // The array a frame header records.
  static array_shape of(const frame_info& frame);

  element_type type() const { return m_type; }
  int rank() const { return m_rank; }
  // Extent `axis` (slowest first); std::out_of_range unless 0 <= axis < rank().
  std::uint64_t extent(int axis) const;
  // All three, 0 past rank() (the frame header's form).
  const std::array<std::uint64_t, 3>& extents() const { return m_extents; }
  // extent(axis) as a std::size_t; std::overflow_error where it does not fit.
  std::size_t addressable_extent(int axis) const;

  // Elements and bytes; std::overflow_error where the count does not fit in std::size_t.
  std::size_t element_count() const;
  std::size_t byte_size() const;
  std::size_t element_bytes() const { return element_size(m_type); }

  // The same shape with another element type, or with extent `axis` set to `n`.
  array_shape with_type(element_type type) const;
  array_shape with_extent(int axis, std::uint64_t n) const;

  // "100x200", and "float 100x200".
  std::string extents_string() const;
  std::string to_string() const;

  friend bool operator==(const array_shape& l, const array_shape& r) {
    return l.m_type == r.m_type && l.m_rank == r.m_rank && l.m_extents == r.m_extents;
  }
  friend bool operator!=(const array_shape& l, const array_shape& r) { return !(l == r); }

 private:
  template <int Dims>
  static std::array<std::uint64_t, 3> extents_of(const ndzip::extent<Dims>& grid) {
    std::array<std::uint64_t, 3> e{};
    for (int a = 0; a < Dims; ++a) e[a] = grid[a];
    return e;
  }

  element_type m_type = element_type::float32;
  int m_rank = 1;
  std::array<std::uint64_t, 3> m_extents{};
};

// Returns f(type_tag<T>{}, grid) for the shape's element type T (float or double) and its
// extents as an ndzip::extent<Dims>. Every return of f must have the same type. Throws
// std::overflow_error where an extent does not fit in std::size_t (their product is not
// checked: ndzip::check_grid_representable does that for the codec).
template <class F>
decltype(auto) visit_shape(const array_shape& shape, F&& f) {
  auto with_type = [&](auto tag) -> decltype(auto) {
    auto grid = [&](auto dims) {
      ndzip::extent<decltype(dims)::value> g;
      for (int a = 0; a < decltype(dims)::value; ++a) g[a] = shape.addressable_extent(a);
      return g;
    };
    switch (shape.rank()) {
      case 1:
        return f(tag, grid(std::integral_constant<int, 1>{}));
      case 2:
        return f(tag, grid(std::integral_constant<int, 2>{}));
      default:
        return f(tag, grid(std::integral_constant<int, 3>{}));
    }
  };
  return shape.type() == element_type::float32 ? with_type(type_tag<float>{})
                                               : with_type(type_tag<double>{});
}

}  // namespace ndzip
