#pragma once
// Lane-ops for GPUs, written once over a backend's warp intrinsics: a chunk lives in a group of
// 32 lanes (one Kokkos team thread with vector length 32). Lane l holds rows l and, for double,
// l + 32. The bit transposition exchanges row pairs between lanes with shuffles; a ballot of
// "column != 0" is the chunk head (bit-reversed, since column 0 is the head's most significant
// bit); a lane finds its column's place in the block by counting the head bits above its plane,
// so compaction needs no scan over lanes.
//
// `Intrinsics` (backends/cuda, backends/hip) supplies, for the 32 lanes of the calling group:
//   shuffle(v, shuffle_kind, argument)   from a lane, xor a lane mask, or up by a distance
//   ballot_reversed(predicate)           32-bit mask, bit 31-l = lane l's predicate
// The kernels call these functions from device code, by all 32 lanes of a group together
// (inside a ThreadVectorRange of length 32); the host emulation test calls them from one host
// thread per lane, over emulated intrinsics. The device compilers' host pass compiles them too,
// so the intrinsics' bodies sit behind the compiler's device-pass macro.

#include <type_traits>

#include <Kokkos_Core.hpp>

#include "backends/host/lane_ops.hpp"

namespace ndzip::backend {

enum class shuffle_kind { from_lane, xor_lane, up };

template <class Intrinsics>
struct lane_group_ops {
  // Eight lane groups per team: one hypercube per 256-thread block.
  static constexpr int team_size = 8;
  static constexpr int vector_length = 32;

  template <class Bits>
  KOKKOS_INLINE_FUNCTION static int popcount(Bits v) {
    static_assert(std::is_unsigned_v<Bits>);
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    if constexpr (sizeof(Bits) == 4)
      return __popc(v);
    else
      return __popcll(v);
#else
    return host_lane_ops::popcount(v);  // the device compilers' host pass; the host emulation
#endif
  }

  // Transposes the chunk's bit matrix across the group: afterwards slot h of lane l holds
  // column i = l + 32h, the bits of plane W-1-i of rows 0..W-1, row 0 most significant. The
  // recursive block swap of the host transpose, with the row pairs (k, k + j) that lie in
  // different lanes exchanged by xor shuffles: log2(W) steps instead of a ballot per plane
  // (measured faster on the H100).
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static void transpose(int lane, Bits (&words)[R]) {
    constexpr int w = sizeof(Bits) * 8;
    static_assert(R * vector_length == w);
    Bits mask = static_cast<Bits>(~Bits{0}) >> (w / 2);  // low half of each 2j-bit group
    for (int j = w / 2; j != 0;) {
      if (j >= vector_length) {
        // Rows k and k + j share a lane: slot h and slot h + j / 32.
        for (int h = 0; h < R; ++h)
          if ((h & (j / vector_length)) == 0) {
            const Bits t = (words[h] ^ (words[h + j / vector_length] >> j)) & mask;
            words[h] ^= t;
            words[h + j / vector_length] ^= static_cast<Bits>(t << j);
          }
      } else {
        const bool upper = lane & j;  // this lane holds row k + j of its pair
        for (int h = 0; h < R; ++h) {
          const Bits other = Intrinsics::shuffle(words[h], shuffle_kind::xor_lane, j);
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
  // lanes: Kogge-Stone steps with up-shuffles, log2(Segment) of them.
  template <int Segment, class Bits>
  KOKKOS_INLINE_FUNCTION static Bits inclusive_scan(int lane, Bits value) {
    static_assert(Segment >= 1 && Segment <= vector_length && (Segment & (Segment - 1)) == 0);
    for (int d = 1; d < Segment; d *= 2) {
      const Bits before = Intrinsics::shuffle(value, shuffle_kind::up, d);
      if ((lane & (Segment - 1)) >= d) value += before;
    }
    return value;
  }

  // `value` as held by lane `source`.
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static Bits broadcast(Bits value, int source) {
    return Intrinsics::shuffle(value, shuffle_kind::from_lane, source);
  }

  // The chunk head: bit W-1-i set where column i is non-zero; the same in every lane.
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static Bits nonzero_columns(int /*lane*/, const Bits (&columns)[R]) {
    constexpr int w = sizeof(Bits) * 8;
    Bits head = 0;
    for (int h = 0; h < R; ++h)
      head |= static_cast<Bits>(Intrinsics::ballot_reversed(columns[h] != 0)) << (w - 32 - 32 * h);
    return head;
  }

  // Writes the non-zero columns to out[0..popcount(head)) in column order.
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static void compact(int lane, const Bits (&columns)[R], Bits head,
                                             Bits* out) {
    for (int h = 0; h < R; ++h)
      if (columns[h] != 0) out[columns_before(head, lane + vector_length * h)] = columns[h];
  }

  // The inverse of compact.
  template <class Bits, int R>
  KOKKOS_INLINE_FUNCTION static void expand(int lane, Bits head, const Bits* in,
                                            Bits (&columns)[R]) {
    constexpr int w = sizeof(Bits) * 8;
    for (int h = 0; h < R; ++h) {
      const int i = lane + vector_length * h;
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
};

}  // namespace ndzip::backend
