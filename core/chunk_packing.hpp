// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Vertical bit packing of a transformed hypercube into its block, and back. A block is the H
// chunk heads followed by the non-zero bit-plane columns of every chunk, most significant plane
// first; a head has bit b set exactly when the column of plane b is non-zero.
//
// A chunk's W rows are spread over the lanes of a lane group: lane l holds rows l, l + G,
// l + 2G, ... (G = LaneOps::group_lanes), and after the transposition the columns with the same
// indices, column i being plane W-1-i. The host has one lane holding every row; a GPU lane group
// holds one or two rows per lane. The code below works on group values (an array entry per lane
// that the calling code holds, see backends/lane_group_ops.hpp), so it serves a lane that runs
// by itself and a host thread that plays a whole warp or wavefront alike; one call may serve
// several chunks (LaneOps::groups_per_call). Everything lane-specific is in LaneOps.

#include <Kokkos_Core.hpp>

#include "backends/host_inline.hpp"
#include "core/bit_mapping.hpp"
#include "core/hypercube_access.hpp"

namespace ndzip::core {

template <class Profile, class LaneOps>
inline constexpr int rows_per_lane = Profile::chunk_size / LaneOps::group_lanes;

// Exclusive prefix sums of the column counts that heads[0..H) announce, into
// chunk_offsets[0..H); returns the total, to the whole team.
template <class Profile, class LaneOps, class Member, class Bits>
NDZIP_HOST_FORCEINLINE int scan_column_counts(const Member& member, const Bits* heads,
                                              int* chunk_offsets) {
  constexpr int chunks = Profile::chunks_per_hypercube;
  // One team thread scans with its lanes (a team-level scan over threads that have several
  // lanes each gave wrong offsets on Kokkos 4.6's CUDA backend).
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, 1), [&](int) NDZIP_INLINE_LAMBDA {
    Kokkos::parallel_scan(Kokkos::ThreadVectorRange(member, chunks),
                          [&](int k, int& offset, bool final) NDZIP_INLINE_LAMBDA {
                            const int count = LaneOps::popcount(heads[k]);
                            if (final) chunk_offsets[k] = offset;
                            offset += count;
                          });
  });
  member.team_barrier();
  return chunk_offsets[chunks - 1] + LaneOps::popcount(heads[chunks - 1]);
}

// Packs the Lorenzo residuals in `cube` (folded here) into a block; `cube` is overwritten with
// the chunks' columns and `heads` (team scratch) with the chunk heads. Once the block length
// (in words) is known, the whole team calls place(length), which returns, to the whole team,
// where the block goes (room for `length` words).
//
// The encoder's steps (this, the forward transform, the hypercube load and the host lane-ops)
// are forced inline: as the kernels grew, GCC stopped inlining them into the host team loop,
// and host compression fell by up to 30 % (512^3 float, OpenMP, 2 cores: 1.45 -> 1.0 GB/s).
// On the host every step of a team, the decoder's too, is now inlined into the instruction-set
// clone that runs it (backends/host/isa.hpp, NDZIP_INLINE_LAMBDA).
template <class Profile, class LaneOps, class Member, class Bits, class Place>
NDZIP_HOST_FORCEINLINE void pack_hypercube(const Member& member, Bits* cube, Bits* heads,
                                           int* chunk_offsets, const Place& place) {
  constexpr int w = Profile::chunk_size;
  constexpr int chunks = Profile::chunks_per_hypercube;
  constexpr int lanes = LaneOps::group_lanes;
  constexpr int slots = LaneOps::held_lanes;
  constexpr int per_lane = rows_per_lane<Profile, LaneOps>;
  using lanes_type = typename LaneOps::lanes;

  // Transpose every chunk in place and note its head.
  LaneOps::for_each_group(member, chunks,
                          [&](const lanes_type& held, int first_chunk) NDZIP_INLINE_LAMBDA {
                            Bits words[slots][per_lane];
                            for (int s = 0; s < slots; ++s) {
                              const Bits* chunk = cube + (first_chunk + held.group(s)) * w;
                              for (int r = 0; r < per_lane; ++r)
                                words[s][r] = fold(chunk[held.lane(s) + r * lanes]);
                            }
                            LaneOps::transpose(held, words);
                            Bits chunk_heads[slots];
                            LaneOps::nonzero_columns(held, words, chunk_heads);
                            for (int s = 0; s < slots; ++s) {
                              const int k = first_chunk + held.group(s);
                              for (int r = 0; r < per_lane; ++r)
                                cube[k * w + held.lane(s) + r * lanes] = words[s][r];
                              if (held.lane(s) == 0) heads[k] = chunk_heads[s];
                            }
                          });
  member.team_barrier();

  // Each chunk's non-zero columns go after those of all chunks before it.
  const int columns = scan_column_counts<Profile, LaneOps>(member, heads, chunk_offsets);
  Bits* const block = place(chunks + columns);
  Kokkos::parallel_for(Kokkos::TeamVectorRange(member, chunks),
                       [&](int k) NDZIP_INLINE_LAMBDA { block[k] = heads[k]; });
  LaneOps::for_each_group(member, chunks,
                          [&](const lanes_type& held, int first_chunk) NDZIP_INLINE_LAMBDA {
                            Bits words[slots][per_lane], chunk_heads[slots];
                            Bits* out[slots];
                            for (int s = 0; s < slots; ++s) {
                              const int k = first_chunk + held.group(s);
                              for (int r = 0; r < per_lane; ++r)
                                words[s][r] = cube[k * w + held.lane(s) + r * lanes];
                              chunk_heads[s] = heads[k];
                              out[s] = block + chunks + chunk_offsets[k];
                            }
                            LaneOps::compact(held, words, chunk_heads, out);
                          });
}

// Lane groups expand this many consecutive chunks of a hypercube before they transpose any
// (unpack_columns), so that their column loads are in flight together: one chunk at a time, a
// lane group waited on every load (H200, 512^3 float: 38 % of the decoder's stalls). Their
// elements, a run of unpack_run_length consecutive positions, are then in the group's registers.
template <class LaneOps>
inline constexpr int unpack_batch = LaneOps::group_lanes > 1 ? 4 : 1;
template <class Profile, class LaneOps>
inline constexpr int unpack_run_length = unpack_batch<LaneOps> * Profile::chunk_size;

// The carry of a 1-D line into each run of unpack_run_length elements (lane groups): the sum of
// the runs before it, whose totals are their last elements once unpack_columns has taken the
// prefix sums within each run; to run_carry, for the whole team. One team thread scans with its
// lanes (see scan_column_counts).
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void line_run_carries(const Member& member, const Bits* cube,
                                             Bits* run_carry) {
  constexpr int run = unpack_run_length<Profile, LaneOps>;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, 1), [&](int) NDZIP_INLINE_LAMBDA {
    Kokkos::parallel_scan(Kokkos::ThreadVectorRange(member, Profile::hypercube_size / run),
                          [&](int r, Bits& carry, bool final) NDZIP_INLINE_LAMBDA {
                            const Bits total = cube[r * run + run - 1];
                            if (final) run_carry[r] = carry;
                            carry += total;
                          });
  });
  member.team_barrier();
}

// Reads the heads of a block of `length` words into `heads` (team scratch) and the column offset
// of each chunk into `chunk_offsets`; returns, to the whole team, whether the heads announce
// exactly the block's words, before any column is read. The block may be untrusted memory that
// changes while it is read (a buffer shared with another process): its heads are read once, into
// `heads`, and only that copy is checked and used (by unpack_columns), so every column read
// stays in the block. Alone, this is the stream validation of the device-callable decoder
// (core/hypercube_decoding.hpp).
template <class Profile, class LaneOps, class Member, class Bits>
NDZIP_HOST_FORCEINLINE bool read_block_heads(const Member& member, const Bits* block,
                                             std::uint64_t length, Bits* heads,
                                             int* chunk_offsets) {
  constexpr int chunks = Profile::chunks_per_hypercube;
  Kokkos::parallel_for(Kokkos::TeamVectorRange(member, chunks),
                       [&](int k) NDZIP_INLINE_LAMBDA { heads[k] = block[k]; });
  member.team_barrier();
  const int columns = scan_column_counts<Profile, LaneOps>(member, heads, chunk_offsets);
  return static_cast<std::uint64_t>(columns) + chunks == length;
}

// Unpacks the columns of a block whose heads read_block_heads has read and checked into
// folded-back Lorenzo residuals in `cube`.
// Lane groups also take the residuals' inclusive prefix sums along the last axis (the inverse
// Lorenzo transform's step along it) in registers, right after the transposition: within each
// row in 2-D and 3-D; in 1-D within each run of unpack_run_length elements, with the line's
// carry into each run in run_carry (team scratch, Profile::hypercube_size / unpack_run_length
// words), to be added while storing. Passes of their own over team scratch cost 16 % of the 3-D
// decoder's instructions (H200) and, in 1-D, two passes and three barriers more. Forced inline,
// as pack_hypercube: left out of line, the host decoder ran its baseline code in every clone
// (corpus, one core: 3.0 -> 1.2 GB/s when this function grew the lane groups' sums).
template <class Profile, class LaneOps, class Member, class Bits>
NDZIP_HOST_FORCEINLINE void unpack_columns(const Member& member, const Bits* block, Bits* cube,
                                           const Bits* heads, const int* chunk_offsets,
                                           [[maybe_unused]] Bits* run_carry) {
  constexpr int w = Profile::chunk_size;
  constexpr int chunks = Profile::chunks_per_hypercube;
  constexpr int lanes = LaneOps::group_lanes;
  constexpr int slots = LaneOps::held_lanes;
  constexpr int per_lane = rows_per_lane<Profile, LaneOps>;
  constexpr bool scan = lanes > 1;
  constexpr int row = hypercube_row_length<Profile>;
  using lanes_type = typename LaneOps::lanes;
  constexpr int batch = unpack_batch<LaneOps>;
  static_assert(chunks % batch == 0);
  LaneOps::for_each_group(
      member, chunks / batch, [&](const lanes_type& held, int first) NDZIP_INLINE_LAMBDA {
        Bits words[batch][slots][per_lane];
        [[maybe_unused]] Bits carry[slots] = {};  // the sum of the row's (run's) pieces so far
        for (int b = 0; b < batch; ++b) {
          Bits chunk_heads[slots];
          const Bits* in[slots];
          for (int s = 0; s < slots; ++s) {
            const int k = (first + held.group(s)) * batch + b;
            chunk_heads[s] = heads[k];
            in[s] = block + chunks + chunk_offsets[k];
          }
          LaneOps::expand(held, chunk_heads, in, words[b]);
        }
        for (int b = 0; b < batch; ++b) {
          LaneOps::transpose(held, words[b]);
          for (int r = 0; r < per_lane; ++r) {
            Bits v[slots];
            for (int s = 0; s < slots; ++s) v[s] = fold(words[b][s][r]);
            if constexpr (scan) {
              LaneOps::template inclusive_scan<(row < lanes ? row : lanes)>(held, v);
              if constexpr (row > lanes) {
                // A piece of `lanes` elements that continues its row (in 1-D: its run) adds the
                // sum of the pieces before it.
                const int piece = b * w + r * lanes;  // its first element's place in the run
                if (Profile::dimensions == 1 ? piece != 0 : piece % row != 0)
                  for (int s = 0; s < slots; ++s) v[s] += carry[s];
                LaneOps::broadcast(held, v, lanes - 1, carry);
              }
            }
            for (int s = 0; s < slots; ++s)
              cube[((first + held.group(s)) * batch + b) * w + held.lane(s) + r * lanes] = v[s];
          }
        }
      });
  member.team_barrier();
  if constexpr (scan && Profile::dimensions == 1)
    line_run_carries<Profile, LaneOps>(member, cube, run_carry);
}

}  // namespace ndzip::core
