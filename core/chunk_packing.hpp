#pragma once
// Vertical bit packing of a transformed hypercube into its block, and back. A block is the H
// chunk heads followed by the non-zero bit-plane columns of every chunk, most significant plane
// first; a head has bit b set exactly when column b is non-zero.

#include <Kokkos_Core.hpp>

#include "core/bit_mapping.hpp"

namespace ndzip::core {

// Sum of the column counts the heads of `block` announce, to the whole team.
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION int announced_columns(const Member& member, const Bits* block) {
  int columns = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(member, Profile::chunks_per_hypercube),
      [&](int k, int& sum) { sum += LaneOps::popcount(block[k]); }, columns);
  return columns;
}

// Packs the Lorenzo residuals in `cube` (folded here) into `block`, which has room for
// Profile::max_block_words words; `cube` is overwritten with the chunks' columns. Returns the
// block length in words, to the whole team.
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION int pack_hypercube(const Member& member, Bits* cube, Bits* block) {
  constexpr int w = Profile::chunk_size;
  constexpr int chunks = Profile::chunks_per_hypercube;

  // Transpose every chunk in place and write its head.
  Kokkos::parallel_for(Kokkos::TeamThreadRange(member, chunks), [&](int k) {
    Bits* rows = cube + k * w;
    Bits columns[w];
    for (int j = 0; j < w; ++j) columns[j] = fold(rows[j]);
    LaneOps::transpose(columns);
    Bits head = 0;
    for (int i = 0; i < w; ++i) {
      head |= static_cast<Bits>(columns[i] != 0) << (w - 1 - i);
      rows[i] = columns[i];
    }
    block[k] = head;
  });
  member.team_barrier();

  // Each chunk's columns go after the columns of all chunks before it.
  Kokkos::parallel_scan(Kokkos::TeamThreadRange(member, chunks),
                        [&](int k, int& position, bool final) {
                          const Bits head = block[k];
                          if (final) {
                            Bits* out = block + chunks + position;
                            const Bits* columns = cube + k * w;
                            for (int i = 0; i < w; ++i)
                              if (columns[i] != 0) *out++ = columns[i];
                          }
                          position += LaneOps::popcount(head);
                        });
  const int length = chunks + announced_columns<Profile, LaneOps>(member, block);
  member.team_barrier();
  return length;
}

// Unpacks `block` (whose heads announce exactly the columns it holds; check that first with
// announced_columns) into folded-back Lorenzo residuals in `cube`.
template <class Profile, class LaneOps, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void unpack_hypercube(const Member& member, const Bits* block, Bits* cube) {
  constexpr int w = Profile::chunk_size;
  constexpr int chunks = Profile::chunks_per_hypercube;
  Kokkos::parallel_scan(Kokkos::TeamThreadRange(member, chunks),
                        [&](int k, int& position, bool final) {
                          const Bits head = block[k];
                          if (final) {
                            const Bits* in = block + chunks + position;
                            Bits rows[w];
                            for (int i = 0; i < w; ++i)
                              rows[i] = (head >> (w - 1 - i)) & 1 ? *in++ : Bits{0};
                            LaneOps::transpose(rows);
                            for (int j = 0; j < w; ++j) cube[k * w + j] = fold(rows[j]);
                          }
                          position += LaneOps::popcount(head);
                        });
  member.team_barrier();
}

}  // namespace ndzip::core
