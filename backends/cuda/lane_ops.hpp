// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// CUDA lane-ops: the 32-lane group algorithm of backends/lane_group_ops.hpp over a warp's
// intrinsics. A lane group is a whole warp, so every mask is full.

#include <cstdint>

#include <Kokkos_Core.hpp>

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

  // x rotated left by r bits (0 < r < W): a funnel shift per 32-bit word, where the compiler
  // made two shifts of the plain expression with a per-lane amount (H200 SASS of the bit
  // transposition: a stage took a shuffle, two shifts and two logic operations).
  static constexpr bool has_rotate = true;
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static Bits rotate_left(Bits x, int r) {
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(Bits) == 4) {
      return __funnelshift_l(x, x, static_cast<unsigned>(r));
    } else {
      // By 32 or more: the halves swapped, then rotated by r - 32 (funnel shifts take r mod 32).
      const auto low = static_cast<std::uint32_t>(x), high = static_cast<std::uint32_t>(x >> 32);
      const bool swap = (r & 32) != 0;
      const std::uint32_t upper = swap ? low : high, lower = swap ? high : low;
      const auto amount = static_cast<unsigned>(r);
      return static_cast<Bits>(__funnelshift_l(lower, upper, amount)) << 32 |
             __funnelshift_l(upper, lower, amount);
    }
#else
    constexpr int w = sizeof(Bits) * 8;
    return static_cast<Bits>(x << r) | static_cast<Bits>(x >> (w - r));  // never on the host
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
