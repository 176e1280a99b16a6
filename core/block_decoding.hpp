// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The steps that decode one block of a stream, shared by the stream decoder (core/decoder.hpp,
// into the grid) and the device-callable decoder (core/hypercube_decoding.hpp, into team
// scratch): the checks of the block's offset-table entries, its unpacking into team scratch with
// the steps of the inverse transform that run there, and its store with the steps that run on
// the way. Between the two, read_block_heads (core/chunk_packing.hpp) checks the block's heads.

#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "backends/host_inline.hpp"
#include "core/chunk_packing.hpp"
#include "core/hypercube_access.hpp"
#include "core/lorenzo.hpp"
#include "core/stream_status.hpp"

namespace ndzip::core {

// The failure that hypercube `index`'s offset-table entries show, its block being the words
// [begin, end) of a block area of `area` words (the table's last entry), or no_stream_failure.
template <class Profile>
KOKKOS_INLINE_FUNCTION std::uint64_t block_entries_failure(std::size_t index, std::uint64_t begin,
                                                           std::uint64_t end, std::uint64_t area) {
  if (end < begin + Profile::chunks_per_hypercube)
    return failure_key(index, stream_failure::block_shorter_than_heads);
  if (end - begin > static_cast<std::uint64_t>(Profile::max_block_words))
    return failure_key(index, stream_failure::block_longer_than_possible);
  if (end > area) return failure_key(index, stream_failure::entry_beyond_last);
  return no_stream_failure;
}

// Unpacks `block`, whose heads read_block_heads has read into scratch.heads and checked, into
// scratch.cube, and takes the steps of the inverse transform that run in scratch: lane groups
// the last axis' prefix sums while unpacking, then the outer axes'; host threads the outer axes'
// in 3-D only (their 2-D axis 0 and every last axis go into the store: store_decoded_block).
// `scratch`: kernel_types' team_scratch.
template <class Profile, class LaneOps, class Member, class Scratch, class Bits>
NDZIP_HOST_FORCEINLINE void unpack_block(const Member& member, const Bits* block,
                                         const Scratch& scratch) {
  unpack_columns<Profile, LaneOps>(member, block, scratch.cube, scratch.heads,
                                   scratch.chunk_offsets, scratch.run_carry);
  if constexpr (LaneOps::group_lanes > 1 || Profile::dimensions == 3)
    inverse_lorenzo<Profile, LaneOps>(member, scratch.cube);
}

// Stores the hypercube that unpack_block left in scratch to `values` where `placement` puts it,
// taking the inverse transform's last steps on the way and rotating bit 0 back to the sign
// position. `values` may be scratch.cube itself with own_placement(): each step reads an
// element (a host row) before it writes its place, and no later one reads that place again.
template <class Profile, class LaneOps, class Member, class Scratch, class Bits>
NDZIP_HOST_FORCEINLINE void store_decoded_block(const Member& member, const Scratch& scratch,
                                                const grid_placement<Profile>& placement,
                                                Bits* values) {
  if constexpr (LaneOps::group_lanes == 1)
    store_hypercube_sums<Profile, LaneOps>(scratch.cube, placement, values);
  else if constexpr (Profile::dimensions == 1)
    store_hypercube<Profile, LaneOps, unpack_run_length<Profile, LaneOps>>(
        member, scratch.cube, placement, values, scratch.run_carry);
  else
    store_hypercube<Profile, LaneOps>(member, scratch.cube, placement, values);
}

}  // namespace ndzip::core
