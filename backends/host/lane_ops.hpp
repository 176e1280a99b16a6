// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Host lane-ops: a lane group of one lane, holding a whole chunk in registers. The bit-plane
// transposition is a recursive block swap on W words (log2(W) stages of masked shifts) on
// 32-byte vectors of rows (backends/host/vector.hpp), compiled once per instruction set
// (backends/host/isa.hpp); compaction and expansion take the common case of a head whose
// set bits are its lowest ones as one copy. The interface is that of backends/lane_group_ops.hpp
// with one held lane, plus store_prefix_sums for the last axis of the inverse transform.

#include <cstdint>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "backends/bit_count.hpp"
#include "backends/host/avx512_columns.hpp"
#include "backends/host/gfni_transpose.hpp"
#include "backends/host/isa.hpp"
#include "backends/host/vector.hpp"
#include "backends/host_inline.hpp"
#include "backends/kernel_role.hpp"

namespace ndzip::backend {

struct host_lane_ops {
  // Threads per team and lanes per thread that the core kernels use on the host.
  // Callable from host-device code too (the staged encoder asserts it).
  KOKKOS_INLINE_FUNCTION static constexpr int team_size(int /*word_bytes*/) { return 1; }
  static constexpr int wide_team_size(int word_bytes) { return team_size(word_bytes); }
  static constexpr int vector_length = 1;
  static constexpr int min_teams_per_multiprocessor(kernel_role, int) { return 0; }  // none
  // Single-pass compression (core/block_placement.hpp): a team that waits for the one before it
  // yields its thread, and that team, holding an earlier ticket, is running. Writing each block
  // straight into the stream saves a write and a read of every block through scratch and a
  // kernel: with 16 threads, memory traffic is what limits the host.
  static constexpr bool teams_progress_independently = true;
  // A thread's one lane is no group of lanes: the streamed kernels are for lane groups.
  static constexpr bool groups_progress_independently = false;
  // Teams handed to the threads as they come free: with Kokkos' static split, the slowest
  // thread (a busy core, a virtual CPU the hypervisor holds back) held up every kernel.
  using schedule = Kokkos::Schedule<Kokkos::Dynamic>;
  // Single-pass compression with several threads: consecutive hypercubes a team encodes at most
  // (core/encoder.hpp, hypercubes_per_team), so that a thread walks along the grid's rows.
  static constexpr int max_hypercubes_per_team = 32;
  static constexpr int group_lanes = 1;
  static constexpr int held_lanes = 1;
  static constexpr int groups_per_call = 1;

  struct lanes {
    KOKKOS_INLINE_FUNCTION int lane(int /*slot*/) const { return 0; }
    KOKKOS_INLINE_FUNCTION int group(int /*slot*/) const { return 0; }
  };

  // Runs one team's work, body(), in the clone of the host kernels for this machine's
  // instruction set (backends/host/isa.hpp).
  template <class Body>
  KOKKOS_FORCEINLINE_FUNCTION static void run_team(const Body& body) {
#if NDZIP_HOST_ISA_CLONES
    run_host_clone(active_host_isa(), body);
#else
    body();
#endif
  }

  // body(lanes, item) for every item of 0..count: the team's one thread walks them. A loop of
  // its own rather than a TeamThreadRange, which GCC would not inline into the instruction-set
  // clones (its stack-frame growth limit), leaving the chunk loops in baseline code.
  template <class Member, class Body>
  NDZIP_HOST_FORCEINLINE static void for_each_group(const Member& /*member*/, int count,
                                                    const Body& body) {
    for (int item = 0; item < count; ++item) body(lanes{}, item);
  }

  template <class Bits>
  NDZIP_HOST_FORCEINLINE static int popcount(Bits v) {
    return backend::popcount(v);
  }

  // Transposes the W x W bit matrix held in words[0..W) in place, most significant bit first:
  // afterwards bit (W-1-j) of words[i] is what bit (W-1-i) of words[j] was. Applied to the W
  // rows of a chunk this yields the bit-plane columns with plane W-1 in words[0]; it is its own
  // inverse. A recursive block swap, log2(W) stages, on 32-byte vectors of rows: the stages
  // that swap whole vectors are lane-wise, the last two (double) or three (float) exchange lanes
  // of one vector.
  template <class Bits, int W>
  NDZIP_HOST_FORCEINLINE static void transpose(const lanes& /*held*/, Bits (&held_words)[1][W]) {
    static_assert(std::is_unsigned_v<Bits> && W == sizeof(Bits) * 8);
#if NDZIP_HOST_ISA_CLONES
    if (active_host_isa() == host_isa::avx512_gfni) return gfni::transpose<Bits, W>(held_words[0]);
#endif
    using vector = host_vector<Bits>;
    vector rows[W / vector::lanes];
    vector any = vector::splat(0);
    for (int a = 0; a < W / vector::lanes; ++a) {
      rows[a] = vector::load(held_words[0] + a * vector::lanes);
      any = any | rows[a];
    }
    // An all-zero chunk (sparse data: whole chunks of zeros) is its own transpose.
    if (any.reduce_or() == 0) return;
    transpose_stage<W / 2>(rows);
    for (int a = 0; a < W / vector::lanes; ++a) rows[a].store(held_words[0] + a * vector::lanes);
  }

  // The chunk head: bit W-1-i set where column i is non-zero.
  template <class Bits, int W>
  NDZIP_HOST_FORCEINLINE static void nonzero_columns(const lanes& /*held*/,
                                                     const Bits (&columns)[1][W],
                                                     Bits (&head)[1]) {
    using vector = host_vector<Bits>;
    constexpr int l = vector::lanes;
    vector bits = vector::splat(0);
    for (int a = 0; a < W / l; ++a) {
      const vector place = vector::from_lanes([&](int i) NDZIP_INLINE_LAMBDA {
        return static_cast<Bits>(Bits{1} << (W - 1 - a * l - i));
      });
      bits = bits | (vector::load(columns[0] + a * l).nonzero() & place);
    }
    head[0] = bits.reduce_or();
  }

  // Writes the non-zero columns to out[0..popcount(head)), column 0 first. Smooth data has
  // heads whose set bits are the lowest ones (the high planes of small residuals are zero):
  // then the non-zero columns are the last ones, copied as they are.
  template <class Bits, int W>
  NDZIP_HOST_FORCEINLINE static void compact(const lanes& /*held*/, const Bits (&columns)[1][W],
                                             const Bits (&head)[1], Bits* const (&out)[1]) {
    const int count = popcount(head[0]);
    if (head[0] == low_bits<Bits>(count)) {
      for (int i = 0; i < count; ++i) out[0][i] = columns[0][W - count + i];
      return;
    }
#if NDZIP_HOST_ISA_CLONES
    if (active_host_isa() >= host_isa::avx512) return avx512::compact<Bits, W>(columns[0], out[0]);
#endif
    // Without branches on the data: every column is stored at the next place, a zero one then
    // overwritten, and past the last non-zero column to a word of its own (never beyond the
    // block, which another team may be writing).
    Bits beyond;
    int next = 0;
    for (int i = 0; i < W; ++i) {
      *(next < count ? out[0] + next : &beyond) = columns[0][i];
      next += columns[0][i] != 0;
    }
  }

  // The inverse of compact: column i is the next word of `in` where head bit W-1-i is set. Reads
  // in[0..popcount(head)) only.
  template <class Bits, int W>
  NDZIP_HOST_FORCEINLINE static void expand(const lanes& /*held*/, const Bits (&head)[1],
                                            const Bits* const (&in)[1], Bits (&columns)[1][W]) {
    const int count = popcount(head[0]);
    if (head[0] == low_bits<Bits>(count)) {
      for (int i = 0; i < W - count; ++i) columns[0][i] = 0;
      for (int i = 0; i < count; ++i) columns[0][W - count + i] = in[0][i];
      return;
    }
#if NDZIP_HOST_ISA_CLONES
    if (active_host_isa() >= host_isa::avx512)
      return avx512::expand<Bits, W>(head[0], in[0], columns[0]);
#endif
    int next = 0;
    for (int i = 0; i < W; ++i) {
      const Bits set = (head[0] >> (W - 1 - i)) & 1;
      const Bits word = in[0][next < count ? next : count - 1];
      columns[0][i] = word & (Bits{0} - set);
      next += static_cast<int>(set);
    }
  }

  // The carry of prefix sums into the next row of a line: the last sum, in every lane.
  template <class Bits>
  using line_carry = host_vector<Bits>;
  template <class Bits>
  NDZIP_HOST_FORCEINLINE static line_carry<Bits> no_carry() {
    return host_vector<Bits>::splat(0);
  }

  // Prefix sums along a row of the grid, for the inverse Lorenzo transform: out[x] = carry +
  // in[0] + ... + in[x] (mod 2^W) for x < Row, rotated right by one bit (sign bit back in
  // place); returns the carry into a row that continues the line. In vectors: a running sum in a
  // scalar register made every element wait for the one before it. The carry stays in a vector
  // (the last lane broadcast), within a row and between rows: through a scalar it was an
  // extraction and a lane-by-lane insertion per vector, whose latency made this loop half of the
  // 1-D decoder's time (AVX-512 clone, 2-core Zen 4).
  template <int Row, class Bits>
  NDZIP_HOST_FORCEINLINE static line_carry<Bits> store_prefix_sums(const Bits* in,
                                                                   line_carry<Bits> carry,
                                                                   Bits* out) {
    using vector = host_vector<Bits>;
    constexpr int l = vector::lanes;
    constexpr int w = sizeof(Bits) * 8;
    static_assert(Row % l == 0);
    for (int x = 0; x < Row; x += l) {
      const vector sums = vector::load(in + x).inclusive_scan() + carry;
      ((sums >> 1) | (sums << (w - 1))).store(out + x);
      carry = sums.template broadcast_lane<l - 1>();
    }
    return carry;
  }

 private:
  // The lowest `count` bits set (0 <= count <= W).
  template <class Bits>
  NDZIP_HOST_FORCEINLINE static Bits low_bits(int count) {
    constexpr int w = sizeof(Bits) * 8;
    return count == w ? static_cast<Bits>(~Bits{0}) : static_cast<Bits>((Bits{1} << count) - 1);
  }

  // Stage J of the block swap and the stages after it: rows k and k + J (k mod 2J < J) exchange
  // the bits of each 2J-bit group that are in the other's half: row k takes the high half of
  // row k + J's groups into its low half, and row k + J takes row k's low halves.
  template <int J, class Bits, int V>
  NDZIP_HOST_FORCEINLINE static void transpose_stage(host_vector<Bits> (&rows)[V]) {
    using vector = host_vector<Bits>;
    constexpr int l = vector::lanes;
    // Bits whose place in their 2J-bit group is in its low half.
    constexpr Bits low = low_halves<Bits, J>();
    if constexpr (J >= l) {
      // Rows k and k + J are in different vectors, lane for lane.
      constexpr int apart = J / l;
      const vector mask = vector::splat(low);
      for (int a = 0; a < V; ++a)
        if ((a & apart) == 0) {
          const vector t = (rows[a] ^ (rows[a + apart] >> J)) & mask;
          rows[a] = rows[a] ^ t;
          rows[a + apart] = rows[a + apart] ^ (t << J);
        }
    } else {
      // Rows k and k + J are lanes i and i + J of one vector.
      const vector take_low = vector::from_lanes([](int i) { return i & J ? Bits{0} : low; });
      const vector take_high =
          vector::from_lanes([](int i) { return i & J ? static_cast<Bits>(low << J) : Bits{0}; });
      const vector keep = ~(take_low | take_high);
      for (int a = 0; a < V; ++a) {
        const vector partner = rows[a].template swap_lanes<J>();
        rows[a] = (rows[a] & keep) | ((partner >> J) & take_low) | ((partner << J) & take_high);
      }
    }
    if constexpr (J > 1) transpose_stage<J / 2>(rows);
  }

  template <class Bits, int J>
  KOKKOS_INLINE_FUNCTION static constexpr Bits low_halves() {
    Bits m = 0;
    for (int b = 0; b < static_cast<int>(sizeof(Bits) * 8); ++b)
      if (b % (2 * J) < J) m |= static_cast<Bits>(Bits{1} << b);
    return m;
  }
};

}  // namespace ndzip::backend
