// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The decompression kernel for an untrusted stream: one team per hypercube and per border
// slice. Each team reads the offset-table entries it uses (its block's two and the last) from
// the stream once, into registers, and checks them there: that the stream holds what the last
// entry announces, then its own block's bounds; a block's heads are likewise read once into team
// scratch and checked before any column is read. So no read leaves the stream, even if the
// stream memory changes while the kernel runs (a buffer shared with another process or thread).
// Nothing is read back to the host: the teams gather the outcome (bytes consumed, or the first
// failure) into a decompress_outcome themselves (core/stream_status.hpp), so that a
// decompression is one launch that can be queued without waiting for it.

#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "backends/host_inline.hpp"
#include "core/block_decoding.hpp"
#include "core/border.hpp"
#include "core/chunk_packing.hpp"
#include "core/encoder.hpp"
#include "core/hypercube_access.hpp"
#include "core/stream_status.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// Which hypercube a decoder's team decodes, and where its values go. The whole grid's decoder
// (whole_grid_teams): team t decodes hypercube t, or copies border slice t - n, into the grid
// itself. A region's decoder (core/region_decoder.hpp) maps its teams to the hypercubes a box
// touches and places them in a buffer of those hypercubes alone; its border is copied apart. The
// device-callable decoder's validation (core/hypercube_decoding.hpp) only checks every block.
struct whole_grid_teams {
  static constexpr bool copies_border = true;
  static constexpr bool decodes_blocks = true;
  KOKKOS_INLINE_FUNCTION std::size_t hypercube_of(std::size_t team) const { return team; }
  template <class T, int Dims>
  NDZIP_HOST_FORCEINLINE grid_placement<profile<T, Dims>> placement(
      const stream_layout<T, Dims>& layout, std::size_t index) const {
    std::size_t origin[Dims];
    layout.hypercube_origin(index, origin);
    return grid_placement<profile<T, Dims>>(layout.grid, origin);
  }
};

// Team `team` of the decoder for one grid's stream: checks hypercube teams.hypercube_of(team)'s
// block and (with Teams::decodes_blocks) decodes it into grid.values() where teams.placement()
// puts it, or (with Teams::copies_border) copies border slice `team - hypercube_count`, and
// reports to `gatherer` (an outcome_gatherer, or what finds one when the team is done). `grid`
// gives the grid's layout(), stream(), stream_size() and values() where they are used: a single
// grid's kernel holds them in its parameters, a batch's team reads them from its grid's
// descriptor and item, so that no register holds them through the decoding. The decoder
// launches one team at least, so that the outcome is written for a grid without hypercubes or
// border too.
template <class T, int Dims, class ExecSpace, class LaneOps, class Grid, class Teams,
          class Gatherer>
KOKKOS_INLINE_FUNCTION void decode_team(
    const typename kernel_types<T, Dims, ExecSpace, LaneOps>::member_type& member,
    const Grid& grid, const Teams& teams, std::size_t team, const Gatherer& gatherer) {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  using lane_ops = typename base::lane_ops;
  using profile_type = typename base::profile_type;
  // One clone of the whole team per host instruction set (backends/host/isa.hpp).
  lane_ops::run_team([&]() NDZIP_INLINE_LAMBDA {
    const stream_layout<T, Dims>& layout = grid.layout();
    const std::size_t n = layout.hypercube_count;
    const std::size_t index = teams.hypercube_of(team);

    // The entries this team uses, the last one and (hypercube teams) its block's two, read once
    // by one thread into team scratch and used from there by the whole team, so that no register
    // holds them through the decoding (H200: spills in the 1-D float decoder otherwise).
    const auto scratch = base::scratch(member);
    const auto* table = reinterpret_cast<const std::uint32_t*>(grid.stream());
    Kokkos::single(Kokkos::PerTeam(member), [&]() NDZIP_INLINE_LAMBDA {
      scratch.entries[0] = n == 0 ? 0 : table[n - 1];
      if (index < n) {
        scratch.entries[1] = index == 0 ? 0 : table[index - 1];
        scratch.entries[2] = index + 1 == n ? scratch.entries[0] : table[index];
      }
    });
    member.team_barrier();
    const auto finish = [&](std::uint64_t key) NDZIP_INLINE_LAMBDA {
      Kokkos::single(Kokkos::PerTeam(member), [&]() NDZIP_INLINE_LAMBDA {
        gatherer.finish_team(team, key, layout.stream_bytes(scratch.entries[0]),
                             grid.stream_size());
      });
    };
    const std::uint64_t area = scratch.entries[0];
    const std::uint64_t needed = layout.stream_bytes(area);
    if (needed > grid.stream_size())
      return finish(team == 0 ? failure_key(0, stream_failure::stream_truncated)
                               : no_stream_failure);
    const auto* block_area =
        reinterpret_cast<const bits_type*>(grid.stream() + layout.header_bytes());
    if (index >= n) {
      if constexpr (Teams::copies_border)
        copy_border_slice<border_direction::stream_to_grid, lane_ops>(
            member, layout, grid.values(), const_cast<bits_type*>(block_area + area), index - n);
      return finish(no_stream_failure);
    }
    const std::uint64_t begin = scratch.entries[1], end = scratch.entries[2];
    const std::uint64_t entries = block_entries_failure<profile_type>(index, begin, end, area);
    if (entries != no_stream_failure) return finish(entries);
    const bits_type* block = block_area + begin;
    if (!read_block_heads<profile_type, lane_ops>(member, block, end - begin, scratch.heads,
                                                  scratch.chunk_offsets))
      return finish(failure_key(index, stream_failure::heads_do_not_match_block));
    if constexpr (Teams::decodes_blocks) {
      unpack_block<profile_type, lane_ops>(member, block, scratch);
      store_decoded_block<profile_type, lane_ops>(member, scratch, teams.placement(layout, index),
                                                  grid.values());
    }
    finish(no_stream_failure);
  });
}

// The decoder for one grid's stream, its teams as `Teams` maps them: the whole grid's, a
// region's (core/region_decoder.hpp), or the validation's that decodes nothing
// (core/hypercube_decoding.hpp, whose kernel has no values).
template <class T, int Dims, class ExecSpace, class LaneOps, class Teams = whole_grid_teams>
struct decode_hypercubes {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  using member_type = typename base::member_type;

  stream_layout<T, Dims> grid_layout;
  const std::byte* grid_stream;
  std::size_t stream_bytes;
  bits_type* grid_values;
  outcome_gatherer gatherer;
  Teams teams{};

  // The grid, as decode_team reads it.
  KOKKOS_INLINE_FUNCTION const stream_layout<T, Dims>& layout() const { return grid_layout; }
  KOKKOS_INLINE_FUNCTION const std::byte* stream() const { return grid_stream; }
  KOKKOS_INLINE_FUNCTION std::size_t stream_size() const { return stream_bytes; }
  KOKKOS_INLINE_FUNCTION bits_type* values() const { return grid_values; }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    decode_team<T, Dims, ExecSpace, LaneOps>(member, *this, teams, member.league_rank(),
                                             gatherer);
  }
};

}  // namespace ndzip::core
