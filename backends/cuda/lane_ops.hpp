// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// CUDA lane-ops: the 32-lane group algorithm of backends/lane_group_ops.hpp over a warp's
// intrinsics. A lane group is a whole warp, so every mask is full.

#include <cstdint>

#include <Kokkos_Core.hpp>

#include "backends/byte_permute.hpp"
#include "backends/lane_group_ops.hpp"

namespace ndzip::backend {

struct cuda_intrinsics : device_lane_group {
  // A warp is one lane group, scheduled independently of the others (Volta on).
  static constexpr bool groups_progress_independently = true;

  template <class Bits>
  KOKKOS_INLINE_FUNCTION static void shuffle(const lanes& /*held*/, const Bits (&in)[1],
                                             Bits (&out)[1], shuffle_kind kind, int argument) {
#ifdef __CUDA_ARCH__
    switch (kind) {
      case shuffle_kind::xor_lane:
        out[0] = __shfl_xor_sync(0xffffffffu, in[0], argument);
        break;
      case shuffle_kind::up:
        out[0] = __shfl_up_sync(0xffffffffu, in[0], argument);
        break;
      default:
        out[0] = __shfl_sync(0xffffffffu, in[0], argument);
    }
#else
    static_cast<void>(kind);
    static_cast<void>(argument);
    out[0] = in[0];  // never called on the host
#endif
  }

  // values[0] = the OR of every lane's values[0]: one warp reduction per 32-bit half from
  // compute capability 8.0 on, xor shuffles before.
  static constexpr bool has_reduce_or = true;
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static void reduce_or(const lanes& held, Bits (&values)[1]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_cast<void>(held);
    if constexpr (sizeof(Bits) == 4) {
      values[0] = __reduce_or_sync(0xffffffffu, values[0]);
    } else {
      const std::uint32_t low =
          __reduce_or_sync(0xffffffffu, static_cast<std::uint32_t>(values[0]));
      const std::uint32_t high =
          __reduce_or_sync(0xffffffffu, static_cast<std::uint32_t>(values[0] >> 32));
      values[0] = static_cast<Bits>(high) << 32 | low;
    }
#else
    for (int d = 1; d < 32; d *= 2) {
      Bits other[1];
      shuffle(held, values, other, shuffle_kind::xor_lane, d);
      values[0] |= other[0];
    }
#endif
  }

  // values[0] plus (Subtract: minus) the value `distance` lanes below in its aligned segment of
  // Segment lanes, where there is one: the shuffle's own predicate guards the operation, one
  // predicated add where the compiler made a select of a lane test and an add (H200 SASS: a
  // 32-lane scan step took a shuffle, a select and an add). For 64-bit words ptxas still makes
  // an add pair and two selects, but the streamed 1-D double decoder spilled less (stack 8
  // against 32 bytes) and ran at 1666 against 1396 GB/s.
  static constexpr bool has_guarded_shuffle_up = true;
  template <int Segment, bool Subtract, class Bits>
  KOKKOS_INLINE_FUNCTION static void combine_from_below(Bits (&values)[1], int distance) {
#ifdef __CUDA_ARCH__
// The PTX of one guarded step, `op` add or sub: %0 the value, %1 the distance, %2 the segment.
#define NDZIP_GUARDED_UP_32(op)                                                \
  "{\n\t.reg .pred p;\n\t.reg .b32 t;\n\t"                                     \
  "shfl.sync.up.b32 t|p, %0, %1, %2, -1;\n\t"                                  \
  "@p " op ".u32 %0, %0, t;\n\t}"
#define NDZIP_GUARDED_UP_64(op)                                                \
  "{\n\t.reg .pred p;\n\t.reg .b32 lo, hi;\n\t.reg .b64 t;\n\t"                \
  "mov.b64 {lo, hi}, %0;\n\tshfl.sync.up.b32 lo|p, lo, %1, %2, -1;\n\t"        \
  "shfl.sync.up.b32 hi, hi, %1, %2, -1;\n\tmov.b64 t, {lo, hi};\n\t"           \
  "@p " op ".u64 %0, %0, t;\n\t}"
    constexpr unsigned clamp = (32u - Segment) << 8;  // segments of Segment lanes
    if constexpr (sizeof(Bits) == 4 && Subtract)
      asm volatile(NDZIP_GUARDED_UP_32("sub") : "+r"(values[0]) : "r"(distance), "n"(clamp));
    else if constexpr (sizeof(Bits) == 4)
      asm volatile(NDZIP_GUARDED_UP_32("add") : "+r"(values[0]) : "r"(distance), "n"(clamp));
    else if constexpr (Subtract)
      asm volatile(NDZIP_GUARDED_UP_64("sub") : "+l"(values[0]) : "r"(distance), "n"(clamp));
    else
      asm volatile(NDZIP_GUARDED_UP_64("add") : "+l"(values[0]) : "r"(distance), "n"(clamp));
#undef NDZIP_GUARDED_UP_32
#undef NDZIP_GUARDED_UP_64
#else
    static_cast<void>(values);
    static_cast<void>(distance);  // never called on the host
#endif
  }

  // x rotated left by r bits (0 < r < 32): a funnel shift, where the compiler made two shifts
  // of the plain expression with a per-lane amount (H200 SASS of the bit transposition: a
  // stage took a shuffle, two shifts and two logic operations).
  static constexpr bool has_rotate = true;
  KOKKOS_INLINE_FUNCTION static std::uint32_t rotate_left(std::uint32_t x, int r) {
#ifdef __CUDA_ARCH__
    return __funnelshift_l(x, x, static_cast<unsigned>(r));
#else
    return x << r | x >> (32 - r);  // never on the host
#endif
  }

  // One PRMT: a transposition stage of whole bytes is a shuffle and one instruction.
  static constexpr bool has_byte_permute = true;
  KOKKOS_INLINE_FUNCTION static std::uint32_t byte_permute(std::uint32_t x, std::uint32_t y,
                                                           unsigned selector) {
#ifdef __CUDA_ARCH__
    return __byte_perm(x, y, selector);
#else
    return portable_byte_permute(x, y, selector);  // never on the host
#endif
  }

  // Bit 31-l is lane l's predicate.
  KOKKOS_INLINE_FUNCTION static void ballot_reversed(const lanes& /*held*/,
                                                     const bool (&predicate)[1],
                                                     std::uint32_t (&out)[1]) {
#ifdef __CUDA_ARCH__
    out[0] = __brev(__ballot_sync(0xffffffffu, predicate[0]));
#else
    out[0] = predicate[0] ? 0x80000000u : 0u;  // never called on the host
#endif
  }
};

using cuda_lane_ops = lane_group_ops<cuda_intrinsics>;

}  // namespace ndzip::backend
