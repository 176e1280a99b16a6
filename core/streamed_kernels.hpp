// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The streamed kernels of the default mode, for one large grid on GPUs: each lane group (a CUDA
// warp) owns whole hypercubes and streams them through its registers, a few pieces of 32
// elements at a time (core/streamed_lorenzo.hpp), so that a hypercube needs no team scratch and
// no team barrier; a team's groups and the multiprocessor's other teams cover each other's
// waits. The stream is the same as the team kernels' (core/encoder.hpp, core/decoder.hpp).
//
// Compression reads the hypercube twice: once for the block's length (a chunk's head is the OR
// of its folded residuals, so the length needs no transposition), which the look-back
// (core/block_placement.hpp) turns into the block's place, then again to transpose each chunk
// and write its heads and non-zero columns straight into the stream. Reading twice trades load
// instructions and memory traffic for the 16 KB of shared memory a held hypercube takes, which
// is what limited the team kernels' residency. On large grids the second read comes from DRAM
// again (H200, ncu: 2.0 times the input read; the L2 keeps too little of the thousands of
// hypercubes in flight), which bounds compression at (1 + ratio) / (2 + ratio) of the copy
// ceiling; fewer hypercubes in flight, by fewer teams or by groups sharing one, read it once
// but lost more than they saved (docs/PERFORMANCE-HISTORY.md, sixth session of issue #48).
//
// Decompression reads a block's heads once into registers (a lane holds every 32nd), checks
// them against the block length, then expands, transposes and sums each chunk in registers,
// the next chunk's offset a running sum of the heads' column counts.
//
// Needs lane groups that progress independently (a group waits in the look-back for groups
// that may share its team) and hold one item each: LaneOps::groups_progress_independently.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "backends/host_inline.hpp"
#include "backends/kernel_role.hpp"
#include "core/bit_mapping.hpp"
#include "core/block_placement.hpp"
#include "core/border.hpp"
#include "core/chunk_packing.hpp"
#include "core/encoder.hpp"
#include "core/hypercube_access.hpp"
#include "core/stream_status.hpp"
#include "core/streamed_lorenzo.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// Where the streamed kernels replace the team kernels for one grid of `hypercubes`, on a
// device that holds `groups_at_once` lane groups at once (8448 on an H200): by measurement
// (H200, same-call sweeps of every profile at 16 MiB - 1 GiB, the dispatch's build against one
// that streams every grid; docs/PERFORMANCE-HISTORY.md, "Streamed kernels"), GB/s streamed /
// team:
//   compressing 1-D and 2-D float win from 1024 hypercubes (16 MiB: 474 / 356, 363 / 322);
//     3-D float loses at 1000 (296 / 332) and wins from 4096 (669 / 567); double loses at 512
//     (1-D 408 / 432, 2-D 316 / 401, 3-D 253 / 339), ties at about 2000 (200^3 618 / 615) and
//     wins from 8192 (320^3 1006 / 960, 256^3 915 / 894, 1-D 2^27 1055 / 1002);
//   decompressing float loses or ties at 1000-1024 hypercubes (2048^2 470 / 556, 160^3 416 /
//     514, 16 MiB walk 520 / 508) and wins from 4096 (4096^2 1032 / 897, 8192^2 1310 / 1112);
//     1-D and 3-D double tie or lose at 512 (16 MiB walk 460 / 500, 128^3 403 / 460) and win
//     from 1728 (200^3 848 / 707, 64 MiB walk 984 / 775, 256^3 1150 / 829); 2-D double loses
//     at 384 (1024 x 1536: 328 / 348) and wins from 512 (1024 x 2048: 432 / 387; 2048 x 4096
//     976 / 780).
template <class T, int Dims>
constexpr bool streamed_kernels_win(backend::kernel_role role, std::uint64_t hypercubes,
                                    std::uint64_t groups_at_once) {
  if (hypercubes == 0) return false;
  constexpr bool is_float = sizeof(T) == 4;
  if (role == backend::kernel_role::encode)
    return hypercubes >= (is_float && Dims < 3 ? groups_at_once / 16 : groups_at_once / 4);
  return hypercubes >= (is_float ? groups_at_once / 4
                        : Dims == 2 ? groups_at_once / 20
                                    : groups_at_once / 8);
}

template <class T, int Dims, class ExecSpace, class LaneOps>
struct streamed_types {
  using profile_type = profile<T, Dims>;
  using bits_type = typename profile_type::bits_type;
  using lanes_type = typename LaneOps::lanes;
  static constexpr int slots = LaneOps::held_lanes;
  static constexpr int lanes = LaneOps::group_lanes;
  static constexpr int rows = rows_per_lane<profile_type, LaneOps>;  // a chunk's rows per lane
  // Pieces a step takes, their loads in flight together: eight, but four for the 2-D decoder
  // (H200, 8192^2 float: compression 971 GB/s at eight against 796 at four, decompression 1310
  // at four against 1190 at eight).
  static constexpr int encode_step_pieces = 8;
  static constexpr int decode_step_pieces = Dims == 2 ? 4 : 8;
  template <int StepPieces>
  using lorenzo = streamed_lorenzo<profile_type, LaneOps, StepPieces>;
  static constexpr int chunks = profile_type::chunks_per_hypercube;
  static constexpr int pieces = profile_type::hypercube_size / lanes;
  static_assert(LaneOps::groups_progress_independently && LaneOps::groups_per_call == 1);

  // Whether each read of the encoder loads a step's pieces a step ahead, in flight while it
  // works on the step before. Loads ahead take eight registers more: the float encoders get
  // 56 registers and nine teams a multiprocessor (encode_teams_per_multiprocessor). H200:
  // compression 1080 against 1009 GB/s for 8192^2, 1291 against 1263 for 2^27 with both reads
  // loading ahead; 512^3 1084 against 1006 with the first read loading ahead and the second
  // not (both: 961 against 1000, the second read spilling; first only at ten teams, 48
  // registers: 924, spilling); 3-D double at 72 registers 676 against 914, and the first read
  // alone at eight teams spills (774 against 915). The first read, the block length, is the
  // one whose loads miss (ncu: 52 % of its stall samples on its loads, the second's 30 %).
  static constexpr bool first_read_loads_ahead = sizeof(T) == 4;
  static constexpr bool second_read_loads_ahead = sizeof(T) == 4 && Dims < 3;

  // Lane groups per team, and the launch bounds' teams per multiprocessor: float ten, 48
  // registers a thread (H200, 1-D compression 1242 against 1205 GB/s at eight, 2-D 891 against
  // 874), nine for the encoders that load ahead; double eight, 64 registers (five teams, 72-96
  // registers: 1-D compression 1099 and decompression 1108 against 1146 and 1210 at eight,
  // though the double kernels spill there; 3-D double at six, 80 registers without spills:
  // 256^3 832 / 1074 against 915 / 1150 at eight; unbounded, float took 48-72 registers).
  static constexpr int groups_per_team = 4;
  static constexpr int decode_teams_per_multiprocessor =
      LaneOps::vector_length == 1 ? 0 : sizeof(T) == 4 ? 10 : 8;
  static constexpr int encode_teams_per_multiprocessor =
      first_read_loads_ahead && LaneOps::vector_length != 1 ? 9 : decode_teams_per_multiprocessor;
  template <int TeamsPerMultiprocessor>
  using bounded_policy = Kokkos::TeamPolicy<
      ExecSpace, typename LaneOps::schedule,
      Kokkos::LaunchBounds<TeamsPerMultiprocessor == 0 ? 0
                                                       : groups_per_team * LaneOps::vector_length,
                           TeamsPerMultiprocessor>>;
  template <backend::kernel_role Role>
  using team_policy = bounded_policy<Role == backend::kernel_role::encode
                                         ? encode_teams_per_multiprocessor
                                         : decode_teams_per_multiprocessor>;
  // The same member type for both roles: the bounds only reach the launch.
  using member_type = typename team_policy<backend::kernel_role::encode>::member_type;
  static_assert(std::is_same_v<member_type,
                               typename team_policy<backend::kernel_role::decode>::member_type>);

  // Team threads (lane groups) of a team: the host emulation's one thread holds every lane of
  // its one group.
  static constexpr int team_size = LaneOps::vector_length == 1 ? 1 : groups_per_team;

  // A grid's teams: one per team_size hypercubes, then one per border slice.
  static std::size_t teams(const stream_layout<T, Dims>& layout) {
    return (layout.hypercube_count + team_size - 1) / team_size + border_slices(layout);
  }

  // The first team that copies the border.
  KOKKOS_INLINE_FUNCTION static std::size_t border_team(const stream_layout<T, Dims>& layout) {
    return (layout.hypercube_count + team_size - 1) / team_size;
  }

  template <backend::kernel_role Role>
  static team_policy<Role> policy(const ExecSpace& exec, std::size_t teams) {
    return team_policy<Role>(exec, static_cast<int>(teams), team_size, LaneOps::vector_length)
        .set_scratch_size(0, Kokkos::PerTeam(team_size * sizeof(std::uint64_t)));
  }

  // Where lane s's element of each piece lies: position 32 p + l of a hypercube is p * 32 | l,
  // so its grid offset is a lane's part plus a piece's part (grid_placement::relative_offset),
  // and a step's part plus the piece's within the step. A lane forms its pointer once per
  // hypercube, a step adds its part, and a piece its constant one: none to three instructions
  // an access where the whole offset took seven (H200 SASS).
  template <class Bits>
  struct lane_addresses {
    Bits* lane[slots];
    const grid_placement<profile_type>& placement;

    KOKKOS_INLINE_FUNCTION lane_addresses(const lanes_type& held, Bits* values,
                                          const grid_placement<profile_type>& at)
        : placement(at) {
      for (int s = 0; s < slots; ++s) lane[s] = values + at.offset(held.lane(s));
    }

    // Lane s's element of piece p0 + i, p0 a multiple of a step's pieces, i below them.
    KOKKOS_INLINE_FUNCTION Bits& operator()(int s, int p0, int i) const {
      Bits* const step = lane[s] + placement.relative_offset(p0 * lanes);
      return step[placement.relative_offset(i * lanes)];
    }
  };

  // The encoder's lane_addresses, walked a step at a time: each lane's pointer moves on by one
  // step's part after each step. Steps are whole planes (3-D), rows (2-D) or runs (1-D;
  // core/streamed_lorenzo.hpp), so step k's part is k times the first's. One 64-bit add a step
  // where forming the step's part from its index took about a dozen instructions (H200 SASS):
  // 2-D float compression 1017 against 982 GB/s, the other fields within 1 %. The decoder
  // keeps the indexed form: walked, its 2-D float decompression fell from 1340 to 766 GB/s.
  template <class Bits, int StepPieces>
  struct lane_cursor : lane_addresses<Bits> {
    static_assert(StepPieces % lorenzo<StepPieces>::pieces_per_plane == 0);
    std::size_t step_offset;

    KOKKOS_INLINE_FUNCTION lane_cursor(const lanes_type& held, Bits* values,
                                       const grid_placement<profile_type>& at)
        : lane_addresses<Bits>(held, values, at),
          step_offset(at.relative_offset(StepPieces * lanes)) {}

    // Lane s's element of the current step's piece i (below StepPieces).
    KOKKOS_INLINE_FUNCTION Bits& operator()(int s, int i) const {
      return this->lane[s][this->placement.relative_offset(i * lanes)];
    }

    KOKKOS_INLINE_FUNCTION void next_step() {
      for (int s = 0; s < slots; ++s) this->lane[s] += step_offset;
    }
  };

  // Calls chunk(first, c, words) for every chunk first + c of the hypercube at `placement`, in
  // order, a step's chunks with the same first (a multiple of step_chunks) and c below
  // step_chunks, with its folded residuals as the group holds them: words[s][r] is row
  // held.lane(s) + 32 r. LoadsAhead: each step's loads are issued before the step before is
  // transformed (first_read_loads_ahead, second_read_loads_ahead).
  static constexpr int step_chunks = encode_step_pieces / rows;
  template <bool LoadsAhead, class Chunk>
  KOKKOS_INLINE_FUNCTION static void for_each_residual_chunk(
      const lanes_type& held, const bits_type* values,
      const grid_placement<profile_type>& placement, const Chunk& chunk) {
    constexpr int step_pieces = encode_step_pieces;
    lorenzo<step_pieces> transform;
    lane_cursor<const bits_type, step_pieces> element(held, values, placement);
    bits_type loaded[step_pieces][slots];  // a step's values
    const auto load_step = [&]() NDZIP_INLINE_LAMBDA {
      for (int i = 0; i < step_pieces; ++i)
        for (int s = 0; s < slots; ++s) loaded[i][s] = element(s, i);
      element.next_step();
    };
    if constexpr (LoadsAhead) load_step();
    for (int p0 = 0; p0 < pieces; p0 += step_pieces) {
      if constexpr (!LoadsAhead) load_step();
      bits_type v[step_pieces][slots];
      for (int i = 0; i < step_pieces; ++i)
        for (int s = 0; s < slots; ++s) v[i][s] = rotate_left_1(loaded[i][s]);
      if constexpr (LoadsAhead)
        if (p0 + step_pieces < pieces) load_step();
      transform.forward(held, v);
      for (int c = 0; c < step_chunks; ++c) {
        bits_type words[slots][rows];
        for (int s = 0; s < slots; ++s)
          for (int r = 0; r < rows; ++r) words[s][r] = fold(v[c * rows + r][s]);
        chunk(p0 / rows, c, words);
      }
    }
  }
};

// block_placement::exclusive_prefix by a whole lane group: each round reads the published
// words of the 32 blocks before the window's end at once, a lane each, and stops at the nearest
// inclusive prefix among them. One lane walking back a word at a time waited a round trip per
// word, and the first wave of a launch, whose groups reach their look-backs together, walked
// back over thousands of aggregates (H200, 512^3 float: 274 against 784 GB/s compressing).
template <class LaneOps>
KOKKOS_INLINE_FUNCTION std::uint64_t group_exclusive_prefix(const typename LaneOps::lanes& held,
                                                            const block_placement& placement,
                                                            std::uint64_t index,
                                                            std::uint64_t length) {
  constexpr int slots = LaneOps::held_lanes;
  constexpr int lanes = LaneOps::group_lanes;
  if (index == 0)
    return LaneOps::on_first_lane(held, [&]() -> std::uint64_t {
      placement.publish_inclusive_prefix(0, length);
      return 0;
    });
  LaneOps::on_first_lane(held, [&]() -> int {
    placement.publish_aggregate(index, length);
    return 0;
  });
  std::uint64_t before = 0;
  for (std::uint64_t end = index;; end -= lanes) {
    // Lane l reads block end - 1 - l; lanes past block 0 read as an inclusive prefix of 0.
    std::uint64_t value[slots];
    bool inclusive[slots];
    for (int s = 0; s < slots; ++s) {
      const auto lane = static_cast<std::uint64_t>(held.lane(s));
      const std::uint64_t word = lane < end ? placement.published_word(end - 1 - lane) : 0;
      value[s] = block_placement::value_of(word);
      inclusive[s] = lane >= end || block_placement::is_inclusive_prefix(word);
    }
    std::uint32_t found[slots];  // bit 31 - l: lane l read an inclusive prefix
    LaneOps::ballot_reversed(held, inclusive, found);
    // A lane counts unless a lane nearer the index read an inclusive prefix.
    for (int s = 0; s < slots; ++s)
      if (held.lane(s) != 0 && (found[s] >> (lanes - held.lane(s))) != 0) value[s] = 0;
    LaneOps::all_reduce(held, value, [](std::uint64_t a, std::uint64_t b) { return a + b; });
    before += value[0];
    if (found[0] != 0) break;
  }
  LaneOps::on_first_lane(held, [&]() -> int {
    placement.publish_inclusive_prefix(index, before + length);
    return 0;
  });
  return before;
}

// Lane group `held` encodes hypercube `index` into the stream: the first read gives the block
// length, the look-back its place (and the offset-table entry), the second read the block.
template <class T, int Dims, class ExecSpace, class LaneOps, class SizeSink>
KOKKOS_INLINE_FUNCTION void encode_streamed_hypercube(
    const typename LaneOps::lanes& held, const stream_layout<T, Dims>& layout,
    const typename profile<T, Dims>::bits_type* values, std::byte* stream,
    const block_placement& placement, const SizeSink& stream_bytes, std::size_t index) {
  using types = streamed_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename types::bits_type;
  constexpr int slots = types::slots;
  constexpr int rows = types::rows;
  std::size_t origin[Dims];
  layout.hypercube_origin(index, origin);
  const grid_placement<typename types::profile_type> at(layout.grid, origin);

  int columns = 0;
  types::template for_each_residual_chunk<types::first_read_loads_ahead>(
      held, values, at, [&](int, int, bits_type(&words)[slots][rows]) NDZIP_INLINE_LAMBDA {
        bits_type head[slots];
        for (int s = 0; s < slots; ++s) {
          head[s] = 0;
          for (int r = 0; r < rows; ++r) head[s] |= words[s][r];
        }
        LaneOps::reduce_or(held, head);
        columns += LaneOps::popcount(head[0]);
      });

  const std::size_t n = layout.hypercube_count;
  const std::uint64_t length = types::chunks + columns;
  const std::uint64_t begin = group_exclusive_prefix<LaneOps>(held, placement, index, length);
  LaneOps::on_first_lane(held, [&]() -> int {
    const std::uint64_t words = begin;
    auto* table = reinterpret_cast<std::uint32_t*>(stream);
    table[index] = static_cast<std::uint32_t>(words + length);
    // Double streams with an odd hypercube count pad the table with a zero word.
    if (index == 0 && layout.header_bytes() > 4 * n) table[n] = 0;
    if (index + 1 == n) store_stream_size(stream_bytes, layout.stream_bytes(words + length));
    return 0;
  });

  // The heads go out 32 at a time, lane l's the head of chunk l of each 32 (a store by one
  // lane per chunk took the memory pipeline's slots that the columns need); the columns follow
  // the heads, each chunk's after the chunks' before.
  bits_type* const block = reinterpret_cast<bits_type*>(stream + layout.header_bytes()) + begin;
  bits_type* columns_at = block + types::chunks;
  bits_type kept_heads[slots] = {};
  types::template for_each_residual_chunk<types::second_read_loads_ahead>(
      held, values, at,
      [&](int first, int c, bits_type(&words)[slots][rows]) NDZIP_INLINE_LAMBDA {
        constexpr int lanes = types::lanes;
        bits_type heads[slots];
        bits_type* out[slots];
        for (int s = 0; s < slots; ++s) out[s] = columns_at;
        LaneOps::transpose(held, words);
        LaneOps::nonzero_columns(held, words, heads);
        LaneOps::compact(held, words, heads, out);
        // Lane l keeps chunk k's head where k % 32 = l: a test of the lane against the step's
        // first chunk, formed once a step, and a constant (a step's chunks do not pass a
        // multiple of 32).
        static_assert(lanes % types::step_chunks == 0);
        for (int s = 0; s < slots; ++s) {
          if (held.lane(s) - first % lanes == c) kept_heads[s] = heads[s];
          if ((first + c) % lanes == lanes - 1)
            block[first + c - (lanes - 1) + held.lane(s)] = kept_heads[s];
        }
        columns_at += LaneOps::popcount(heads[0]);
      });
}

// Single-pass compression of one grid by the streamed kernel: each team takes a ticket (in
// start order), its groups encode hypercubes ticket * groups .. in full, and teams past the
// last hypercube copy the border once the block area's size is known.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct encode_streamed {
  using types = streamed_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename types::bits_type;
  using member_type = typename types::member_type;

  stream_layout<T, Dims> layout;
  const bits_type* values;
  std::byte* stream;
  block_placement placement;  // a published word per hypercube
  std::uint64_t* stream_bytes;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    std::uint64_t team = 0;
    Kokkos::single(
        Kokkos::PerTeam(member),
        [&](std::uint64_t& ticket) NDZIP_INLINE_LAMBDA { ticket = placement.take_ticket(); }, team);
    const std::size_t n = layout.hypercube_count;
    const std::size_t cube_teams = types::border_team(layout);
    if (team >= cube_teams)
      return copy_border_behind_blocks<LaneOps>(member, layout, values, stream, placement, n,
                                                stream_bytes, team - cube_teams);
    LaneOps::for_each_group(
        member, types::team_size,
        [&](const typename LaneOps::lanes& held, int group) NDZIP_INLINE_LAMBDA {
          const std::size_t index = team * types::team_size + group;
          if (index < n)
            encode_streamed_hypercube<T, Dims, ExecSpace, LaneOps>(held, layout, values, stream,
                                                                   placement, stream_bytes, index);
        });
  }
};

// Lane group `held` decodes hypercube `index` of a stream whose block area holds `area` words
// (checked against the stream's size); returns its failure key (no_stream_failure if none).
template <class T, int Dims, class ExecSpace, class LaneOps>
KOKKOS_INLINE_FUNCTION std::uint64_t decode_streamed_hypercube(
    const typename LaneOps::lanes& held, const stream_layout<T, Dims>& layout,
    const std::byte* stream, typename profile<T, Dims>::bits_type* values, std::size_t index,
    std::uint64_t area) {
  using types = streamed_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename types::bits_type;
  constexpr int slots = types::slots;
  constexpr int rows = types::rows;
  constexpr int lanes = types::lanes;
  constexpr int chunks = types::chunks;
  constexpr int head_rounds = chunks / lanes;  // heads a lane holds

  // The block's two offset-table entries, read once (by one lane) and used from registers.
  const std::uint64_t entries = LaneOps::on_first_lane(held, [&]() -> std::uint64_t {
    const auto* table = reinterpret_cast<const std::uint32_t*>(stream);
    const std::uint64_t end = index + 1 == layout.hypercube_count ? area : table[index];
    return (index == 0 ? std::uint64_t{0} : std::uint64_t{table[index - 1]}) << 32 | end;
  });
  const std::uint64_t begin = entries >> 32, end = entries & 0xffffffffu;
  if (end < begin + chunks) return failure_key(index, stream_failure::block_shorter_than_heads);
  if (end - begin > static_cast<std::uint64_t>(types::profile_type::max_block_words))
    return failure_key(index, stream_failure::block_longer_than_possible);
  if (end > area) return failure_key(index, stream_failure::entry_beyond_last);
  const bits_type* const block =
      reinterpret_cast<const bits_type*>(stream + layout.header_bytes()) + begin;

  // The heads, read once: lane l holds those of chunks l, l + 32, ...; only this copy is
  // checked and used, so every column read stays in the block.
  bits_type heads[head_rounds][slots];
  bits_type columns[slots];
  for (int s = 0; s < slots; ++s) columns[s] = 0;
  for (int j = 0; j < head_rounds; ++j)
    for (int s = 0; s < slots; ++s) {
      heads[j][s] = block[j * lanes + held.lane(s)];
      columns[s] += static_cast<bits_type>(LaneOps::popcount(heads[j][s]));
    }
  LaneOps::all_reduce(held, columns, [](bits_type a, bits_type b) { return a + b; });
  if (static_cast<std::uint64_t>(columns[0]) + chunks != end - begin)
    return failure_key(index, stream_failure::heads_do_not_match_block);

  std::size_t origin[Dims];
  layout.hypercube_origin(index, origin);
  const grid_placement<typename types::profile_type> at(layout.grid, origin);
  constexpr int step_pieces = types::decode_step_pieces, step_chunks = step_pieces / rows;
  typename types::template lorenzo<step_pieces> transform;
  const typename types::template lane_addresses<bits_type> element(held, values, at);
  int offset = 0;  // columns of the chunks before
  for (int j = 0; j < head_rounds; ++j)
    for (int first = j * lanes; first < (j + 1) * lanes; first += step_chunks) {
      // Every chunk's columns loaded before any is transposed, so that the loads are in
      // flight together.
      bits_type words[step_chunks][slots][rows];
      for (int c = 0; c < step_chunks; ++c) {
        bits_type head[slots];
        const bits_type* in[slots];
        LaneOps::broadcast(held, heads[j], (first + c) % lanes, head);
        for (int s = 0; s < slots; ++s) in[s] = block + chunks + offset;
        LaneOps::expand(held, head, in, words[c]);
        offset += LaneOps::popcount(head[0]);
      }
      bits_type v[step_pieces][slots];
      for (int c = 0; c < step_chunks; ++c) {
        LaneOps::transpose(held, words[c]);
        for (int s = 0; s < slots; ++s)
          for (int r = 0; r < rows; ++r) v[c * rows + r][s] = fold(words[c][s][r]);
      }
      const int p0 = first * rows;
      transform.inverse(held, v);
      for (int i = 0; i < step_pieces; ++i)
        for (int s = 0; s < slots; ++s) element(s, p0, i) = rotate_right_1(v[i][s]);
    }
  return no_stream_failure;
}

// The streamed decoder for one grid's stream: each team decodes one hypercube per lane group
// (or copies a border slice) and reports the lowest failure key of its groups to the gatherer,
// whose team count is the launch's.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct decode_streamed {
  using types = streamed_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename types::bits_type;
  using member_type = typename types::member_type;

  stream_layout<T, Dims> layout;
  const std::byte* stream;
  std::size_t stream_size;
  bits_type* values;
  outcome_gatherer gatherer;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const std::size_t team = member.league_rank();
    const std::size_t n = layout.hypercube_count;
    // The last entry, read once for the team, so that the size it notes is the one it checked.
    std::uint64_t area = 0;
    Kokkos::single(
        Kokkos::PerTeam(member),
        [&](std::uint64_t& last) NDZIP_INLINE_LAMBDA {
          last = n == 0 ? 0 : reinterpret_cast<const std::uint32_t*>(stream)[n - 1];
        },
        area);
    const std::uint64_t needed = layout.stream_bytes(area);
    const auto finish = [&](std::uint64_t key) NDZIP_INLINE_LAMBDA {
      Kokkos::single(Kokkos::PerTeam(member), [&]() NDZIP_INLINE_LAMBDA {
        gatherer.finish_team(team, key, needed, stream_size);
      });
    };
    if (needed > stream_size)
      return finish(team == 0 ? failure_key(0, stream_failure::stream_truncated)
                              : no_stream_failure);
    const std::size_t cube_teams = types::border_team(layout);
    if (team >= cube_teams) {
      const auto* block_area = reinterpret_cast<const bits_type*>(stream + layout.header_bytes());
      copy_border_slice<border_direction::stream_to_grid, LaneOps>(
          member, layout, values, const_cast<bits_type*>(block_area + area), team - cube_teams);
      return finish(no_stream_failure);
    }
    const std::size_t key_bytes = types::team_size * sizeof(std::uint64_t);
    auto* keys = static_cast<std::uint64_t*>(member.team_scratch(0).get_shmem(key_bytes));
    LaneOps::for_each_group(
        member, types::team_size,
        [&](const typename LaneOps::lanes& held, int group) NDZIP_INLINE_LAMBDA {
          const std::size_t index = team * types::team_size + group;
          const std::uint64_t key = index < n
                                        ? decode_streamed_hypercube<T, Dims, ExecSpace, LaneOps>(
                                              held, layout, stream, values, index, area)
                                        : no_stream_failure;
          if (held.lane(0) == 0) keys[group] = key;
        });
    member.team_barrier();
    std::uint64_t lowest = no_stream_failure;
    for (int g = 0; g < types::team_size; ++g) lowest = keys[g] < lowest ? keys[g] : lowest;
    finish(lowest);
  }
};

}  // namespace ndzip::core
