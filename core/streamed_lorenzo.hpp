// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The integer Lorenzo transform of a hypercube streamed through one lane group's registers
// (core/streamed_kernels.hpp): the hypercube's linear order cut into pieces of 32 positions, a
// position per lane (piece p holds positions 32p .. 32p + 31, lane l position 32p + l), taken
// in order a step of step_pieces pieces at a time. The neighbours a piece needs come from
// shuffles inside it and from what the group kept of the pieces before: the previous piece's
// last element (1-D, 2-D), the row before (2-D: two pieces) or the plane before (3-D: eight
// pieces). No team scratch and no barrier: the forward and the inverse transform are the
// per-axis differences and prefix sums of core/lorenzo.hpp, in another order (they commute).

#include <Kokkos_Core.hpp>

#include "backends/host_inline.hpp"

namespace ndzip::core {

template <class Profile, class LaneOps, int StepPieces>
struct streamed_lorenzo {
  using bits_type = typename Profile::bits_type;
  static constexpr int dims = Profile::dimensions;
  static constexpr int lanes = LaneOps::group_lanes;
  static constexpr int slots = LaneOps::held_lanes;
  static_assert(lanes == 32 && LaneOps::groups_per_call == 1);
  using lanes_type = typename LaneOps::lanes;

  // A 3-D plane (16 x 16) is eight pieces of two 16-element rows; a 2-D row (64) two pieces.
  static constexpr int pieces_per_plane = dims == 3 ? 8 : dims == 2 ? 2 : 1;
  // Pieces a step takes (the caller's choice, core/streamed_kernels.hpp): whole planes, rows
  // and chunks.
  static constexpr int step_pieces = StepPieces;
  static_assert(step_pieces % pieces_per_plane == 0 &&
                step_pieces * lanes % Profile::chunk_size == 0);

  // What the group keeps of earlier pieces. Forward: rotated values (carry), differences along
  // the last axis (before, ring: 3-D the ring holds differences along the last two). Inverse:
  // the same quantities rebuilt. Every lane of a group holds the same carry. All start at zero,
  // so that the hypercube's first piece, row or plane takes nothing from them without a test
  // per piece (a test of the piece's index took three instructions a piece, H200 SASS).
  bits_type carry[slots] = {};
  bits_type before[slots] = {};                  // 3-D: the previous piece's upper row
  bits_type ring[pieces_per_plane][slots] = {};  // 2-D: the row before; 3-D: the plane before

  // Whether piece i of a step continues the line of the piece before it (a 2-D row is two
  // pieces; steps start rows).
  KOKKOS_INLINE_FUNCTION static constexpr bool continues_line(int i) {
    return dims == 1 || i % 2 != 0;
  }

  // The hypercube's next step_pieces pieces, rotated grid values in `v`, become their
  // residuals.
  KOKKOS_INLINE_FUNCTION void forward(const lanes_type& held, bits_type (&v)[step_pieces][slots]) {
    for (int i = 0; i < step_pieces; ++i) {
      if constexpr (dims == 3) {
        bits_type other[slots];
        LaneOps::template subtract_from_below<16>(held, v[i], 1);
        LaneOps::shuffle_xor(held, v[i], 16, other);
        const int in_plane = i % pieces_per_plane;
        for (int s = 0; s < slots; ++s) {
          // Rows 2 in_plane (lower lanes) and 2 in_plane + 1: the difference to the row before,
          // the other half of this piece or the previous piece's upper row.
          const bool upper = held.lane(s) >= 16;
          if (upper)
            v[i][s] -= other[s];
          else if (in_plane != 0)
            v[i][s] -= before[s];
          before[s] = other[s];
          const bits_type plane_differences = v[i][s];
          v[i][s] -= ring[in_plane][s];
          ring[in_plane][s] = plane_differences;
        }
      } else {
        bits_type left[slots], last[slots];
        LaneOps::shuffle_up(held, v[i], 1, left);
        LaneOps::broadcast(held, v[i], lanes - 1, last);
        // The element before lane 0: the previous piece's last, unless the piece starts a row
        // (2-D).
        for (int s = 0; s < slots; ++s) {
          if (held.lane(s) != 0)
            v[i][s] -= left[s];
          else if (continues_line(i))
            v[i][s] -= carry[s];
          carry[s] = last[s];
          if constexpr (dims == 2) {
            const bits_type row_differences = v[i][s];
            v[i][s] -= ring[i % 2][s];
            ring[i % 2][s] = row_differences;
          }
        }
      }
    }
  }

  // The inverse: residuals of the next step_pieces pieces in `v` become rotated grid values.
  KOKKOS_INLINE_FUNCTION void inverse(const lanes_type& held, bits_type (&v)[step_pieces][slots]) {
    for (int i = 0; i < step_pieces; ++i) {
      if constexpr (dims == 3) {
        const int in_plane = i % pieces_per_plane;
        for (int s = 0; s < slots; ++s) {
          v[i][s] += ring[in_plane][s];
          ring[in_plane][s] = v[i][s];
          if (held.lane(s) < 16 && in_plane != 0) v[i][s] += before[s];
        }
        // The upper row adds the lower one, now complete; the lower lanes then take the upper
        // row for the next piece.
        bits_type other[slots];
        LaneOps::shuffle_xor(held, v[i], 16, other);
        for (int s = 0; s < slots; ++s)
          if (held.lane(s) >= 16) v[i][s] += other[s];
        LaneOps::shuffle_xor(held, v[i], 16, before);
        LaneOps::template inclusive_scan<16>(held, v[i]);
      } else {
        if constexpr (dims == 2)
          for (int s = 0; s < slots; ++s) {
            v[i][s] += ring[i % 2][s];
            ring[i % 2][s] = v[i][s];
          }
        LaneOps::template inclusive_scan<lanes>(held, v[i]);
        if (continues_line(i))
          for (int s = 0; s < slots; ++s) v[i][s] += carry[s];
        LaneOps::broadcast(held, v[i], lanes - 1, carry);
      }
    }
  }
};

}  // namespace ndzip::core
