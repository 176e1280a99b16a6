#pragma once
// Host lane-ops: a lane group of one lane, holding a whole chunk in registers. The bit-plane
// transposition is a recursive block swap on W words (log2(W) stages of masked shifts), written
// as contiguous loops over row pairs so that the compiler can vectorise them; compaction walks
// the columns. The interface is that of backends/lane_group_ops.hpp with one held lane; the
// last axis' prefix sums do not use lane operations on the host (core/lorenzo.hpp walks it).

#include <cstdint>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "backends/kernel_role.hpp"

#include "backends/host_inline.hpp"

namespace ndzip::backend {

struct host_lane_ops {
  // Threads per team and lanes per thread that the core kernels use on the host.
  static constexpr int team_size(int /*word_bytes*/) { return 1; }
  static constexpr int wide_team_size(int word_bytes) { return team_size(word_bytes); }
  static constexpr int vector_length = 1;
  static constexpr int min_teams_per_multiprocessor(kernel_role, int) { return 0; }  // none
  // Compression scans the block lengths in a kernel of its own: a single pass gains a host
  // thread nothing, and a team waiting for another would only spin a core.
  static constexpr bool teams_progress_independently = false;
  static constexpr int group_lanes = 1;
  static constexpr int held_lanes = 1;
  static constexpr int groups_per_call = 1;

  struct lanes {
    KOKKOS_INLINE_FUNCTION int lane(int /*slot*/) const { return 0; }
    KOKKOS_INLINE_FUNCTION int group(int /*slot*/) const { return 0; }
  };

  // body(lanes, item) for every item of 0..count, spread over the team's threads.
  template <class Member, class Body>
  NDZIP_HOST_FORCEINLINE static void for_each_group(const Member& member, int count,
                                                    const Body& body) {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, count),
                         [&](int item) { body(lanes{}, item); });
  }

  // Bit-parallel count: compilers turn it into a popcnt instruction where the target has one,
  // and it avoids a library call where it has not (the default x86-64 target).
  template <class Bits>
  NDZIP_HOST_FORCEINLINE static int popcount(Bits v) {
    static_assert(std::is_unsigned_v<Bits>);
    constexpr Bits ones = static_cast<Bits>(~Bits{0});
    v = v - ((v >> 1) & (ones / 3));
    v = (v & (ones / 15 * 3)) + ((v >> 2) & (ones / 15 * 3));
    v = (v + (v >> 4)) & (ones / 255 * 15);
    return static_cast<int>(static_cast<Bits>(v * (ones / 255)) >> (sizeof(Bits) * 8 - 8));
  }

  // Transposes the W x W bit matrix held in words[0..W) in place, most significant bit first:
  // afterwards bit (W-1-j) of words[i] is what bit (W-1-i) of words[j] was. Applied to the W
  // rows of a chunk this yields the bit-plane columns with plane W-1 in words[0]; it is its own
  // inverse.
  template <class Bits, int W>
  NDZIP_HOST_FORCEINLINE static void transpose(const lanes& /*held*/, Bits (&held_words)[1][W]) {
    static_assert(std::is_unsigned_v<Bits> && W == sizeof(Bits) * 8);
    Bits(&words)[W] = held_words[0];
    Bits mask = static_cast<Bits>(~Bits{0}) >> (W / 2);  // low half of each 2j-bit group
    for (int j = W / 2; j != 0;) {
      for (int base = 0; base < W; base += 2 * j) {
        for (int k = base; k < base + j; ++k) {
          const Bits t = (words[k] ^ (words[k + j] >> j)) & mask;
          words[k] ^= t;
          words[k + j] ^= static_cast<Bits>(t << j);
        }
      }
      j >>= 1;
      mask ^= static_cast<Bits>(mask << j);
    }
  }

  // The chunk head: bit W-1-i set where column i is non-zero.
  template <class Bits, int W>
  NDZIP_HOST_FORCEINLINE static void nonzero_columns(const lanes& /*held*/,
                                                     const Bits (&columns)[1][W],
                                                     Bits (&head)[1]) {
    head[0] = 0;
    for (int i = 0; i < W; ++i) head[0] |= static_cast<Bits>(columns[0][i] != 0) << (W - 1 - i);
  }

  // Writes the non-zero columns to out[0..popcount(head)), column 0 first.
  template <class Bits, int W>
  NDZIP_HOST_FORCEINLINE static void compact(const lanes& /*held*/, const Bits (&columns)[1][W],
                                             const Bits (&/*head*/)[1], Bits* const (&out)[1]) {
    Bits* next = out[0];
    for (int i = 0; i < W; ++i)
      if (columns[0][i] != 0) *next++ = columns[0][i];
  }

  // The inverse of compact: column i is the next word of `in` where head bit W-1-i is set.
  template <class Bits, int W>
  KOKKOS_INLINE_FUNCTION static void expand(const lanes& /*held*/, const Bits (&head)[1],
                                            const Bits* const (&in)[1], Bits (&columns)[1][W]) {
    const Bits* next = in[0];
    for (int i = 0; i < W; ++i) columns[0][i] = (head[0] >> (W - 1 - i)) & 1 ? *next++ : Bits{0};
  }
};

}  // namespace ndzip::backend
