// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The gray step of block_coding.hpp (gray_chunk, ungray_chunk) on chunks held by lane groups
// (backends/lane_group_ops.hpp), a device's schedule: lane l of a group holds columns l + 32h of
// its chunk, column i being plane W-1-i, so the plane above a column's is the column before it.
// A group loads a chunk's columns from consecutive words and stores them so (LaneOps::expand,
// LaneOps::compact); a thread per chunk walked its planes with loads and stores 32 lines apart
// across a warp (0.57 ms each way on gen_synthetic's 256^3 doubles, H100).

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

#include "core/chunk_packing.hpp"
#include "core/high_ratio/block_coding.hpp"

namespace ndzip::core::high_ratio {

// Columns a lane holds of a chunk of Bits.
template <class LaneOps, class Bits>
inline constexpr int columns_per_lane = static_cast<int>(sizeof(Bits) * 8) / LaneOps::group_lanes;

// Whether every lane runs by itself (a device's, LaneOps::held_lanes == 1), so that counters a
// team shares need atomic adds; not for a host thread that holds a whole warp or the host's
// schedule (void).
template <class LaneOps>
inline constexpr bool lanes_run_alone = LaneOps::held_lanes == 1;
template <>
inline constexpr bool lanes_run_alone<void> = false;

// A chunk's columns in ndzip form into gray form, in place: every column from column 2 on
// XORed with the column before it (the plane above).
template <class LaneOps, class Bits, int R>
KOKKOS_INLINE_FUNCTION void gray_columns(const typename LaneOps::lanes& held,
                                         Bits (&columns)[LaneOps::held_lanes][R]) {
  constexpr int slots = LaneOps::held_lanes;
  constexpr int lanes = LaneOps::group_lanes;
  Bits above[slots][R];
  for (int h = 0; h < R; ++h) {
    Bits mine[slots], before[slots];
    for (int s = 0; s < slots; ++s) mine[s] = columns[s][h];
    LaneOps::shuffle_up(held, mine, 1, before);
    // Lane 0's column 32h comes after lane 31's column of the slot before.
    Bits last[slots];
    if (h > 0) {
      for (int s = 0; s < slots; ++s) mine[s] = columns[s][h - 1];
      LaneOps::broadcast(held, mine, lanes - 1, last);
    }
    for (int s = 0; s < slots; ++s) above[s][h] = held.lane(s) == 0 && h > 0 ? last[s] : before[s];
  }
  for (int s = 0; s < slots; ++s)
    for (int h = 0; h < R; ++h)
      if (held.lane(s) + lanes * h >= 2) columns[s][h] ^= above[s][h];
}

// The inverse of gray_columns: column 0 stays, column i >= 1 becomes the XOR of gray columns
// 1 .. i (an inclusive XOR scan over the lanes, slot after slot).
template <class LaneOps, class Bits, int R>
KOKKOS_INLINE_FUNCTION void ungray_columns(const typename LaneOps::lanes& held,
                                           Bits (&columns)[LaneOps::held_lanes][R]) {
  constexpr int slots = LaneOps::held_lanes;
  constexpr int lanes = LaneOps::group_lanes;
  Bits carry[slots];  // the XOR of the columns of the slots before
  for (int s = 0; s < slots; ++s) carry[s] = 0;
  for (int h = 0; h < R; ++h) {
    Bits v[slots];
    for (int s = 0; s < slots; ++s) v[s] = held.lane(s) + lanes * h == 0 ? Bits{0} : columns[s][h];
    for (int d = 1; d < lanes; d *= 2) {
      Bits before[slots];
      LaneOps::shuffle_up(held, v, d, before);
      for (int s = 0; s < slots; ++s)
        if (held.lane(s) >= d) v[s] ^= before[s];
    }
    for (int s = 0; s < slots; ++s) v[s] ^= carry[s];
    if (h + 1 < R) LaneOps::broadcast(held, v, lanes - 1, carry);
    for (int s = 0; s < slots; ++s)
      if (held.lane(s) + lanes * h != 0) columns[s][h] = v[s];
  }
}

// How many of a chunk's columns before column i its head announces.
template <class Bits>
KOKKOS_INLINE_FUNCTION int columns_before(Bits head, int i) {
  constexpr int w = static_cast<int>(sizeof(Bits) * 8);
  return i == 0 ? 0 : popcount(static_cast<Bits>(head >> (w - i)));
}

// The team policy of the per-block kernels that turn blocks on lane groups (LaneOps void: a
// one-thread team, the host's schedule).
template <class ExecSpace, class LaneOps, class Bits>
Kokkos::TeamPolicy<ExecSpace> lane_block_policy(const ExecSpace& exec, std::size_t blocks,
                                                std::size_t scratch_bytes) {
  const int league = static_cast<int>(blocks);
  Kokkos::TeamPolicy<ExecSpace> policy = [&] {
    if constexpr (std::is_void_v<LaneOps>)
      return Kokkos::TeamPolicy<ExecSpace>(exec, league, 1);
    else
      return Kokkos::TeamPolicy<ExecSpace>(exec, league, LaneOps::team_size(sizeof(Bits)),
                                           LaneOps::vector_length);
  }();
  return policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes));
}

// A block (its H chunk heads, then the chunks' columns) turned chunk by chunk by `step`
// (gray_columns or ungray_columns) into `to` by a team of lane groups, a chunk per group: the
// new heads first, into `heads` (team scratch, H words), then, after a scan of them, every
// chunk's non-zero columns into place, each group's passed to visit(held, columns, heads) as
// well. `offsets` is team scratch for 2H ints. Returns the new block's column count to the
// whole team; the caller writes the heads into `to`.
template <class Profile, class LaneOps, class Bits, class Member, class Step, class Visit>
KOKKOS_INLINE_FUNCTION int turn_block(const Member& member, const Bits* in, Bits* to, Bits* heads,
                                      int* offsets, const Step& step, const Visit& visit) {
  using held_type = typename LaneOps::lanes;
  constexpr int chunks = Profile::chunks_per_hypercube;
  constexpr int slots = LaneOps::held_lanes;
  constexpr int r = columns_per_lane<LaneOps, Bits>;
  int* in_start = offsets;
  int* out_start = offsets + chunks;
  scan_column_counts<Profile, LaneOps>(member, in, in_start);
  // Chunk c's columns, turned.
  const auto load = [&](const held_type& held, int first, Bits(&columns)[slots][r]) {
    Bits in_heads[slots];
    const Bits* from[slots];
    for (int s = 0; s < slots; ++s) {
      const int c = first + held.group(s);
      in_heads[s] = in[c];
      from[s] = in + chunks + in_start[c];
    }
    LaneOps::expand(held, in_heads, from, columns);
    step(held, columns);
  };
  LaneOps::for_each_group(member, chunks, [&](const held_type& held, int first) {
    Bits columns[slots][r], new_heads[slots];
    load(held, first, columns);
    LaneOps::nonzero_columns(held, columns, new_heads);
    for (int s = 0; s < slots; ++s)
      if (held.lane(s) == 0) heads[first + held.group(s)] = new_heads[s];
  });
  member.team_barrier();
  const int total = scan_column_counts<Profile, LaneOps>(member, heads, out_start);
  LaneOps::for_each_group(member, chunks, [&](const held_type& held, int first) {
    Bits columns[slots][r], new_heads[slots];
    Bits* out[slots];
    load(held, first, columns);
    for (int s = 0; s < slots; ++s) {
      const int c = first + held.group(s);
      new_heads[s] = heads[c];
      out[s] = to + chunks + out_start[c];
    }
    LaneOps::compact(held, columns, new_heads, out);
    visit(held, columns, new_heads);
  });
  return total;
}

}  // namespace ndzip::core::high_ratio
