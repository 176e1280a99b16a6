// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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

// Whether `bits` has an odd number of bits set.
KOKKOS_INLINE_FUNCTION constexpr bool odd_bit_count(int bits) {
  bool odd = false;
  for (; bits != 0; bits >>= 1) odd = odd != ((bits & 1) != 0);
  return odd;
}

// Loads a hypercube's Lorenzo residuals into `cube`: every element, sign bit rotated to bit 0,
// minus its prediction from the 2^D - 1 neighbours before it inside the hypercube (the
// inclusion-exclusion sum that the per-axis backward differences compose to). Neighbours are
// read from the grid, where they are cache-resident, so every element is independent: no pass
// over team scratch and no sequential walk along lines. The shape for lane groups (GPUs) in 1-D
// and 2-D, whose 1 or 64 lines per axis would leave most lanes idle in a sweep; single-lane host
// threads, and lane groups in 3-D, are faster loading rows and sweeping the outer axes.
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void load_residuals(const Member& member, const Bits* values,
                                           const grid_placement<Profile>& placement, Bits* cube) {
  constexpr int dims = Profile::dimensions;
  constexpr int neighbours = 1 << dims;
  constexpr int lanes = LaneOps::group_lanes;
  constexpr int slots = LaneOps::held_lanes;
  // A call loads the terms of `batch` items before it uses any, so that their loads are in
  // flight together: one item at a time, a lane group waited on every load (H200, a 373 KB
  // 1-D float array, 23 teams: 42 % of the encoder's stall samples on that wait).
  constexpr int batch = 4;
  LaneOps::for_each_group(
      member, Profile::hypercube_size / lanes / batch,
      [&](const typename LaneOps::lanes& held, int first) NDZIP_INLINE_LAMBDA {
        const auto local = [&](int b, int slot) NDZIP_INLINE_LAMBDA {
          return ((first + held.group(slot)) * batch + b) * lanes + held.lane(slot);
        };
        Bits terms[batch][slots][neighbours];
        for (int b = 0; b < batch; ++b)
          for (int slot = 0; slot < slots; ++slot) {
            const std::size_t at = placement.offset(local(b, slot));
            for (int neighbour = 0; neighbour < neighbours; ++neighbour) {
              // Bit (dims-1-a) of `neighbour` steps back along axis a; steps out of the
              // hypercube drop the term (nothing is predicted across its faces).
              std::size_t back = 0;
              bool inside = true;
              for (int a = 0; a < dims; ++a) {
                if (!((neighbour >> (dims - 1 - a)) & 1)) continue;
                inside = inside && hypercube_coordinate<Profile>(local(b, slot), a) != 0;
                back += placement.stride[a];
              }
              terms[b][slot][neighbour] = inside ? rotate_left_1(values[at - back]) : Bits{0};
            }
          }
        for (int b = 0; b < batch; ++b)
          for (int slot = 0; slot < slots; ++slot) {
            // A term whose neighbour steps back along an odd number of axes is subtracted.
            Bits residual = 0;
            for (int neighbour = 0; neighbour < neighbours; ++neighbour)
              residual = odd_bit_count(neighbour) ? residual - terms[b][slot][neighbour]
                                               : residual + terms[b][slot][neighbour];
            cube[local(b, slot)] = residual;
          }
      });
}

// Lane groups in 3-D: loads a hypercube with its differences along the last two axes taken on
// the way in, a 16 x 16 plane per call. A group's lanes hold two rows side by side, so a lane's
// left neighbour is one shuffle away, and so is its neighbour in the row before (the other half
// of the group, in this piece or the one before); sweeping those axes instead cost a pass over
// team scratch and a barrier each, and along the last axis put a group's lanes on lines 16 words
// apart, a 16-way bank conflict on every access (191 M conflicts compressing 512^3 float, H200).
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void load_hypercube_plane_differences(
    const Member& member, const Bits* values, const grid_placement<Profile>& placement,
    Bits* cube) {
  constexpr int lanes = LaneOps::group_lanes;
  constexpr int slots = LaneOps::held_lanes;
  constexpr int row = hypercube_row_length<Profile>;
  static_assert(lanes == 2 * row && Profile::side_length == row);
  // The pieces of `lanes` elements in a plane, all loaded before any is used, so that their
  // loads are in flight together.
  constexpr int pieces = row * row / lanes;
  LaneOps::for_each_group(
      member, Profile::hypercube_size / lanes / pieces,
      [&](const typename LaneOps::lanes& held, int first) NDZIP_INLINE_LAMBDA {
        const auto local = [&](int p, int slot) NDZIP_INLINE_LAMBDA {
          return ((first + held.group(slot)) * pieces + p) * lanes + held.lane(slot);
        };
        Bits v[pieces][slots];
        for (int p = 0; p < pieces; ++p)
          for (int slot = 0; slot < slots; ++slot)
            v[p][slot] = rotate_left_1(values[placement.offset(local(p, slot))]);
        Bits other_half[slots] = {};  // the previous piece's values as the other half holds them
        for (int p = 0; p < pieces; ++p) {
          LaneOps::template subtract_from_below<row>(held, v[p], 1);
          // Rows 2p (lanes below `row`) and 2p + 1: each takes the difference to the row before,
          // row 2p + 1 to the other half of this piece, row 2p (but the plane's first) to the
          // other half of the piece before.
          Bits before[slots];
          for (int slot = 0; slot < slots; ++slot) before[slot] = other_half[slot];
          LaneOps::shuffle_xor(held, v[p], row, other_half);
          for (int slot = 0; slot < slots; ++slot) {
            const bool upper = held.lane(slot) >= row;
            if (upper || p != 0)
              cube[local(p, slot)] =
                  static_cast<Bits>(v[p][slot] - (upper ? other_half[slot] : before[slot]));
            else
              cube[local(p, slot)] = v[p][slot];
          }
        }
      });
}

// Calls step(at, stride) for every position `at` of every line along Axis except the line's
// first, walking each line from its far end (Descending) or from its start. A host thread (one
// lane) takes the lines of an outer slab side by side, so that every step is a contiguous run
// that the compiler vectorises. A lane of a group walks a whole line by itself: lines are
// independent, and a vector loop per step cost a warp synchronisation per element (H200).
template <class Profile, int Axis, class LaneOps, bool Descending, class Member, class Step>
NDZIP_HOST_FORCEINLINE void sweep_axis(const Member& member, const Step& step) {
  constexpr int s = Profile::side_length;
  constexpr int stride = axis_stride<Profile>(Axis);
  constexpr int lanes = LaneOps::group_lanes;
  constexpr int lines = Profile::hypercube_size / s;
  if constexpr (lanes == 1) {
    // The team's one thread (plain loops: see host_lane_ops::for_each_group).
    for (int slab = 0; slab < lines / stride; ++slab)
      for (int i = 1; i < s; ++i) {
        const int at = (slab * s + (Descending ? s - i : i)) * stride;
        for (int j = 0; j < stride; ++j) step(at + j, stride);
      }
  } else {
    static_assert(lines % lanes == 0);
    LaneOps::for_each_group(
        member, lines / lanes,
        [&](const typename LaneOps::lanes& held, int first) NDZIP_INLINE_LAMBDA {
          for (int slot = 0; slot < LaneOps::held_lanes; ++slot) {
            const int line = (first + held.group(slot)) * lanes + held.lane(slot);
            const int start = line / stride * s * stride + line % stride;
            for (int i = 1; i < s; ++i) step(start + (Descending ? s - i : i) * stride, stride);
          }
        });
  }
  member.team_barrier();
}

// Forward integer Lorenzo transform along Axes, in place on `cube`: a backward difference along
// each, every line walked from its far end so that every difference reads values from before
// its pass.
template <class Profile, class LaneOps, class Member, class Bits, int... Axes>
NDZIP_HOST_FORCEINLINE void forward_lorenzo([[maybe_unused]] const Member& member,
                                            [[maybe_unused]] Bits* cube,
                                            std::integer_sequence<int, Axes...>) {
  (sweep_axis<Profile, Axes, LaneOps, true>(
       member, [&](int at, int stride) NDZIP_INLINE_LAMBDA { cube[at] -= cube[at - stride]; }),
   ...);
}

// Loads a hypercube's Lorenzo residuals into `cube`, in the shape that suits the backend. In
// 3-D the 256 lines of axis 0 give every lane of a team a line to sweep, and one coalesced load
// per element beats load_residuals' eight (H200, 512^3 float: 223 against 135 GB/s
// compressing; 256^3 double: 272 against 210).
template <class Profile, class LaneOps, class Member, class Bits>
NDZIP_HOST_FORCEINLINE void load_hypercube_residuals(const Member& member, const Bits* values,
                                                     const grid_placement<Profile>& placement,
                                                     Bits* cube) {
  constexpr int dims = Profile::dimensions;
  if constexpr (LaneOps::group_lanes == 1) {
    load_hypercube_row_differences(values, placement, cube);
    forward_lorenzo<Profile, LaneOps>(member, cube, std::make_integer_sequence<int, dims - 1>{});
  } else if constexpr (dims == 3) {
    load_hypercube_plane_differences<Profile, LaneOps>(member, values, placement, cube);
    member.team_barrier();
    forward_lorenzo<Profile, LaneOps>(member, cube, std::make_integer_sequence<int, 1>{});
  } else {
    load_residuals<Profile, LaneOps>(member, values, placement, cube);
    member.team_barrier();
  }
}

// Host threads: stores a hypercube from `cube`, taking the last steps of the inverse transform
// on the way, row by row: in 2-D the prefix sums along axis 0 as a running sum of rows that
// stays in registers (instead of a sweep over `cube`), then in every dimension the last axis'
// sums in the lane-ops' vectors, into the grid, rotating bit 0 back to the sign position; a
// 1-D line's rows continue each other. A 3-D hypercube's outer axes are swept before
// (inverse_lorenzo): running sums over a plane's 16-element rows made each row wait for the one
// before it (3-D decompression 0.7x, 2-core Zen 4). The carry from row to row stays in vectors
// (host_lane_ops::store_prefix_sums); with the 2-D running sum, corpus decompression on one core
// 1-D float 1.09-1.13x, 2-D 1.02-1.05x.
template <class Profile, class LaneOps, class Bits>
NDZIP_HOST_FORCEINLINE void store_hypercube_sums(const Bits* cube,
                                                 const grid_placement<Profile>& placement,
                                                 Bits* values) {
  constexpr int row = hypercube_row_length<Profile>;
  [[maybe_unused]] Bits running[row];  // 2-D: the sum of the rows so far
  [[maybe_unused]] auto carry = LaneOps::template no_carry<Bits>();  // 1-D and 3-D
  for_each_hypercube_row(placement, [&](int first, std::size_t at, bool continued)
                                        NDZIP_INLINE_LAMBDA {
    if constexpr (Profile::dimensions == 2) {
      for (int x = 0; x < row; ++x)
        running[x] = static_cast<Bits>(first == 0 ? cube[x] : running[x] + cube[first + x]);
      // A 2-D row does not continue a line: no carry into it.
      LaneOps::template store_prefix_sums<row>(running, LaneOps::template no_carry<Bits>(),
                                               values + at);
    } else {
      if (!continued) carry = LaneOps::template no_carry<Bits>();
      carry = LaneOps::template store_prefix_sums<row>(cube + first, carry, values + at);
    }
  });
}

// Inverse Lorenzo transform: an inclusive prefix sum along every axis (in any order: they
// commute). Here the outer axes; lane groups take the last axis' sums while unpacking
// (unpack_columns), host threads while storing (store_hypercube_sums, in 2-D axis 0's too).
template <class Profile, class LaneOps, class Member, class Bits, int... OuterAxes>
KOKKOS_INLINE_FUNCTION void inverse_lorenzo(const Member& member, Bits* cube,
                                            std::integer_sequence<int, OuterAxes...>) {
  [[maybe_unused]] const auto add_previous = [&](int at, int stride) NDZIP_INLINE_LAMBDA {
    cube[at] += cube[at - stride];
  };
  (sweep_axis<Profile, OuterAxes, LaneOps, false>(member, add_previous), ...);
}

template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void inverse_lorenzo(const Member& member, Bits* cube) {
  inverse_lorenzo<Profile, LaneOps>(member, cube,
                                    std::make_integer_sequence<int, Profile::dimensions - 1>{});
}

}  // namespace ndzip::core
