// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The default mode's batch kernels: the single-grid team bodies (encode_team, decode_team) run
// for every grid of a batch in one launch, each team finding its grid from its team number.

#include <Kokkos_Core.hpp>
#include <cstdint>

#include "backends/host_inline.hpp"
#include "core/block_placement.hpp"
#include "core/decoder.hpp"
#include "core/encoder.hpp"
#include "core/stream_status.hpp"
#include "ndzip/batch_compressor.hpp"

namespace ndzip::core {

// A grid of a batch as the kernels see it.
template <class T, int Dims>
struct batch_array {
  stream_layout<T, Dims> layout{extent<Dims>{}};
  std::uint64_t first_team;       // teams of the grids before it
  std::uint64_t teams;            // its own: one per hypercube and border slice, one at least
  std::uint64_t first_hypercube;  // hypercubes of the grids before it
};

// The grid that batch team `team` works for: the last whose first team is not after it (every
// grid has a team at least, so first teams increase strictly).
template <class T, int Dims>
KOKKOS_INLINE_FUNCTION std::size_t array_of_team(const batch_array<T, Dims>* arrays,
                                                 std::size_t count, std::uint64_t team) {
  std::size_t low = 0, high = count;
  while (high - low > 1) {
    const std::size_t middle = low + (high - low) / 2;
    if (arrays[middle].first_team <= team)
      low = middle;
    else
      high = middle;
  }
  return low;
}

// Single-pass compression of every grid: tickets are taken in start order across the batch, so
// within each grid too, and each grid's look-back runs over its own published words.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct encode_batch {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  using member_type = typename base::member_type;

  const batch_array<T, Dims>* arrays;
  std::size_t count;
  batch_item<T>* items;
  std::uint64_t* sizes;       // a copy of every stream size, or null
  block_placement placement;  // over the whole batch's published words

  // Grid `a`'s look-back, made when the team needs it: a block_placement held through the whole
  // encoding spilled registers (H200: 56 bytes of stack in the 3-D float batch encoder).
  struct grid_look_back {
    const encode_batch& kernel;
    std::size_t a;
    KOKKOS_INLINE_FUNCTION block_placement of_grid() const {
      const block_placement& all = kernel.placement;
      return {all.published + kernel.arrays[a].first_hypercube, all.tickets, all.ticket_base,
              all.epoch, all.teams_at_once};
    }
    KOKKOS_INLINE_FUNCTION std::uint64_t exclusive_prefix(std::uint64_t index,
                                                          std::uint64_t length) const {
      return of_grid().exclusive_prefix(index, length);
    }
    KOKKOS_INLINE_FUNCTION std::uint64_t inclusive_prefix_of(std::uint64_t index) const {
      return of_grid().inclusive_prefix_of(index);
    }
    KOKKOS_INLINE_FUNCTION std::uint64_t ticket_distance() const {
      return kernel.placement.ticket_distance();
    }
  };

  // Grid `a`'s stream size goes into its item, and into the sizes View if there is one.
  struct grid_size_sink {
    const encode_batch& kernel;
    std::size_t a;
    friend KOKKOS_INLINE_FUNCTION void store_stream_size(const grid_size_sink& to,
                                                         std::uint64_t size) {
      to.kernel.items[to.a].stream_bytes = size;
      if (to.kernel.sizes != nullptr) to.kernel.sizes[to.a] = size;
    }
  };

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    std::uint64_t ticket = 0;
    Kokkos::single(
        Kokkos::PerTeam(member),
        [&](std::uint64_t& taken) NDZIP_INLINE_LAMBDA { taken = placement.take_ticket(); }, ticket);
    const std::size_t a = array_of_team(arrays, count, ticket);
    // By reference: the grid's layout is read where it is used (as a single grid's kernel reads
    // its own from the kernel parameters), not held in registers for the whole team.
    const batch_array<T, Dims>& array = arrays[a];
    encode_team<T, Dims, ExecSpace, LaneOps>(
        member, array.layout, reinterpret_cast<const bits_type*>(items[a].values), items[a].stream,
        grid_look_back{*this, a}, grid_size_sink{*this, a}, ticket - array.first_team);
  }
};

// Decompression of every grid, each gathering its own outcome.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct decode_batch {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  using member_type = typename base::member_type;

  const batch_array<T, Dims>* arrays;
  std::size_t count;
  const batch_item<T>* items;
  decompress_outcome* outcomes;
  std::uint64_t* status;  // three words per grid

  // Grid `a`'s outcome gatherer, made when the team is done: one held through the whole decoding
  // spilled registers (H200: 104 bytes of stack in the 3-D float batch decoder).
  struct grid_gatherer {
    const decode_batch& kernel;
    std::size_t a;
    KOKKOS_INLINE_FUNCTION void finish_team(std::size_t index, std::uint64_t key,
                                            std::uint64_t checked_bytes,
                                            std::uint64_t given_bytes) const {
      std::uint64_t* words = kernel.status + 3 * a;
      const outcome_gatherer gatherer{words, words + 1, words + 2, kernel.outcomes + a,
                                      kernel.arrays[a].teams};
      gatherer.finish_team(index, key, checked_bytes, given_bytes);
    }
  };

  // Grid `a` as decode_team reads it: from its descriptor and item, where it is used (held
  // through the decoding, they spilled registers: H200, 48-64 bytes of stack in the float
  // batch decoders).
  struct grid_reader {
    const decode_batch& kernel;
    std::size_t a;
    KOKKOS_INLINE_FUNCTION const stream_layout<T, Dims>& layout() const {
      return kernel.arrays[a].layout;
    }
    KOKKOS_INLINE_FUNCTION const std::byte* stream() const { return kernel.items[a].stream; }
    KOKKOS_INLINE_FUNCTION std::size_t stream_size() const { return kernel.items[a].stream_bytes; }
    KOKKOS_INLINE_FUNCTION bits_type* values() const {
      return reinterpret_cast<bits_type*>(kernel.items[a].values);
    }
  };

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const std::uint64_t team = member.league_rank();
    const std::size_t a = array_of_team(arrays, count, team);
    const grid_gatherer gatherer{*this, a};
    const std::size_t index = team - arrays[a].first_team;
    // The table is read only from a stream that can hold it (a single compressor checks this
    // on the host).
    const std::uint64_t smallest = arrays[a].layout.smallest_stream_bytes();
    const std::uint64_t given = items[a].stream_bytes;
    if (given < smallest) {
      Kokkos::single(Kokkos::PerTeam(member), [&]() NDZIP_INLINE_LAMBDA {
        gatherer.finish_team(
            index,
            index == 0 ? failure_key(0, stream_failure::shorter_than_smallest) : no_stream_failure,
            smallest, given);
      });
      return;
    }
    decode_team<T, Dims, ExecSpace, LaneOps>(member, grid_reader{*this, a}, whole_grid_teams{},
                                             index, gatherer);
  }
};

}  // namespace ndzip::core
