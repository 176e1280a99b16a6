// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Checks that turn a Kokkos::View into a contiguous C-order grid, or explain why it is not one.
// A LayoutLeft View of extents (a, b, c) is the C-order grid (c, b, a).

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "ndzip/detail/view_traits.hpp"
#include "ndzip/extent.hpp"

namespace ndzip {

// The C-order grid a View describes (extents slowest first). Throws std::invalid_argument if
// the View's elements are not one dense block in C or Fortran order.
template <class View>
extent<View::rank> grid_of(const View& v) {
  constexpr int dims = static_cast<int>(View::rank);
  static_assert(dims >= 1 && dims <= 3, "ndzip compresses rank-1, -2 and -3 Views");
  extent<dims> grid;
  for (int a = 0; a < dims; ++a)
    grid[a] = v.extent(detail::is_left_layout_v<View> ? dims - 1 - a : a);
  // Strides of the C-order grid, compared with the View's actual strides. Extents of 1 have no
  // meaningful stride, so they are skipped.
  std::size_t expected = 1;
  for (int a = dims - 1; a >= 0; --a) {
    const int view_axis = detail::is_left_layout_v<View> ? dims - 1 - a : a;
    if (grid[a] > 1 && static_cast<std::size_t>(v.stride(view_axis)) != expected)
      throw std::invalid_argument(
          "ndzip: " + detail::view_label(v) +
          " is not contiguous (a subview or padded layout); copy it into a LayoutRight or "
          "LayoutLeft View first");
    expected *= grid[a];
  }
  return grid;
}

template <class T, int Dims, class MemorySpace, class View>
void check_values_view(const View& values, const extent<Dims>& grid) {
  static_assert(Kokkos::is_view<View>::value, "ndzip: values must be a Kokkos::View");
  static_assert(std::is_same_v<std::remove_const_t<typename View::value_type>, T>,
                "ndzip: the values View has a different element type than the compressor");
  static_assert(static_cast<int>(View::rank) == Dims,
                "ndzip: the values View has a different rank than the compressor");
  static_assert(
      Kokkos::SpaceAccessibility<MemorySpace, typename View::memory_space>::accessible,
      "ndzip: the values View is not accessible from the compressor's execution space");
  const auto view_grid = grid_of(values);
  if (view_grid != grid) {
    throw std::invalid_argument("ndzip: " + detail::view_label(values) + " has extents " +
                                to_string(view_grid) +
                                " (slowest first) but the compressor was built for " +
                                to_string(grid));
  }
}

template <class MemorySpace, class View>
void check_stream_view(const View& stream) {
  static_assert(Kokkos::is_view<View>::value, "ndzip: the stream must be a Kokkos::View");
  static_assert(View::rank == 1, "ndzip: the stream must be a rank-1 View of bytes");
  static_assert(sizeof(typename View::value_type) == 1 &&
                    std::is_trivially_copyable_v<typename View::value_type>,
                "ndzip: the stream View must hold bytes (std::byte, char, unsigned char)");
  static_assert(
      Kokkos::SpaceAccessibility<MemorySpace, typename View::memory_space>::accessible,
      "ndzip: the stream View is not accessible from the compressor's execution space");
  if (stream.size() > 1 && stream.stride(0) != 1)
    throw std::invalid_argument("ndzip: " + detail::view_label(stream) + " is not contiguous");
}

}  // namespace ndzip
