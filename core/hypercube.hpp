#pragma once
// Moving one hypercube between the grid and a team-scratch block of 4096 words, and the
// integer Lorenzo transform on that block. All loops are team-level and written against the
// profile, so one template serves float/double and 1/2/3-D.

#include <cstddef>

#include <Kokkos_Core.hpp>

#include "core/bit_mapping.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// A hypercube's elements travel in rows of up to 64 contiguous grid elements: a line along the
// last axis, or a 64-element piece of the single 4096-element 1-D line.
template <class Profile>
inline constexpr int hypercube_row_length = Profile::side_length < 64 ? Profile::side_length : 64;

// Offset in the grid (in elements) of the hypercube-local linear position `local`.
template <class Profile, int Dims = Profile::dimensions>
KOKKOS_INLINE_FUNCTION std::size_t grid_offset(const extent<Dims>& grid,
                                               const std::size_t (&origin)[Dims], int local) {
  constexpr int s = Profile::side_length;
  std::size_t offset = 0;
  for (int a = 0; a < Dims; ++a) {
    int stride = 1;  // s^(Dims-1-a), the hypercube-local stride of axis a
    for (int b = a + 1; b < Dims; ++b) stride *= s;
    offset = offset * grid[a] + origin[a] + static_cast<std::size_t>(local / stride % s);
  }
  return offset;
}

// Calls f(local_offset, grid_offset, length) for every row of a hypercube, spread over the team.
template <class Profile, class Member, class F>
KOKKOS_INLINE_FUNCTION void for_each_hypercube_row(
    const Member& member, const extent<Profile::dimensions>& grid,
    const std::size_t (&origin)[Profile::dimensions], const F& f) {
  constexpr int row = hypercube_row_length<Profile>;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, Profile::hypercube_size / row), [&](int r) {
    const int local = r * row;
    f(local, grid_offset<Profile>(grid, origin, local), row);
  });
}

// Loads a hypercube into `cube` with the sign bit rotated to bit 0.
template <class Profile, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void load_hypercube(const Member& member, const Bits* values,
                                           const extent<Profile::dimensions>& grid,
                                           const std::size_t (&origin)[Profile::dimensions],
                                           Bits* cube) {
  for_each_hypercube_row<Profile>(member, grid, origin, [&](int local, std::size_t at, int n) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, n),
                         [&](int x) { cube[local + x] = rotate_left_1(values[at + x]); });
  });
}

// Stores a hypercube from `cube`, rotating bit 0 back to the sign position.
template <class Profile, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void store_hypercube(const Member& member, const Bits* cube,
                                            const extent<Profile::dimensions>& grid,
                                            const std::size_t (&origin)[Profile::dimensions],
                                            Bits* values) {
  for_each_hypercube_row<Profile>(member, grid, origin, [&](int local, std::size_t at, int n) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, n),
                         [&](int x) { values[at + x] = rotate_right_1(cube[local + x]); });
  });
}

// Calls f(first, stride) for every line of the hypercube along `axis`, spread over the team.
template <class Profile, class Member, class F>
KOKKOS_INLINE_FUNCTION void for_each_axis_line(const Member& member, int axis, const F& f) {
  constexpr int s = Profile::side_length;
  int stride = 1;
  for (int b = axis + 1; b < Profile::dimensions; ++b) stride *= s;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, Profile::hypercube_size / s), [&](int line) {
    const int outer = line / stride;
    const int inner = line % stride;
    f(outer * s * stride + inner, stride);
  });
}

// Forward integer Lorenzo transform: a backward difference along every axis, each line walked
// from its far end so that every difference reads values from before its pass. Nothing is
// predicted across the hypercube's faces.
template <class Profile, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void forward_lorenzo(const Member& member, Bits* cube) {
  for (int axis = 0; axis < Profile::dimensions; ++axis) {
    for_each_axis_line<Profile>(member, axis, [&](int first, int stride) {
      for (int c = Profile::side_length - 1; c > 0; --c)
        cube[first + c * stride] -= cube[first + (c - 1) * stride];
    });
    member.team_barrier();
  }
}

// Inverse transform: an inclusive prefix sum along every axis.
template <class Profile, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void inverse_lorenzo(const Member& member, Bits* cube) {
  for (int axis = 0; axis < Profile::dimensions; ++axis) {
    for_each_axis_line<Profile>(member, axis, [&](int first, int stride) {
      for (int c = 1; c < Profile::side_length; ++c)
        cube[first + c * stride] += cube[first + (c - 1) * stride];
    });
    member.team_barrier();
  }
}

}  // namespace ndzip::core
