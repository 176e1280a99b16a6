#pragma once
// CUDA lane-ops: a chunk lives in the 32 lanes of one warp (one Kokkos team thread with vector
// length 32). Lane l holds rows l and, for double, l + 32. The bit transposition exchanges row
// pairs between lanes with shuffles; a ballot of "column != 0" is the chunk head (bit-reversed,
// since column 0 is the head's most significant bit); a lane finds its column's place in the
// block by counting the head bits above its plane, so compaction needs no scan over lanes.
//
// These functions are called only from device code, by all 32 lanes of a warp together
// (inside a ThreadVectorRange of length 32). The host pass of nvcc still compiles them, so the
// intrinsics sit behind __CUDA_ARCH__.

#include <cstdint>
#include <type_traits>

#include <Kokkos_Core.hpp>

namespace ndzip::backend {

struct cuda_lane_ops {
  // Eight warps per team: one hypercube per 256-thread block.
  static constexpr int team_size = 8;
  static constexpr int vector_length = 32;

  template <class Bits>
  KOKKOS_INLINE_FUNCTION static int popcount(Bits v) {
    static_assert(std::is_unsigned_v<Bits>);
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(Bits) == 4)
      return __popc(v);
    else
      return __popcll(v);
#else
    int n = 0;
    for (; v != 0; v &= v - 1) ++n;
    return n;
#endif
  }

  // Transposes the chunk's bit matrix across the warp: afterwards slot h of lane l holds
  // column i = l + 32h, the bits of plane W-1-i of rows 0..W-1, row 0 most significant. The
  // recursive block swap of the host transpose, with the row pairs (k, k + j) that lie in
  // different lanes exchanged by __shfl_xor_sync: log2(W) steps instead of a ballot per plane
  // (measured faster on the H100).
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static void transpose(int lane, Bits (&words)[R]) {
    constexpr int w = sizeof(Bits) * 8;
    static_assert(R * 32 == w);
    Bits mask = static_cast<Bits>(~Bits{0}) >> (w / 2);  // low half of each 2j-bit group
    for (int j = w / 2; j != 0;) {
      if (j >= 32) {
        // Rows k and k + j share a lane: slot h and slot h + j / 32.
        for (int h = 0; h < R; ++h)
          if ((h & (j / 32)) == 0) {
            const Bits t = (words[h] ^ (words[h + j / 32] >> j)) & mask;
            words[h] ^= t;
            words[h + j / 32] ^= static_cast<Bits>(t << j);
          }
      } else {
        const bool upper = lane & j;  // this lane holds row k + j of its pair
        for (int h = 0; h < R; ++h) {
          const Bits other = shuffle(words[h], shuffle_kind::xor_lane, j);
          words[h] = upper ? (words[h] & static_cast<Bits>(~(mask << j))) |
                                 (static_cast<Bits>(other << j) & static_cast<Bits>(mask << j))
                           : (words[h] & static_cast<Bits>(~mask)) | ((other >> j) & mask);
        }
      }
      j >>= 1;
      mask ^= static_cast<Bits>(mask << j);
    }
  }

  // Inclusive prefix sum (mod 2^W) of `value` over the lanes of each aligned group of Segment
  // lanes: Kogge-Stone steps with __shfl_up_sync, log2(Segment) of them.
  template <int Segment, class Bits>
  KOKKOS_INLINE_FUNCTION static Bits inclusive_scan(int lane, Bits value) {
    static_assert(Segment >= 1 && Segment <= 32 && (Segment & (Segment - 1)) == 0);
    for (int d = 1; d < Segment; d *= 2) {
      const Bits before = shuffle(value, shuffle_kind::up, d);
      if ((lane & (Segment - 1)) >= d) value += before;
    }
    return value;
  }

  // `value` as held by lane `source`.
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static Bits broadcast(Bits value, int source) {
    return shuffle(value, shuffle_kind::from_lane, source);
  }

  // The chunk head: bit W-1-i set where column i is non-zero; the same in every lane.
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static Bits nonzero_columns(int /*lane*/, const Bits (&columns)[R]) {
    constexpr int w = sizeof(Bits) * 8;
    Bits head = 0;
    for (int h = 0; h < R; ++h)
      head |= static_cast<Bits>(ballot_reversed(columns[h] != 0)) << (w - 32 - 32 * h);
    return head;
  }

  // Writes the non-zero columns to out[0..popcount(head)) in column order.
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static void compact(int lane, const Bits (&columns)[R], Bits head,
                                             Bits* out) {
    for (int h = 0; h < R; ++h)
      if (columns[h] != 0) out[columns_before(head, lane + 32 * h)] = columns[h];
  }

  // The inverse of compact.
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static void expand(int lane, Bits head, const Bits* in,
                                            Bits (&columns)[R]) {
    constexpr int w = sizeof(Bits) * 8;
    for (int h = 0; h < R; ++h) {
      const int i = lane + 32 * h;
      columns[h] = (head >> (w - 1 - i)) & 1 ? in[columns_before(head, i)] : Bits{0};
    }
  }

 private:
  // Non-zero columns before column i: the head bits above plane W-1-i.
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static int columns_before(Bits head, int i) {
    constexpr int w = sizeof(Bits) * 8;
    return i == 0 ? 0 : popcount(static_cast<Bits>(head >> (w - i)));
  }

  enum class shuffle_kind { from_lane, xor_lane, up };

  // The warp shuffles, behind one guard for nvcc's host pass.
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static Bits shuffle(Bits v, shuffle_kind kind, int argument) {
#ifdef __CUDA_ARCH__
    switch (kind) {
      case shuffle_kind::xor_lane:
        return __shfl_xor_sync(0xffffffffu, v, argument);
      case shuffle_kind::up:
        return __shfl_up_sync(0xffffffffu, v, argument);
      default:
        return __shfl_sync(0xffffffffu, v, argument);
    }
#else
    static_cast<void>(kind);
    static_cast<void>(argument);
    return v;  // never called on the host
#endif
  }

  // Bit 31-l is lane l's predicate.
  KOKKOS_INLINE_FUNCTION static std::uint32_t ballot_reversed(bool predicate) {
#ifdef __CUDA_ARCH__
    return __brev(__ballot_sync(0xffffffffu, predicate));
#else
    return predicate ? 0x80000000u : 0u;  // never called on the host
#endif
  }
};

}  // namespace ndzip::backend
