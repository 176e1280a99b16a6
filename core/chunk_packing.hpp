#pragma once
// Vertical bit packing of a transformed hypercube into its block, and back. A block is the H
// chunk heads followed by the non-zero bit-plane columns of every chunk, most significant plane
// first; a head has bit b set exactly when the column of plane b is non-zero.
//
// A chunk's W rows are spread over the lanes of one team thread: lane l holds rows
// l, l + V, l + 2V, ... (V = LaneOps::vector_length), and after the transposition the columns
// with the same indices, column i being plane W-1-i. The host has one lane holding every row;
// a GPU lane group holds one or two rows per lane. Everything lane-specific is in LaneOps.

#include <Kokkos_Core.hpp>

#include "core/bit_mapping.hpp"

namespace ndzip::core {

template <class Profile, class LaneOps>
inline constexpr int rows_per_lane = Profile::chunk_size / LaneOps::vector_length;

// Exclusive prefix sums of the column counts that heads[0..H) announce, into
// chunk_offsets[0..H); returns the total, to the whole team.
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION int scan_column_counts(const Member& member, const Bits* heads,
                                              int* chunk_offsets) {
  constexpr int chunks = Profile::chunks_per_hypercube;
  // One team thread scans with its lanes (a team-level scan over threads that have several
  // lanes each gave wrong offsets on Kokkos 4.6's CUDA backend).
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, 1), [&](int) {
    Kokkos::parallel_scan(Kokkos::ThreadVectorRange(member, chunks),
                          [&](int k, int& offset, bool final) {
                            const int count = LaneOps::popcount(heads[k]);
                            if (final) chunk_offsets[k] = offset;
                            offset += count;
                          });
  });
  member.team_barrier();
  return chunk_offsets[chunks - 1] + LaneOps::popcount(heads[chunks - 1]);
}

// Packs the Lorenzo residuals in `cube` (folded here) into `block`, which has room for
// Profile::max_block_words words; `cube` is overwritten with the chunks' columns. Returns the
// block length in words, to the whole team.
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION int pack_hypercube(const Member& member, Bits* cube, Bits* block,
                                          int* chunk_offsets) {
  constexpr int w = Profile::chunk_size;
  constexpr int chunks = Profile::chunks_per_hypercube;
  constexpr int lanes = LaneOps::vector_length;
  constexpr int per_lane = rows_per_lane<Profile, LaneOps>;

  // Transpose every chunk in place and write its head.
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, chunks), [&](int k) {
    Bits* chunk = cube + k * w;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, lanes), [&](int lane) {
      Bits words[per_lane];
      for (int r = 0; r < per_lane; ++r) words[r] = fold(chunk[lane + r * lanes]);
      LaneOps::transpose(lane, words);
      const Bits head = LaneOps::nonzero_columns(lane, words);
      for (int r = 0; r < per_lane; ++r) chunk[lane + r * lanes] = words[r];
      if (lane == 0) block[k] = head;
    });
  });
  member.team_barrier();

  // Each chunk's non-zero columns go after those of all chunks before it.
  const int columns = scan_column_counts<Profile, LaneOps>(member, block, chunk_offsets);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, chunks), [&](int k) {
    const Bits* chunk = cube + k * w;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, lanes), [&](int lane) {
      Bits words[per_lane];
      for (int r = 0; r < per_lane; ++r) words[r] = chunk[lane + r * lanes];
      LaneOps::compact(lane, words, block[k], block + chunks + chunk_offsets[k]);
    });
  });
  member.team_barrier();
  return chunks + columns;
}

// Unpacks a block of `length` words into folded-back Lorenzo residuals in `cube`. Returns false,
// to the whole team and before reading any column, if the heads announce a different number of
// columns than the block holds. The block may be untrusted memory that changes while it is
// read (a buffer shared with another process): its heads are read once, into `heads` (team
// scratch), and only that copy is checked and used, so every column read stays in the block.
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION bool unpack_hypercube(const Member& member, const Bits* block,
                                             std::uint64_t length, Bits* cube, Bits* heads,
                                             int* chunk_offsets) {
  constexpr int w = Profile::chunk_size;
  constexpr int chunks = Profile::chunks_per_hypercube;
  constexpr int lanes = LaneOps::vector_length;
  constexpr int per_lane = rows_per_lane<Profile, LaneOps>;

  Kokkos::parallel_for(Kokkos::TeamVectorRange(member, chunks), [&](int k) { heads[k] = block[k]; });
  member.team_barrier();
  const int columns = scan_column_counts<Profile, LaneOps>(member, heads, chunk_offsets);
  if (static_cast<std::uint64_t>(columns) + chunks != length) return false;
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, chunks), [&](int k) {
    Bits* chunk = cube + k * w;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, lanes), [&](int lane) {
      Bits words[per_lane];
      LaneOps::expand(lane, heads[k], block + chunks + chunk_offsets[k], words);
      LaneOps::transpose(lane, words);
      for (int r = 0; r < per_lane; ++r) chunk[lane + r * lanes] = fold(words[r]);
    });
  });
  member.team_barrier();
  return true;
}

}  // namespace ndzip::core
