#pragma once
// CUDA lane-ops: the 32-lane group algorithm of backends/lane_group_ops.hpp over a warp's
// intrinsics. A lane group is a whole warp, so every mask is full.

#include <cstdint>

#include <Kokkos_Core.hpp>

#include "backends/lane_group_ops.hpp"

namespace ndzip::backend {

struct cuda_intrinsics {
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

using cuda_lane_ops = lane_group_ops<cuda_intrinsics>;

}  // namespace ndzip::backend
