// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Compression kernels. Single pass (backends whose teams progress independently, when the
// stream has room for the worst case): each team encodes a hypercube straight into the stream
// at the place a look-back over the blocks before it gives (core/block_placement.hpp), writes
// its offset-table entry, and teams past the last hypercube copy the border. Otherwise, three
// kernels: encode every hypercube into a worst-case-sized scratch block (K1), scan the block
// lengths into offset-table entries (K2), then compact the blocks into the stream behind the
// offset table (K3). The border is copied by core/border.hpp.

#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "backends/host_inline.hpp"
#include "backends/kernel_role.hpp"
#include "core/block_placement.hpp"
#include "core/border.hpp"
#include "core/chunk_packing.hpp"
#include "core/hypercube_access.hpp"
#include "core/lorenzo.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// LaneOps: the space's own (backend::lane_ops_for_t) in the library; tests may run host spaces
// with an emulation of the GPU lane groups (backends/emulated).
template <class T, int Dims, class ExecSpace, class LaneOps>
struct kernel_types {
  using profile_type = profile<T, Dims>;
  using bits_type = typename profile_type::bits_type;
  using lane_ops = LaneOps;
  using team_policy = Kokkos::TeamPolicy<ExecSpace, typename LaneOps::schedule>;
  // The single-pass encoder and the decoder with launch bounds, so that the device compiler fits
  // its registers to the occupancy the lane-ops ask for (none where they ask for 0 teams).
  template <backend::kernel_role Role>
  using bounded_policy = Kokkos::TeamPolicy<
      ExecSpace, typename LaneOps::schedule,
      Kokkos::LaunchBounds<
          LaneOps::min_teams_per_multiprocessor(Role, sizeof(bits_type)) == 0
              ? 0
              : LaneOps::team_size(sizeof(bits_type)) * LaneOps::vector_length,
          LaneOps::min_teams_per_multiprocessor(Role, sizeof(bits_type))>>;
  using member_type = typename team_policy::member_type;

  // Team scratch: the hypercube's words, the 1-D line's carry into each run of prefix sums
  // (lane-group decoders: unpack_columns), the chunk heads of a block (the decoder reads them
  // from the untrusted stream once, so that what was checked is what is used), the column offset
  // of every chunk in its block, and the decoder's offset-table entries.
  static constexpr std::size_t cube_scratch_bytes = profile_type::hypercube_size * sizeof(bits_type);
  static constexpr std::size_t carry_scratch_bytes =
      LaneOps::group_lanes > 1 && Dims == 1
          ? profile_type::hypercube_size / unpack_run_length<profile_type, LaneOps> *
                sizeof(bits_type)
          : 0;
  static constexpr std::size_t heads_scratch_bytes =
      profile_type::chunks_per_hypercube * sizeof(bits_type);
  static constexpr std::size_t offsets_scratch_bytes = profile_type::chunks_per_hypercube * sizeof(int);
  // The decoder's offset-table entries, read by one thread and shared with the team.
  static constexpr std::size_t entries_scratch_bytes = 4 * sizeof(std::uint32_t);
  static constexpr std::size_t team_scratch_bytes = cube_scratch_bytes + carry_scratch_bytes +
                                                    heads_scratch_bytes + offsets_scratch_bytes +
                                                    entries_scratch_bytes;

  // Host single-pass teams encode a run of consecutive hypercubes (hypercubes_per_team) into
  // staging scratch before their look-back: their blocks and each one's end in the run.
  static constexpr std::size_t staging_scratch_bytes = LaneOps::max_hypercubes_per_team > 1
                                                           ? (profile_type::max_block_words *
                                                                  sizeof(bits_type) +
                                                              sizeof(std::uint64_t)) *
                                                                 LaneOps::max_hypercubes_per_team
                                                           : 0;

  struct team_scratch {
    bits_type* cube;
    bits_type* run_carry;
    bits_type* heads;
    int* chunk_offsets;
    std::uint32_t* entries;
  };

  // Each call takes new scratch memory: one per team.
  KOKKOS_INLINE_FUNCTION static team_scratch scratch(const member_type& member) {
    // Local copies: get_shmem takes its size by reference, which device code may not bind to a
    // static data member.
    const std::size_t cube_bytes = cube_scratch_bytes, carry_bytes = carry_scratch_bytes,
                      heads_bytes = heads_scratch_bytes, offsets_bytes = offsets_scratch_bytes,
                      entries_bytes = entries_scratch_bytes;
    auto* cube = static_cast<bits_type*>(member.team_scratch(0).get_shmem(cube_bytes));
    auto* carry = static_cast<bits_type*>(member.team_scratch(0).get_shmem(carry_bytes));
    auto* heads = static_cast<bits_type*>(member.team_scratch(0).get_shmem(heads_bytes));
    auto* offsets = static_cast<int*>(member.team_scratch(0).get_shmem(offsets_bytes));
    return {cube, carry, heads, offsets,
            static_cast<std::uint32_t*>(member.team_scratch(0).get_shmem(entries_bytes))};
  }

  // Where a staged team puts its run's blocks, then the end of each block in the run: taken
  // after scratch(member), from the same level (host teams have that level only). Each call
  // takes new memory, so a team makes one.
  KOKKOS_INLINE_FUNCTION static bits_type* staging(const member_type& member) {
    const std::size_t bytes = staging_scratch_bytes;
    return static_cast<bits_type*>(member.team_scratch(0).get_shmem(bytes));
  }

  // One team per hypercube (and per border slice, where the kernel copies the border too), with
  // its scratch.
  template <class Policy = team_policy>
  static Policy hypercube_policy(const ExecSpace& exec, std::size_t teams,
                                 int team_size = lane_ops::team_size(sizeof(bits_type))) {
    // check_grid_representable keeps `teams` within an int.
    return Policy(exec, static_cast<int>(teams), team_size, lane_ops::vector_length)
        .set_scratch_size(0, Kokkos::PerTeam(team_scratch_bytes));
  }

  template <backend::kernel_role Role, class Policy>
  static Policy with_staging(Policy policy) {
    if constexpr (Role == backend::kernel_role::encode && staging_scratch_bytes > 0)
      policy.set_scratch_size(0, Kokkos::PerTeam(team_scratch_bytes + staging_scratch_bytes));
    return policy;
  }

  // Launches a single-pass encoder or a decoder (Role) over `teams` teams: with the role's
  // launch bounds, or, where the device could hold every team at once even with the wide shape
  // (small and mid-sized grids, which leave most of a GPU idle whatever the team shape), with
  // wide teams, whose lane groups share each hypercube's work and so finish it sooner. H200,
  // the corpus back to back: 185 / 296 GB/s with wide teams up to a quarter of the device's
  // thread slots, 219 / 330 up to all of them (4 MB grids 1.2-1.3x faster, 2-D 4 MB float
  // decoding 7 % slower).
  template <backend::kernel_role Role, class Functor>
  static void launch(const char* name, const ExecSpace& exec, std::size_t teams,
                     const Functor& functor) {
    constexpr int wide = lane_ops::wide_team_size(sizeof(bits_type));
    if constexpr (wide > lane_ops::team_size(sizeof(bits_type))) {
      constexpr int wide_threads = wide * lane_ops::vector_length;
      if (teams * wide_threads <= static_cast<std::size_t>(exec.concurrency())) {
        using wide_policy =
            Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<wide_threads, 1>>;
        Kokkos::parallel_for(name, hypercube_policy<wide_policy>(exec, teams, wide), functor);
        return;
      }
    }
    Kokkos::parallel_for(
        name, with_staging<Role>(hypercube_policy<bounded_policy<Role>>(exec, teams)), functor);
  }
};

// Hypercube `index` of the grid -> its block, at the place that place(length) returns (see
// pack_hypercube): the steps both compression paths share, over the whole team, in the team's
// scratch. A host team prefetches the grid rows of hypercube `next_index`, the one its thread
// probably takes next.
template <class T, int Dims, class ExecSpace, class LaneOps, class Place>
NDZIP_HOST_FORCEINLINE void encode_hypercube(
    const typename kernel_types<T, Dims, ExecSpace, LaneOps>::member_type& member,
    const typename kernel_types<T, Dims, ExecSpace, LaneOps>::team_scratch& scratch,
    const stream_layout<T, Dims>& layout,
    const typename kernel_types<T, Dims, ExecSpace, LaneOps>::bits_type* values, std::size_t index,
    std::size_t next_index, const Place& place) {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  LaneOps::run_team([&]() NDZIP_INLINE_LAMBDA {
    std::size_t origin[Dims];
    layout.hypercube_origin(index, origin);
    const grid_placement<typename base::profile_type> placement(layout.grid, origin);
    load_hypercube_residuals<typename base::profile_type, LaneOps>(member, values, placement,
                                                                   scratch.cube);
    if constexpr (LaneOps::group_lanes == 1)
      if (next_index < layout.hypercube_count) {
        layout.hypercube_origin(next_index, origin);
        prefetch_hypercube_rows<typename base::profile_type>(
            values, grid_placement<typename base::profile_type>(layout.grid, origin));
      }
    pack_hypercube<typename base::profile_type, LaneOps>(member, scratch.cube, scratch.heads,
                                                         scratch.chunk_offsets, place);
  });
}

// K1: hypercube -> block at blocks + index * max_block_words; its length into block_ends.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct encode_hypercubes {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  using member_type = typename base::member_type;
  using profile_type = typename base::profile_type;

  stream_layout<T, Dims> layout;
  const bits_type* values;
  bits_type* blocks;
  std::uint64_t* block_ends;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const std::size_t index = member.league_rank();
    // A host thread takes consecutive league ranks (Kokkos' schedule hands them out in chunks).
    encode_hypercube<T, Dims, ExecSpace, LaneOps>(
        member, base::scratch(member), layout, values, index, index + 1,
        [&](int length) NDZIP_INLINE_LAMBDA {
          Kokkos::single(Kokkos::PerTeam(member),
                         [&]() NDZIP_INLINE_LAMBDA { block_ends[index] = length; });
          return blocks + index * profile_type::max_block_words;
        });
  }
};

// Where a single-pass encoder writes the stream's size: a single grid's result (a batch has its
// own sink, found by argument-dependent lookup: core/batch_impl.hpp).
KOKKOS_INLINE_FUNCTION void store_stream_size(std::uint64_t* to, std::uint64_t size) {
  *to = size;
}

// How many consecutive hypercubes a single-pass team encodes. One, except for 2-D and 3-D grids
// on host backends running several threads: there a team's successive hypercubes would
// otherwise be a thread count apart (tickets go to the threads in turn), so each hypercube's
// rows would be cold in cache and in the hardware prefetchers, which follow a thread's own
// accesses along a row (a 1-D hypercube is one contiguous row: runs would only add the copy
// out of staging). Runs are kept short enough that every thread gets several, for balance.
template <class LaneOps, int Dims>
std::size_t hypercubes_per_team(std::size_t hypercubes, std::size_t teams_at_once) {
  constexpr std::size_t longest = LaneOps::max_hypercubes_per_team;
  if (longest == 1 || Dims == 1 || teams_at_once <= 1) return 1;
  const std::size_t balanced = hypercubes / (teams_at_once * 8);
  return balanced < 1 ? 1 : balanced > longest ? longest : balanced;
}

// A single-pass encoder's team past the blocks: copies border slice `slice` behind the block
// area once the look-back has placed the last of `placed` items (runs or hypercubes), whose
// inclusive prefix is the area's size. Without any, the first border team writes the stream's
// size into `stream_bytes`.
template <class LaneOps, class Member, class T, int Dims, class Bits, class Placement,
          class SizeSink>
KOKKOS_INLINE_FUNCTION void copy_border_behind_blocks(
    const Member& member, const stream_layout<T, Dims>& layout, const Bits* values,
    std::byte* stream, const Placement& placement, std::size_t placed, const SizeSink& stream_bytes,
    std::size_t slice) {
  std::uint64_t area = 0;
  if (placed > 0)
    Kokkos::single(
        Kokkos::PerTeam(member),
        [&](std::uint64_t& words)
            NDZIP_INLINE_LAMBDA { words = placement.inclusive_prefix_of(placed - 1); },
        area);
  else if (slice == 0)
    Kokkos::single(Kokkos::PerTeam(member), [&]() NDZIP_INLINE_LAMBDA {
      store_stream_size(stream_bytes, layout.stream_bytes(0));
    });
  auto* block_area = reinterpret_cast<Bits*>(stream + layout.header_bytes());
  copy_border_slice<border_direction::grid_to_stream, LaneOps>(
      member, layout, const_cast<Bits*>(values), block_area + area, slice);
}

// Single pass, team `team` (in ticket order) of one grid, which encodes the `run` hypercubes
// from team * run on (fewer at the end): their blocks go into the stream at the place the
// look-back over the teams before it gives, with their offset-table entries. A run of one is
// encoded straight into the stream; a longer one (host) into staging scratch first, its blocks
// copied once the look-back has placed them. Teams past the last run copy the border once the
// block area's size is known. The stream's size goes to `stream_bytes` (store_stream_size),
// from the last run's team (or, without hypercubes, the first border team: launch one at
// least). The stream must have room for the worst case. `placement`: a block_placement, or what
// makes one when the look-back needs it.
template <class T, int Dims, class ExecSpace, class LaneOps, class Placement, class SizeSink>
KOKKOS_INLINE_FUNCTION void encode_team(
    const typename kernel_types<T, Dims, ExecSpace, LaneOps>::member_type& member,
    const stream_layout<T, Dims>& layout,
    const typename kernel_types<T, Dims, ExecSpace, LaneOps>::bits_type* values, std::byte* stream,
    const Placement& placement, const SizeSink& stream_bytes, std::uint64_t team,
    std::size_t run = 1) {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  const std::size_t n = layout.hypercube_count;
  const std::size_t runs = (n + run - 1) / run;
  auto* block_area = reinterpret_cast<bits_type*>(stream + layout.header_bytes());
  auto* table = reinterpret_cast<std::uint32_t*>(stream);
  if (team >= runs)
    return copy_border_behind_blocks<LaneOps>(member, layout, values, stream, placement, runs,
                                              stream_bytes, team - runs);
  // Double streams with an odd hypercube count pad the table with a zero word.
  const auto pad_table = [&]() NDZIP_INLINE_LAMBDA {
    if (team == 0 && layout.header_bytes() > 4 * n) table[n] = 0;
  };
  if constexpr (LaneOps::max_hypercubes_per_team > 1) {
    if (run > 1) {
      static_assert(LaneOps::team_size(sizeof(bits_type)) == 1, "a staged run has one thread");
      const std::size_t first = team * run;
      const std::size_t count = n - first < run ? n - first : run;
      const auto scratch = base::scratch(member);
      bits_type* staged = base::staging(member);
      auto* ends = reinterpret_cast<std::uint64_t*>(
          staged + LaneOps::max_hypercubes_per_team * base::profile_type::max_block_words);
      std::uint64_t words = 0;
      for (std::size_t i = 0; i < count; ++i) {
        // The last hypercube's thread probably goes on with the run teams_at_once runs on.
        const std::size_t next =
            i + 1 < count ? first + i + 1 : first + placement.ticket_distance() * run;
        encode_hypercube<T, Dims, ExecSpace, LaneOps>(member, scratch, layout, values, first + i,
                                                      next, [&](int length) NDZIP_INLINE_LAMBDA {
                                                        bits_type* block = staged + words;
                                                        words += static_cast<std::uint64_t>(length);
                                                        ends[i] = words;
                                                        return block;
                                                      });
      }
      const std::uint64_t begin = placement.exclusive_prefix(team, words);
      for (std::size_t i = 0; i < count; ++i)
        table[first + i] = static_cast<std::uint32_t>(begin + ends[i]);
      pad_table();
      if (first + count == n) store_stream_size(stream_bytes, layout.stream_bytes(begin + words));
      bits_type* out = block_area + begin;
      for (std::uint64_t w = 0; w < words; ++w) out[w] = staged[w];
      return;
    }
  }
  const std::size_t index = team;
  encode_hypercube<T, Dims, ExecSpace, LaneOps>(
      member, base::scratch(member), layout, values, index, index + placement.ticket_distance(),
      [&](int length) NDZIP_INLINE_LAMBDA {
        std::uint64_t begin = 0;
        Kokkos::single(
            Kokkos::PerTeam(member),
            [&](std::uint64_t& words) NDZIP_INLINE_LAMBDA {
              words = placement.exclusive_prefix(index, length);
              table[index] = static_cast<std::uint32_t>(words + length);
              pad_table();
              if (index + 1 == n)
                store_stream_size(stream_bytes, layout.stream_bytes(words + length));
            },
            begin);
        return block_area + begin;
      });
}

// Single pass over one grid: each team takes its number from the ticket counter (in start order).
template <class T, int Dims, class ExecSpace, class LaneOps>
struct encode_into_stream {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  using member_type = typename base::member_type;

  stream_layout<T, Dims> layout;
  const bits_type* values;
  std::byte* stream;
  block_placement placement;
  std::uint64_t* stream_bytes;

  std::size_t run;  // hypercubes per team

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    std::uint64_t team = 0;
    Kokkos::single(
        Kokkos::PerTeam(member),
        [&](std::uint64_t& ticket) NDZIP_INLINE_LAMBDA { ticket = placement.take_ticket(); }, team);
    encode_team<T, Dims, ExecSpace, LaneOps>(member, layout, values, stream, placement,
                                             stream_bytes, team, run);
  }
};

// K2: block lengths -> inclusive prefix sums (the offset-table entries); *stream_bytes receives
// the stream's size.
template <class T, int Dims, class ExecSpace>
void scan_block_lengths(const ExecSpace& exec, const stream_layout<T, Dims>& layout,
                        std::uint64_t* block_ends, std::uint64_t* stream_bytes) {
  const std::size_t count = layout.hypercube_count;
  Kokkos::parallel_scan(
      "ndzip::scan_block_lengths",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, count),
      KOKKOS_LAMBDA(std::int64_t i, std::uint64_t & sum, bool final) {
        sum += block_ends[i];
        if (final) {
          block_ends[i] = sum;
          if (i + 1 == static_cast<std::int64_t>(count)) *stream_bytes = layout.stream_bytes(sum);
        }
      });
}

// K3: offset table, header padding and blocks, compacted into the stream; teams past the last
// hypercube copy the border behind the blocks. Without hypercubes (no K2), the first team
// writes the stream's size into *stream_bytes (launch one at least).
template <class T, int Dims, class ExecSpace, class LaneOps>
struct compact_blocks {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  using member_type = typename base::member_type;
  using profile_type = typename base::profile_type;

  stream_layout<T, Dims> layout;
  const bits_type* values;
  const bits_type* blocks;
  const std::uint64_t* block_ends;
  std::byte* stream;
  std::uint64_t* stream_bytes;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const std::size_t index = member.league_rank();
    const std::size_t n = layout.hypercube_count;
    auto* block_area = reinterpret_cast<bits_type*>(stream + layout.header_bytes());
    if (index >= n) {
      if (n == 0 && index == 0)
        Kokkos::single(Kokkos::PerTeam(member),
                       [&]() NDZIP_INLINE_LAMBDA { *stream_bytes = layout.stream_bytes(0); });
      bits_type* border = block_area + (n == 0 ? 0 : block_ends[n - 1]);
      copy_border_slice<border_direction::grid_to_stream, LaneOps>(
          member, layout, const_cast<bits_type*>(values), border, index - n);
      return;
    }
    const std::uint64_t begin = index == 0 ? 0 : block_ends[index - 1];
    const std::uint64_t end = block_ends[index];
    const bits_type* block = blocks + index * profile_type::max_block_words;
    bits_type* out = block_area + begin;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(member, static_cast<int>(end - begin)),
                         [&](int j) NDZIP_INLINE_LAMBDA { out[j] = block[j]; });
    Kokkos::single(Kokkos::PerTeam(member), [&]() NDZIP_INLINE_LAMBDA {
      auto* table = reinterpret_cast<std::uint32_t*>(stream);
      table[index] = static_cast<std::uint32_t>(end);
      // Double streams with an odd hypercube count pad the table to a whole word with zeros.
      if (index == 0 && layout.header_bytes() > 4 * n) table[n] = 0;
    });
  }
};

}  // namespace ndzip::core
