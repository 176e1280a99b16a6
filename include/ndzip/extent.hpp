// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The shape of a dense C-order grid, slowest dimension first (as in the ndzip format).

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>

#include <Kokkos_Macros.hpp>

namespace ndzip {

template <int Dims>
class extent {
  static_assert(Dims >= 1 && Dims <= 3, "ndzip supports 1-, 2- and 3-D grids");

 public:
  static constexpr int dimensions = Dims;

  constexpr extent() = default;

  template <class... Sizes, std::enable_if_t<sizeof...(Sizes) == Dims &&
                                                 (std::is_integral_v<Sizes> && ...),
                                             int> = 0>
  constexpr explicit extent(Sizes... sizes) : m_sizes{static_cast<std::size_t>(sizes)...} {}

  KOKKOS_INLINE_FUNCTION constexpr std::size_t operator[](int axis) const { return m_sizes[axis]; }
  KOKKOS_INLINE_FUNCTION constexpr std::size_t& operator[](int axis) { return m_sizes[axis]; }

  // Number of elements in the grid.
  KOKKOS_INLINE_FUNCTION constexpr std::size_t size() const {
    std::size_t n = 1;
    for (int a = 0; a < Dims; ++a) n *= m_sizes[a];
    return n;
  }

  friend constexpr bool operator==(const extent& l, const extent& r) {
    for (int a = 0; a < Dims; ++a)
      if (l.m_sizes[a] != r.m_sizes[a]) return false;
    return true;
  }
  friend constexpr bool operator!=(const extent& l, const extent& r) { return !(l == r); }

 private:
  // A plain array (not std::array) so that device code can index it.
  std::size_t m_sizes[Dims] = {};
};

// "2161x4320": the extents slowest first, for messages. (Appended piece by piece: GCC 12 in
// C++20 mode warns -Wrestrict, falsely, on "x" + std::to_string(...).)
template <int Dims>
std::string to_string(const extent<Dims>& grid) {
  std::string s;
  for (int a = 0; a < Dims; ++a) {
    if (a) s += 'x';
    s += std::to_string(grid[a]);
  }
  return s;
}

}  // namespace ndzip
