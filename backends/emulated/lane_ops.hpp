// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Emulated GPU lane-ops for host execution spaces, selected only by tests: the 32-lane group
// algorithm of backends/lane_group_ops.hpp, unchanged, with one host thread holding every lane
// of a warp or wavefront and intrinsics that are plain loops over the lanes' values. With it,
// every CI run runs the GPU kernels' logic (row layout, shuffles, ballots, per-lane column
// placement, lane-level scans) on Serial and OpenMP against the reference vectors.
//
// WaveLanes = 32 plays a CUDA warp: one lane group. WaveLanes = 64 plays an AMD wavefront: two
// 32-lane groups working on consecutive items (chunks, rows), each ballot the whole wavefront's
// 64-bit mask cut to a group's half by the HIP backend's own function, and each shuffle of
// width 32 confined to the caller's half, as the hardware does it. A shuffle or ballot that
// forgot the group's half would mix two chunks and change the stream.

#include <cstdint>

#include <Kokkos_Core.hpp>

#include "backends/kernel_role.hpp"

#include "backends/byte_permute.hpp"
#include "backends/hip/lane_ops.hpp"
#include "backends/lane_group_ops.hpp"

namespace ndzip::backend {

template <int WaveLanes>
struct emulated_intrinsics {
  static_assert(WaveLanes == 32 || WaveLanes == 64);
  static constexpr int group_width = 32;

  // One host thread per team, with one Kokkos lane: the emulated lanes are the held slots.
  static constexpr int team_size(int /*word_bytes*/) { return 1; }
  static constexpr int wide_team_size(int word_bytes) { return team_size(word_bytes); }
  static constexpr int vector_length = 1;
  static constexpr int min_teams_per_multiprocessor(kernel_role, int) { return 0; }  // none
  // As on the GPUs: single-pass compression, so that its look-back runs in every CI run. Teams
  // take tickets in start order, so a waiting team waits for a running one, which its thread
  // lets run by yielding.
  static constexpr bool teams_progress_independently = true;
  // A 32-lane group is a thread of its own, as a CUDA warp is; a 64-lane wavefront's two groups
  // run in one thread, as HIP's share a wavefront.
  static constexpr bool groups_progress_independently = WaveLanes == 32;
  static constexpr bool has_reduce_or = false;
  static constexpr bool has_rotate = false;
  static constexpr bool has_guarded_shuffle_up = false;
  // The warp has CUDA's byte permutation, the wavefront not (HIP's lane-ops have none), so
  // that both forms of the transposition's byte stages run in every CI run.
  static constexpr bool has_byte_permute = WaveLanes == 32;
  KOKKOS_INLINE_FUNCTION static std::uint32_t byte_permute(std::uint32_t x, std::uint32_t y,
                                                           unsigned selector) {
    return portable_byte_permute(x, y, selector);
  }
  static constexpr int held_lanes = WaveLanes;
  static constexpr int groups_per_call = WaveLanes / group_width;

  // Slot s is lane s of the wavefront.
  struct lanes {
    KOKKOS_INLINE_FUNCTION int lane(int slot) const { return slot % group_width; }
    KOKKOS_INLINE_FUNCTION int group(int slot) const { return slot / group_width; }
  };

  template <class Member, class Body>
  KOKKOS_INLINE_FUNCTION static void for_each_group(const Member& member, int count,
                                                    const Body& body) {
    // Every caller's count (chunks, rows, row pieces of a hypercube) is even.
    if (count % groups_per_call != 0) Kokkos::abort("ndzip: emulated wavefront with a lone group");
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, count / groups_per_call),
                         [&](int wave) { body(lanes{}, wave * groups_per_call); });
  }

  template <class Bits>
  KOKKOS_INLINE_FUNCTION static void shuffle(const lanes& held, const Bits (&in)[WaveLanes],
                                             Bits (&out)[WaveLanes], shuffle_kind kind,
                                             int argument) {
    for (int s = 0; s < WaveLanes; ++s) {
      const int base = s - held.lane(s), lane = held.lane(s);
      int source = s;
      switch (kind) {
        // A source outside the group gives the lane its own value, as on the hardware.
        case shuffle_kind::xor_lane:
          source = (lane ^ argument) < group_width ? base + (lane ^ argument) : s;
          break;
        case shuffle_kind::up:
          source = lane >= argument ? s - argument : s;
          break;
        case shuffle_kind::from_lane:
          source = base + argument % group_width;
          break;
      }
      out[s] = in[source];
    }
  }

  KOKKOS_INLINE_FUNCTION static void ballot_reversed(const lanes& /*held*/,
                                                     const bool (&predicate)[WaveLanes],
                                                     std::uint32_t (&out)[WaveLanes]) {
    std::uint64_t wave = 0;
    for (int s = 0; s < WaveLanes; ++s) wave |= std::uint64_t{predicate[s]} << s;
    // A warp's ballot bit-reversed is the lower half's case of the wavefront's.
    for (int s = 0; s < WaveLanes; ++s)
      out[s] = hip_intrinsics::group_ballot_reversed(wave, static_cast<unsigned>(s));
  }
};

template <int WaveLanes>
using emulated_lane_ops = lane_group_ops<emulated_intrinsics<WaveLanes>>;

}  // namespace ndzip::backend
