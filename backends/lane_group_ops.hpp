// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Lane-ops for lane groups of 32, written once over a backend's intrinsics: a chunk lives in a
// group of 32 lanes, lane l holding rows l and, for double, l + 32. The bit transposition
// exchanges row pairs between lanes with shuffles; a ballot of "column != 0" is the chunk head
// (bit-reversed, since column 0 is the head's most significant bit); a lane finds its column's
// place in the block by counting the head bits above its plane, so compaction needs no scan
// over lanes.
//
// Every operation works on group values: arrays with one entry per lane that the calling code
// holds (a "slot"). On a GPU each lane runs the code for itself and holds one slot, its own; the
// host emulation (backends/emulated) holds every lane of a warp or wavefront in one host thread,
// where per-lane calls in a ThreadVectorRange could not see a later lane's value. The same
// algorithm thus runs on the GPU and, in every CI run, on the host.
//
// `Intrinsics` (backends/cuda, backends/hip, backends/emulated) supplies:
//   team_size(word_bytes), vector_length
//                                  the Kokkos team shape of a hypercube's team
//   wide_team_size(word_bytes)     lane groups of a team when few teams would leave most of the
//                                  device idle (small grids): more groups per hypercube cut the
//                                  time each team takes (equal to team_size: never)
//   min_teams_per_multiprocessor(role, word_bytes)
//                                  launch bounds of the single-pass encoder and of the decoder
//                                  (teams per multiprocessor; 0: none)
//   teams_progress_independently   whether a team may wait for another that started before it
//                                  (single-pass compression, core/block_placement.hpp)
//   groups_progress_independently  whether a lane group may wait for another, of its own team
//                                  too (the streamed kernels, core/streamed_kernels.hpp)
//   held_lanes, groups_per_call    slots per call, and how many lane groups they make up
//   lanes                          the held lanes: lane(s) is slot s's lane in its group,
//                                  group(s) which of the call's groups it belongs to
//   for_each_group(member, count, body)
//                                  body(lanes, first) for the items first ..
//                                  first + groups_per_call - 1 of 0..count, spread over the team
//   shuffle(lanes, in, out, kind, argument)
//                                  out[s] = in of a lane of s's group: a given lane, s's lane
//                                  xor a mask, or s's lane minus a distance (own value if none)
//   ballot_reversed(lanes, predicates, out)
//                                  out[s] bit 31-l = the predicate of lane l of s's group
//   has_reduce_or, reduce_or(lanes, values)
//                                  a group OR of their own (else xor shuffles)
//   has_rotate, rotate_left(x, r)  a rotation of a 32-bit word (else two shifts)
//   has_guarded_shuffle_up, combine_from_below<Segment, Subtract>(values, distance)
//                                  values[0] +- the value `distance` lanes below in its segment,
//                                  where there is one (else a shuffle and a lane test)
//   has_byte_permute, byte_permute(x, y, selector)
//                                  CUDA's byte permutation (__byte_perm): result byte n is
//                                  byte (selector >> 4n) & 7 of y:x (else rotations and masks)

#include <cstdint>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "backends/host/lane_ops.hpp"
#include "backends/kernel_role.hpp"

namespace ndzip::backend {

enum class shuffle_kind { from_lane, xor_lane, up };

// What the GPU backends share: every lane of a group is a Kokkos vector lane that runs the code
// itself, holding its own values only.
struct device_lane_group {
  // Lane groups per team (one team per hypercube) and launch bounds (teams per multiprocessor
  // that the compiler fits registers for; 0: none), per word size, measured on the H200
  // (GB/s, compress / decompress). Float: four groups a team, twelve teams (40 registers a
  // thread); eight groups a team gave 3-D 617 / 733, 2-D 527 / 797, 1-D 596 / 826, four
  // 716 / 847, 604 / 900, 698 / 938, sixteen 467 / 577, 413 / 638, 448 / 649. Double: eight
  // groups (sixteen were slower on both shapes: 1-D 772 / 820 against 926 / 999, 3-D 655 / 658
  // against 737 / 776; four cannot be launched with twelve teams' scratch), six teams
  // encoding (four gave 1-D 820 compressing, five 918, six 934), four decoding (72-76
  // registers unbounded: 1-D 937 -> 1000, 3-D about 730 -> 750; six gave 1-D 841, five 937).
  // Unbounded, the encoder took 54 registers and four teams (512^3 float 181 -> 225 GB/s
  // with the bounds, before the kernels of 2026-11-23). Chosen on NVIDIA, not tuned for AMD.
  static constexpr int team_size(int word_bytes) { return word_bytes == 4 ? 4 : 8; }
  // Sixteen groups: a 373 KB float array (23 hypercubes) spent 24 us in the encoder with four,
  // waiting on its loads one batch after another (H200).
  static constexpr int wide_team_size(int /*word_bytes*/) { return 16; }
  static constexpr int vector_length = 32;
  static constexpr int min_teams_per_multiprocessor(kernel_role role, int word_bytes) {
    return word_bytes == 4 ? 12 : role == kernel_role::decode ? 4 : 6;
  }
  // A started thread block runs to its end whatever other blocks do.
  static constexpr bool teams_progress_independently = true;
  // Whether a lane group may wait for another of the same or an earlier team
  // (core/streamed_kernels.hpp): a CUDA warp is a group and runs whatever its neighbours do;
  // two HIP groups share a wavefront, whose halves do not progress independently while one
  // spins.
  static constexpr bool groups_progress_independently = false;
  static constexpr bool has_reduce_or = false;  // no group OR of their own
  static constexpr bool has_rotate = false;     // no rotation of their own
  static constexpr bool has_byte_permute = false;
  static constexpr bool has_guarded_shuffle_up = false;  // no shuffle that tells "none"
  static constexpr int held_lanes = 1;
  static constexpr int groups_per_call = 1;

  struct lanes {
    int own;  // this lane's index in its group
    KOKKOS_INLINE_FUNCTION int lane(int /*slot*/) const { return own; }
    KOKKOS_INLINE_FUNCTION int group(int /*slot*/) const { return 0; }
  };

  // One vector loop around a team thread's items rather than one per item: Kokkos ends every
  // vector loop with a warp synchronisation, which cost 13 instructions per item (H200 SASS),
  // as much as the work on a one-word item. The threads take the items as TeamThreadRange does.
  template <class Member, class Body>
  KOKKOS_INLINE_FUNCTION static void for_each_group(const Member& member, int count,
                                                    const Body& body) {
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, vector_length), [&](int lane) {
      for (int item = member.team_rank(); item < count; item += member.team_size())
        body(lanes{lane}, item);
    });
  }
};

template <class Intrinsics>
struct lane_group_ops {
  static constexpr int team_size(int word_bytes) { return Intrinsics::team_size(word_bytes); }
  static constexpr int wide_team_size(int word_bytes) {
    return Intrinsics::wide_team_size(word_bytes);
  }
  static constexpr int vector_length = Intrinsics::vector_length;
  static constexpr int min_teams_per_multiprocessor(kernel_role role, int word_bytes) {
    return Intrinsics::min_teams_per_multiprocessor(role, word_bytes);
  }
  static constexpr bool teams_progress_independently = Intrinsics::teams_progress_independently;
  static constexpr bool groups_progress_independently = Intrinsics::groups_progress_independently;
  using schedule = Kokkos::Schedule<Kokkos::Static>;  // devices schedule blocks themselves
  static constexpr int max_hypercubes_per_team = 1;   // a hypercube per team, no staging
  static constexpr int group_lanes = 32;
  static constexpr int held_lanes = Intrinsics::held_lanes;
  static constexpr int groups_per_call = Intrinsics::groups_per_call;
  static_assert(held_lanes == 1 || held_lanes == group_lanes * groups_per_call);
  using lanes = typename Intrinsics::lanes;

  // One team's work: one code path on devices (the host has clones, backends/host/isa.hpp).
  template <class Body>
  KOKKOS_FORCEINLINE_FUNCTION static void run_team(const Body& body) {
    body();
  }

  template <class Member, class Body>
  KOKKOS_INLINE_FUNCTION static void for_each_group(const Member& member, int count,
                                                    const Body& body) {
    Intrinsics::for_each_group(member, count, body);
  }

  template <class Bits>
  KOKKOS_INLINE_FUNCTION static int popcount(Bits v) {
    return backend::popcount(v);
  }

  // Transposes each group's chunk bit matrix: afterwards row slot h of lane l holds column
  // i = l + 32h, the bits of plane W-1-i of rows 0..W-1, row 0 most significant. The recursive
  // block swap of the host transpose, with the row pairs (k, k + j) that lie in different lanes
  // exchanged by xor shuffles: log2(W) steps instead of a ballot per plane (H200, whole
  // kernels: ballots made every shape about 3x slower both ways, docs/PERFORMANCE-HISTORY.md).
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static void transpose(const lanes& held, Bits (&words)[held_lanes][R]) {
    constexpr int w = sizeof(Bits) * 8;
    static_assert(R * group_lanes == w);
    Bits mask = static_cast<Bits>(~Bits{0}) >> (w / 2);  // low half of each 2j-bit group
    for (int j = w / 2; j != 0;) {
      if (j >= group_lanes) {
        // Rows k and k + j share a lane: row slots h and h + j / 32.
        for (int s = 0; s < held_lanes; ++s)
          for (int h = 0; h < R; ++h)
            if ((h & (j / group_lanes)) == 0) {
              Bits& low = words[s][h];
              Bits& high = words[s][h + j / group_lanes];
              const Bits t = (low ^ (high >> j)) & mask;
              low ^= t;
              high ^= static_cast<Bits>(t << j);
            }
      } else {
        for (int h = 0; h < R; ++h) {
          Bits mine[held_lanes], other[held_lanes];
          for (int s = 0; s < held_lanes; ++s) mine[s] = words[s][h];
          Intrinsics::shuffle(held, mine, other, shuffle_kind::xor_lane, j);
          for (int s = 0; s < held_lanes; ++s) {
            // The 2j-bit groups (j < 32) lie inside 32-bit words, so a 64-bit word exchanges
            // its halves apart: no rotation across the halves (a choice of halves per lane
            // before two funnel shifts).
            const bool upper = held.lane(s) & j;
            const auto half_mask = static_cast<std::uint32_t>(mask);
            Bits exchanged = 0;
            for (int half = 0; half < w; half += 32)
              exchanged |= static_cast<Bits>(exchange_word(
                               static_cast<std::uint32_t>(mine[s] >> half),
                               static_cast<std::uint32_t>(other[s] >> half), upper, j, half_mask))
                           << half;
            words[s][h] = exchanged;
          }
        }
      }
      j >>= 1;
      mask ^= static_cast<Bits>(mask << j);
    }
  }

  // Inclusive prefix sum (mod 2^W) of `values` over the lanes of each aligned segment of
  // Segment lanes: Kogge-Stone steps with up-shuffles, log2(Segment) of them.
  template <int Segment, class Bits>
  KOKKOS_INLINE_FUNCTION static void inclusive_scan(const lanes& held,
                                                    Bits (&values)[held_lanes]) {
    static_assert(Segment >= 1 && Segment <= group_lanes && (Segment & (Segment - 1)) == 0);
    for (int d = 1; d < Segment; d *= 2) combine_from_below<Segment, false>(held, values, d);
  }

  // values[s] minus the value of the lane `distance` below s's lane in its aligned segment of
  // Segment lanes, where there is one (a difference along a row of Segment lanes).
  template <int Segment, class Bits>
  KOKKOS_INLINE_FUNCTION static void subtract_from_below(const lanes& held,
                                                         Bits (&values)[held_lanes], int distance) {
    combine_from_below<Segment, true>(held, values, distance);
  }

  // Every lane's `values` combined with op over the lanes of its group: xor butterflies,
  // log2(32) of them.
  template <class Bits, class Op>
  KOKKOS_INLINE_FUNCTION static void all_reduce(const lanes& held, Bits (&values)[held_lanes],
                                                const Op& op) {
    for (int d = 1; d < group_lanes; d *= 2) {
      Bits other[held_lanes];
      Intrinsics::shuffle(held, values, other, shuffle_kind::xor_lane, d);
      for (int s = 0; s < held_lanes; ++s) values[s] = op(values[s], other[s]);
    }
  }

  // out[s] bit 31 - l: the predicate of lane l of s's group.
  KOKKOS_INLINE_FUNCTION static void ballot_reversed(const lanes& held,
                                                     const bool (&predicates)[held_lanes],
                                                     std::uint32_t (&out)[held_lanes]) {
    Intrinsics::ballot_reversed(held, predicates, out);
  }

  // Every lane's `values` OR-ed over the lanes of its group: the intrinsics' own reduction
  // where they have one.
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static void reduce_or(const lanes& held, Bits (&values)[held_lanes]) {
    if constexpr (Intrinsics::has_reduce_or)
      Intrinsics::reduce_or(held, values);
    else
      all_reduce(held, values, [](Bits a, Bits b) { return static_cast<Bits>(a | b); });
  }

  // f() run once for the group, by its lane 0, and its result given to every lane: what a lane
  // group does once for the item it owns (a look-back, an offset-table entry). Groups that hold
  // one item each (groups_per_call == 1).
  template <class F>
  KOKKOS_INLINE_FUNCTION static auto on_first_lane(const lanes& held, const F& f) {
    static_assert(groups_per_call == 1);
    using result_type = decltype(f());
    if constexpr (held_lanes == 1) {
      result_type result[1] = {result_type{}};
      if (held.lane(0) == 0) result[0] = f();
      result_type out[1];
      Intrinsics::shuffle(held, result, out, shuffle_kind::from_lane, 0);
      return out[0];
    } else {
      return f();  // one call holds every lane
    }
  }

  // out[s] = `values` as held by lane `source` of s's group.
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static void broadcast(const lanes& held, const Bits (&values)[held_lanes],
                                               int source, Bits (&out)[held_lanes]) {
    Intrinsics::shuffle(held, values, out, shuffle_kind::from_lane, source);
  }

  // out[s] = `values` as held by the lane whose index is s's lane xor `mask` (below 32).
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static void shuffle_xor(const lanes& held,
                                                 const Bits (&values)[held_lanes], int mask,
                                                 Bits (&out)[held_lanes]) {
    Intrinsics::shuffle(held, values, out, shuffle_kind::xor_lane, mask);
  }

  // out[s] = `values` as held by the lane `distance` below s's lane in its group (its own value
  // where there is none).
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static void shuffle_up(const lanes& held,
                                                const Bits (&values)[held_lanes], int distance,
                                                Bits (&out)[held_lanes]) {
    Intrinsics::shuffle(held, values, out, shuffle_kind::up, distance);
  }

  // The chunk heads: heads[s] has bit W-1-i set where column i of s's group is non-zero.
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static void nonzero_columns(const lanes& held,
                                                     const Bits (&columns)[held_lanes][R],
                                                     Bits (&heads)[held_lanes]) {
    constexpr int w = sizeof(Bits) * 8;
    for (int s = 0; s < held_lanes; ++s) heads[s] = 0;
    for (int h = 0; h < R; ++h) {
      bool nonzero[held_lanes];
      std::uint32_t ballot[held_lanes];
      for (int s = 0; s < held_lanes; ++s) nonzero[s] = columns[s][h] != 0;
      Intrinsics::ballot_reversed(held, nonzero, ballot);
      for (int s = 0; s < held_lanes; ++s)
        heads[s] |= static_cast<Bits>(ballot[s]) << (w - group_lanes - group_lanes * h);
    }
  }

  // Writes the non-zero columns of s's group to out[s][0..popcount(heads[s])) in column order.
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static void compact(const lanes& held,
                                             const Bits (&columns)[held_lanes][R],
                                             const Bits (&heads)[held_lanes],
                                             Bits* const (&out)[held_lanes]) {
    for (int s = 0; s < held_lanes; ++s)
      for (int h = 0; h < R; ++h)
        if (columns[s][h] != 0)
          out[s][columns_before(heads[s], held.lane(s) + group_lanes * h)] = columns[s][h];
  }

  // The inverse of compact.
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static void expand(const lanes& held, const Bits (&heads)[held_lanes],
                                            const Bits* const (&in)[held_lanes],
                                            Bits (&columns)[held_lanes][R]) {
    constexpr int w = sizeof(Bits) * 8;
    for (int s = 0; s < held_lanes; ++s)
      for (int h = 0; h < R; ++h) {
        const int i = held.lane(s) + group_lanes * h;
        columns[s][h] =
            (heads[s] >> (w - 1 - i)) & 1 ? in[s][columns_before(heads[s], i)] : Bits{0};
      }
  }

 private:
  // values[s] plus (minus) the value `distance` lanes below in its segment, where there is one:
  // the intrinsics' guarded shuffle where they have one.
  template <int Segment, bool Subtract, class Bits>
  KOKKOS_INLINE_FUNCTION static void combine_from_below(const lanes& held,
                                                        Bits (&values)[held_lanes], int distance) {
    static_assert(Segment >= 1 && Segment <= group_lanes && (Segment & (Segment - 1)) == 0);
    if constexpr (Intrinsics::has_guarded_shuffle_up) {
      Intrinsics::template combine_from_below<Segment, Subtract>(values, distance);
    } else {
      Bits before[held_lanes];
      Intrinsics::shuffle(held, values, before, shuffle_kind::up, distance);
      for (int s = 0; s < held_lanes; ++s)
        if ((held.lane(s) & (Segment - 1)) >= distance)
          values[s] = Subtract ? static_cast<Bits>(values[s] - before[s])
                               : static_cast<Bits>(values[s] + before[s]);
    }
  }

  // x rotated left by r bits, 0 < r < 32.
  KOKKOS_INLINE_FUNCTION static std::uint32_t rotate_left(std::uint32_t x, int r) {
    if constexpr (Intrinsics::has_rotate)
      return Intrinsics::rotate_left(x, r);
    else
      return x << r | x >> (32 - r);
  }

  // Stage j (below 32) of the transposition on a 32-bit word of a lane pair, `mask` the low
  // halves of its 2j-bit groups: the lane that holds row k + j (`upper`) takes the low halves
  // of its partner's groups, moved up by j bits; the other lane takes the high halves, moved
  // down. A rotation moves them as a shift would wherever the mask takes bits (those it wraps
  // around land outside the mask) and, unlike a shift, takes its direction from a per-lane
  // amount: a rotation and a bit select instead of two shifts, two masks and a choice. Where
  // the groups are whole bytes (j = 8, 16), one byte permutation with a per-lane selector does
  // both (the selectors pick bytes of mine (0-3) and other (4-7), lowest result byte last).
  KOKKOS_INLINE_FUNCTION static std::uint32_t exchange_word(std::uint32_t mine, std::uint32_t other,
                                                            bool upper, int j, std::uint32_t mask) {
    if constexpr (Intrinsics::has_byte_permute) {
      if (j == 16) return Intrinsics::byte_permute(mine, other, upper ? 0x5410u : 0x3276u);
      if (j == 8) return Intrinsics::byte_permute(mine, other, upper ? 0x6240u : 0x3715u);
    }
    const std::uint32_t take = upper ? mask << j : mask;
    const std::uint32_t moved = rotate_left(other, upper ? j : 32 - j);
    return (mine & ~take) | (moved & take);
  }

  // Non-zero columns before column i: the head bits above plane W-1-i. For 32-bit words as a
  // mask, which depends on the lane only and leaves the loop, rather than a shift by W - i with
  // column 0 apart (H200: a shift, a count and a choice per column where the mask needs a count;
  // streamed 512^3 float 965 / 1199 GB/s against 944 / 1165). Not for 64-bit words: a lane's
  // two 64-bit masks took registers the double kernels spill for (streamed 1-D double
  // decompression 1295 against 1378 GB/s).
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static int columns_before(Bits head, int i) {
    constexpr int w = sizeof(Bits) * 8;
    if constexpr (w == 32) {
      const Bits above = static_cast<Bits>(~(static_cast<Bits>(~Bits{0}) >> i));
      return popcount(static_cast<Bits>(head & above));
    } else {
      return i == 0 ? 0 : popcount(static_cast<Bits>(head >> (w - i)));
    }
  }
};

}  // namespace ndzip::backend
