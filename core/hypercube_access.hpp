#pragma once
// Moving one hypercube between the grid and a team-scratch block of 4096 words: where its
// elements are in the grid, and team-level loads and stores that rotate the sign bit to bit 0
// and back. Written against the profile, so one template serves float/double and 1/2/3-D.

#include <cstddef>

#include <Kokkos_Core.hpp>

#include "backends/host_inline.hpp"
#include "core/bit_mapping.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// A hypercube's elements travel in rows of up to 64 contiguous grid elements: a line along the
// last axis, or a 64-element piece of the single 4096-element 1-D line.
template <class Profile>
inline constexpr int hypercube_row_length = Profile::side_length < 64 ? Profile::side_length : 64;

// Distance in a hypercube's linear order between neighbours along `axis`: side_length^(D-1-axis).
template <class Profile>
KOKKOS_INLINE_FUNCTION constexpr int axis_stride(int axis) {
  int stride = 1;
  for (int b = axis + 1; b < Profile::dimensions; ++b) stride *= Profile::side_length;
  return stride;
}

// Offset in the grid (in elements) of the hypercube-local linear position `local`.
template <class Profile, int Dims = Profile::dimensions>
NDZIP_HOST_FORCEINLINE std::size_t grid_offset(const extent<Dims>& grid,
                                               const std::size_t (&origin)[Dims], int local) {
  constexpr int s = Profile::side_length;
  std::size_t offset = 0;
  for (int a = 0; a < Dims; ++a)
    offset = offset * grid[a] + origin[a] +
             static_cast<std::size_t>(local / axis_stride<Profile>(a) % s);
  return offset;
}

// Calls f(local, at) for every element of a hypercube: its hypercube-local position and its
// grid offset, spread over the team with consecutive lanes on consecutive elements of a row.
// Where a lane group is wider than a row (3-D: 16-element rows, 32 lanes), it takes several
// rows side by side: one row per iteration left half the lanes idle, and the 3-D decoder's
// store took 45 % of its time (H200).
template <class Profile, class LaneOps, class Member, class F>
NDZIP_HOST_FORCEINLINE void for_each_hypercube_element(
    const Member& member, const extent<Profile::dimensions>& grid,
    const std::size_t (&origin)[Profile::dimensions], const F& f) {
  constexpr int row = hypercube_row_length<Profile>;
  constexpr int span = LaneOps::group_lanes > row ? LaneOps::group_lanes : row;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, Profile::hypercube_size / span), [&](int g) {
    if constexpr (span == row) {
      // One row: its grid offset once, then a contiguous run that host compilers vectorise.
      const std::size_t at = grid_offset<Profile>(grid, origin, g * row);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, row),
                           [&](int x) { f(g * row + x, at + x); });
    } else {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, span), [&](int i) {
        const int x = i % row;
        f(g * span + i, grid_offset<Profile>(grid, origin, g * span + i - x) + x);
      });
    }
  });
}

// Loads a hypercube into `cube` with the sign bit rotated to bit 0.
template <class Profile, class LaneOps, class Member, class Bits>
NDZIP_HOST_FORCEINLINE void load_hypercube(const Member& member, const Bits* values,
                                           const extent<Profile::dimensions>& grid,
                                           const std::size_t (&origin)[Profile::dimensions],
                                           Bits* cube) {
  for_each_hypercube_element<Profile, LaneOps>(
      member, grid, origin,
      [&](int local, std::size_t at) { cube[local] = rotate_left_1(values[at]); });
}

// Stores a hypercube from `cube`, rotating bit 0 back to the sign position.
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void store_hypercube(const Member& member, const Bits* cube,
                                            const extent<Profile::dimensions>& grid,
                                            const std::size_t (&origin)[Profile::dimensions],
                                            Bits* values) {
  for_each_hypercube_element<Profile, LaneOps>(
      member, grid, origin,
      [&](int local, std::size_t at) { values[at] = rotate_right_1(cube[local]); });
}

}  // namespace ndzip::core
