// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// HIP lane-ops: the 32-lane group algorithm of backends/lane_group_ops.hpp inside AMD's 64-lane
// wavefronts, two lane groups per wavefront.
//
// Why 32-lane groups and not 64: a chunk has W = 32 (float) or 64 (double) rows, and the group
// algorithm gives each lane W / 32 rows. A 64-lane group would hold half a float row per lane
// (or two float chunks per round, with a second layout of every operation); 32-lane groups keep
// the one layout that CUDA runs and that the host emulation tests, at the price of masking:
// a ballot returns the whole wavefront's 64-bit mask, of which a group takes its own half, and
// every shuffle passes width 32 so that it stays inside the group's half of the wavefront.
//
// Team shape and LDS (chosen, not yet tuned: no AMD GPU has run this): as on CUDA, 4 (float)
// or 8 (double) groups x 32 lanes = 128 or 256 work-items (2 or 4 wavefronts) per hypercube.
// A team's scratch is the hypercube (16 KiB float, 32 KiB double) plus per-row and per-chunk
// arrays (about 2 KiB), so three float teams or one double team fit in a CDNA compute unit's
// 64 KiB of LDS. CDNA's LDS has 32 banks
// of 4 bytes, as NVIDIA's shared memory has, and the core's scratch accesses are consecutive
// words by consecutive lanes, which no bank sees twice for 32-bit words, so no padding is
// added; a 64-bit word spans two banks on both vendors.

#include <cstdint>

#include <Kokkos_Core.hpp>

#include "backends/lane_group_ops.hpp"

namespace ndzip::backend {

struct hip_intrinsics : device_lane_group {
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static void shuffle(const lanes& /*held*/, const Bits (&in)[1],
                                             Bits (&out)[1], shuffle_kind kind, int argument) {
#ifdef __HIP_DEVICE_COMPILE__
    switch (kind) {
      case shuffle_kind::xor_lane:
        out[0] = __shfl_xor(in[0], argument, group_width);
        break;
      case shuffle_kind::up:
        out[0] = __shfl_up(in[0], static_cast<unsigned>(argument), group_width);
        break;
      default:
        out[0] = __shfl(in[0], argument, group_width);
    }
#else
    static_cast<void>(kind);
    static_cast<void>(argument);
    out[0] = in[0];  // never called on the host
#endif
  }

  // Bit 31-l is lane l's predicate, l counted within the calling group's half of the wavefront.
  KOKKOS_INLINE_FUNCTION static void ballot_reversed(const lanes& /*held*/,
                                                     const bool (&predicate)[1],
                                                     std::uint32_t (&out)[1]) {
#ifdef __HIP_DEVICE_COMPILE__
    out[0] = group_ballot_reversed(__ballot(predicate[0]), __lane_id());
#else
    out[0] = predicate[0] ? 0x80000000u : 0u;  // never called on the host
#endif
  }

  // The 32 bits of a wavefront's 64-bit ballot that belong to the group of wavefront lane
  // `lane_in_wave`, bit-reversed. Plain arithmetic, so that the host emulation of the lane
  // groups (backends/emulated) runs this very code.
  KOKKOS_INLINE_FUNCTION static std::uint32_t group_ballot_reversed(std::uint64_t wave,
                                                                    unsigned lane_in_wave) {
    const auto group =
        static_cast<std::uint32_t>(wave >> (lane_in_wave / group_width * group_width));
#ifdef __HIP_DEVICE_COMPILE__
    return __brev(group);
#else
    std::uint32_t reversed = 0;
    for (int b = 0; b < group_width; ++b) reversed |= ((group >> b) & 1u) << (group_width - 1 - b);
    return reversed;
#endif
  }

 private:
  static constexpr int group_width = 32;
};

using hip_lane_ops = lane_group_ops<hip_intrinsics>;

}  // namespace ndzip::backend
