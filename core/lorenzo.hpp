#pragma once
// The integer Lorenzo transform of a hypercube: the forward transform on the way in from the
// grid (encoder) and its inverse, per-axis prefix sums, on the team-scratch block (decoder).
// The loop shapes differ for single-lane host threads and for lane groups (LaneOps::group_lanes
// > 1: GPUs, and their host emulation); the arithmetic is the same (the per-axis operators
// commute, so any order gives the same residuals).

#include <cstddef>
#include <utility>

#include <Kokkos_Core.hpp>

#include "backends/host_inline.hpp"
#include "core/bit_mapping.hpp"
#include "core/hypercube_access.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// Loads a hypercube's Lorenzo residuals into `cube`: every element, sign bit rotated to bit 0,
// minus its prediction from the 2^D - 1 neighbours before it inside the hypercube (the
// inclusion-exclusion sum that the per-axis backward differences compose to). Neighbours are
// read from the grid, where they are cache-resident, so every element is independent: no pass
// over team scratch and no sequential walk along lines. The shape for lane groups (GPUs) in 1-D
// and 2-D, whose 1 or 64 lines per axis would leave most lanes idle in a sweep; single-lane host
// threads, and lane groups in 3-D, are faster with load_hypercube and forward_lorenzo.
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void load_residuals(const Member& member, const Bits* values,
                                           const extent<Profile::dimensions>& grid,
                                           const std::size_t (&origin)[Profile::dimensions],
                                           Bits* cube) {
  constexpr int dims = Profile::dimensions;
  constexpr int s = Profile::side_length;
  std::size_t grid_stride[dims];
  grid_stride[dims - 1] = 1;
  for (int a = dims - 2; a >= 0; --a) grid_stride[a] = grid_stride[a + 1] * grid[a + 1];

  constexpr int lanes = LaneOps::group_lanes;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, Profile::hypercube_size / lanes), [&](int g) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, lanes), [&](int lane) {
      const int local = g * lanes + lane;
      const std::size_t at = grid_offset<Profile>(grid, origin, local);
      Bits residual = 0;
      for (int neighbour = 0; neighbour < (1 << dims); ++neighbour) {
        // Bit (dims-1-a) of `neighbour` steps back along axis a; steps out of the hypercube
        // drop the term (nothing is predicted across its faces).
        std::size_t back = 0;
        bool inside = true, subtract = false;
        for (int a = 0; a < dims; ++a) {
          if (!((neighbour >> (dims - 1 - a)) & 1)) continue;
          inside = inside && local / axis_stride<Profile>(a) % s != 0;
          back += grid_stride[a];
          subtract = !subtract;
        }
        if (!inside) continue;
        const Bits term = rotate_left_1(values[at - back]);
        residual = subtract ? residual - term : residual + term;
      }
      cube[local] = residual;
    });
  });
}

// Calls step(at, stride) for every position `at` of every line along Axis except the line's
// first, walking each line from its far end (Descending) or from its start. Lines that are
// neighbours in memory go to the lanes of one team thread and are walked side by side, so every
// step is a contiguous access; a host thread (one lane) takes all lines of an outer slab, so its
// inner loop is long enough to vectorise.
template <class Profile, int Axis, class LaneOps, bool Descending, class Member, class Step>
NDZIP_HOST_FORCEINLINE void sweep_axis(const Member& member, const Step& step) {
  constexpr int s = Profile::side_length;
  constexpr int stride = axis_stride<Profile>(Axis);
  constexpr int lanes = LaneOps::group_lanes;
  constexpr int group = lanes > 1 ? lanes : stride;  // lines per team thread
  constexpr int lines = Profile::hypercube_size / s;
  static_assert(lines % group == 0);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, lines / group), [&](int g) {
    for (int i = 1; i < s; ++i) {
      const int c = Descending ? s - i : i;
      // Lines are numbered by (outer slab, inner offset). Where a group stays inside one slab,
      // its positions are contiguous, which the host compiler needs to see to vectorise.
      if constexpr (group <= stride) {
        const int at = (g * group / stride * s + c) * stride + g * group % stride;
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, group),
                             [&](int j) { step(at + j, stride); });
      } else {
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, group), [&](int j) {
          const int line = g * group + j;
          step((line / stride * s + c) * stride + line % stride, stride);
        });
      }
    }
  });
  member.team_barrier();
}

// Forward integer Lorenzo transform for a single-lane (host) thread, in place on `cube`: a
// backward difference along every axis, each line walked from its far end so that every
// difference reads values from before its pass.
template <class Profile, class LaneOps, class Member, class Bits, int... Axes>
NDZIP_HOST_FORCEINLINE void forward_lorenzo(const Member& member, Bits* cube,
                                            std::integer_sequence<int, Axes...>) {
  (sweep_axis<Profile, Axes, LaneOps, true>(
       member, [&](int at, int stride) { cube[at] -= cube[at - stride]; }),
   ...);
}

// Loads a hypercube's Lorenzo residuals into `cube`, in the shape that suits the backend. In
// 3-D the 256 lines per axis give every lane of a 256-thread team a line to sweep, and one
// coalesced load per element beats load_residuals' eight (H200, 512^3 float: 223 against 135
// GB/s compressing; 256^3 double: 272 against 210).
template <class Profile, class LaneOps, class Member, class Bits>
NDZIP_HOST_FORCEINLINE void load_hypercube_residuals(
    const Member& member, const Bits* values, const extent<Profile::dimensions>& grid,
    const std::size_t (&origin)[Profile::dimensions], Bits* cube) {
  if constexpr (LaneOps::group_lanes == 1 || Profile::dimensions == 3) {
    load_hypercube<Profile, LaneOps>(member, values, grid, origin, cube);
    member.team_barrier();
    forward_lorenzo<Profile, LaneOps>(member, cube,
                                      std::make_integer_sequence<int, Profile::dimensions>{});
  } else {
    load_residuals<Profile, LaneOps>(member, values, grid, origin, cube);
    member.team_barrier();
  }
}

// Inclusive prefix sum along the last axis for lane groups (GPUs): lane-level scans of each row
// (several short rows side by side in one lane group, or a long row piece by piece with a
// carry), plus for 1-D, where the single 4096-element line spans 64 rows, the carry of all rows
// before.
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void prefix_sum_last_axis(const Member& member, Bits* cube,
                                                 Bits* row_carry) {
  constexpr int lanes = LaneOps::group_lanes;
  constexpr int slots = LaneOps::held_lanes;
  constexpr int row = hypercube_row_length<Profile>;
  constexpr int rows = Profile::hypercube_size / row;
  using lanes_type = typename LaneOps::lanes;
  if constexpr (row <= lanes) {
    // Item g: the `lanes` words from g * lanes on, rows side by side.
    LaneOps::for_each_group(
        member, Profile::hypercube_size / lanes, [&](const lanes_type& held, int first) {
          Bits v[slots];
          for (int s = 0; s < slots; ++s)
            v[s] = cube[(first + held.group(s)) * lanes + held.lane(s)];
          LaneOps::template inclusive_scan<row>(held, v);
          for (int s = 0; s < slots; ++s)
            cube[(first + held.group(s)) * lanes + held.lane(s)] = v[s];
        });
  } else {
    // Item r: row r, `lanes` words at a time.
    LaneOps::for_each_group(member, rows, [&](const lanes_type& held, int first_row) {
      Bits carry[slots] = {};
      for (int piece = 0; piece < row / lanes; ++piece) {
        Bits v[slots];
        for (int s = 0; s < slots; ++s)
          v[s] = cube[(first_row + held.group(s)) * row + piece * lanes + held.lane(s)];
        LaneOps::template inclusive_scan<lanes>(held, v);
        for (int s = 0; s < slots; ++s) {
          v[s] += carry[s];
          cube[(first_row + held.group(s)) * row + piece * lanes + held.lane(s)] = v[s];
        }
        LaneOps::broadcast(held, v, lanes - 1, carry);
      }
    });
  }
  member.team_barrier();
  if constexpr (Profile::side_length > row) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, 1), [&](int) {
      Kokkos::parallel_scan(Kokkos::ThreadVectorRange(member, rows),
                            [&](int r, Bits& carry, bool final) {
                              const Bits total = cube[r * row + row - 1];
                              if (final) row_carry[r] = carry;
                              carry += total;
                            });
    });
    member.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, rows), [&](int r) {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, row),
                           [&](int x) { cube[r * row + x] += row_carry[r]; });
    });
    member.team_barrier();
  }
}

// Inverse Lorenzo transform: an inclusive prefix sum along every axis (in any order: they
// commute). A single-lane (host) thread walks the last axis' lines too; lane groups scan them.
template <class Profile, class LaneOps, class Member, class Bits, int... OuterAxes>
KOKKOS_INLINE_FUNCTION void inverse_lorenzo(const Member& member, Bits* cube, Bits* row_carry,
                                            std::integer_sequence<int, OuterAxes...>) {
  constexpr int last = Profile::dimensions - 1;
  const auto add_previous = [&](int at, int stride) { cube[at] += cube[at - stride]; };
  (sweep_axis<Profile, OuterAxes, LaneOps, false>(member, add_previous), ...);
  if constexpr (LaneOps::group_lanes == 1)
    sweep_axis<Profile, last, LaneOps, false>(member, add_previous);
  else
    prefix_sum_last_axis<Profile, LaneOps>(member, cube, row_carry);
}

template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void inverse_lorenzo(const Member& member, Bits* cube, Bits* row_carry) {
  inverse_lorenzo<Profile, LaneOps>(member, cube, row_carry,
                                    std::make_integer_sequence<int, Profile::dimensions - 1>{});
}

}  // namespace ndzip::core
