// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How ndzip::mpi sees a View: its type checks, its extents, and C-order Views to pack a strided
// View into or unpack it from. Not part of the API.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "ndzip/view_checks.hpp"

namespace ndzip::mpi {

namespace detail {

template <class View, class ExecSpace>
constexpr void check_view_type() {
  static_assert(Kokkos::is_view<View>::value, "ndzip::mpi: values must be a Kokkos::View");
  using T = std::remove_const_t<typename View::value_type>;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "ndzip::mpi sends Views of float or double");
  static_assert(View::rank >= 1 && View::rank <= 3, "ndzip::mpi sends rank-1, -2 and -3 Views");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "ndzip::mpi: the View is not accessible from the execution space");
}

// Whether the View's elements lie densely in C order of its indices (LayoutRight, or any
// layout whose strides happen to be those).
template <class View>
bool is_c_contiguous(const View& v) {
  std::size_t expected = 1;
  for (int a = static_cast<int>(View::rank) - 1; a >= 0; --a) {
    if (v.extent(a) > 1 && static_cast<std::size_t>(v.stride(a)) != expected) return false;
    expected *= v.extent(a);
  }
  return true;
}

template <class View>
std::array<std::uint64_t, 3> extents_of(const View& v) {
  std::array<std::uint64_t, 3> e = {1, 1, 1};
  for (int a = 0; a < static_cast<int>(View::rank); ++a) e[a] = v.extent(a);
  return e;
}

// A C-order View of the same extents over `data` (to copy into or out of a strided View).
template <class T, class View>
auto c_order_over(T* data, const View& like) {
  using memory_space = typename View::memory_space;
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  if constexpr (View::rank == 1)
    return Kokkos::View<T*, Kokkos::LayoutRight, memory_space, unmanaged>(data, like.extent(0));
  else if constexpr (View::rank == 2)
    return Kokkos::View<T**, Kokkos::LayoutRight, memory_space, unmanaged>(data, like.extent(0),
                                                                           like.extent(1));
  else
    return Kokkos::View<T***, Kokkos::LayoutRight, memory_space, unmanaged>(
        data, like.extent(0), like.extent(1), like.extent(2));
}

}  // namespace detail

}  // namespace ndzip::mpi
