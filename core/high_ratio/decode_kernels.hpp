// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The high-ratio decoder's kernels (docs/FORMAT.md, "The high-ratio stream"): the code streams
// decoded into the gray blocks (decode_blocks: a thread per block, its eight streams side by
// side, the host's schedule; decode_streams: a thread per code stream, heads then columns, a
// device's), every gray block turned back into an ndzip block by a team (a thread per chunk on
// a device; one pass over the chunks on the host), and the ndzip blocks placed into an ndzip
// stream. Every length and offset read from the stream
// is checked before it is used; a failure is reported as a key, never by reading past a block.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/high_ratio/block_coding.hpp"
#include "core/high_ratio/encode_kernels.hpp"
#include "core/high_ratio/gray_lanes.hpp"
#include "core/high_ratio/huffman.hpp"
#include "core/high_ratio/stream_kernels.hpp"

namespace ndzip::core::high_ratio {

// Why a block failed to decode (the low bits of a failure key; the block index above them).
enum class block_failure : std::uint64_t {
  table = 1,       // its end before its start, or past the coded area
  code = 2,        // bits that start no code, or a code running past the block's end
  leftover = 3,    // bytes or non-zero padding after its last code
  stored_size = 4  // a stored block whose length is not what its heads announce
};

// Where a coded block's stream s lies, from the lengths in front of its streams; false if they
// do not fit the block.
struct stream_range {
  std::uint64_t begin = 0, end = 0;
};
KOKKOS_INLINE_FUNCTION bool locate_stream(const std::byte* block, std::uint64_t block_bytes, int s,
                                          stream_range& range) {
  if (block_bytes < stream_lengths_bytes) return false;
  std::uint64_t at = stream_lengths_bytes;
  for (int t = 0; t < streams_per_block; ++t) {
    const std::uint64_t length =
        t < streams_per_block - 1
            ? static_cast<std::uint64_t>(static_cast<unsigned>(block[2 * t])) |
                  static_cast<std::uint64_t>(static_cast<unsigned>(block[2 * t + 1])) << 8
            : (at <= block_bytes ? block_bytes - at : 0);
    if (at + length > block_bytes) return false;
    if (t == s) {
      range.begin = at;
      range.end = at + length;
    }
    at += length;
  }
  return true;
}

// Where block i lies in the coded area, from its table entry and the one before; `valid` is
// false for an end before its start or past the area, or a last block that does not end it
// (no bytes may lie unread behind it).
struct block_location {
  const std::byte* at = nullptr;
  std::uint64_t bytes = 0;
  bool stored = false;
  bool valid = false;
};
KOKKOS_INLINE_FUNCTION block_location locate_block(const std::byte* table, std::size_t blocks,
                                                   const std::byte* area, std::uint64_t area_bytes,
                                                   std::size_t i) {
  const std::uint64_t end_entry = load_u64(table + 8 * i);
  const std::uint64_t begin = i == 0 ? 0 : load_u64(table + 8 * (i - 1)) & ~stored_flag;
  const std::uint64_t end = end_entry & ~stored_flag;
  block_location where;
  where.valid = !(end < begin || end > area_bytes || (i + 1 == blocks && end != area_bytes));
  if (where.valid) {
    where.at = area + begin;
    where.bytes = end - begin;
    where.stored = (end_entry & stored_flag) != 0;
  }
  return where;
}

// A stored block holds its heads and at most a whole block.
template <class Bits, int Chunks, int SlotWords>
KOKKOS_INLINE_FUNCTION bool stored_size_possible(std::uint64_t bytes) {
  return bytes >= Chunks * sizeof(Bits) && bytes <= SlotWords * sizeof(Bits);
}

// The words of a gray (or ndzip) block whose heads are `heads`.
template <class Bits, int Chunks>
KOKKOS_INLINE_FUNCTION std::uint64_t block_words(const Bits* heads) {
  std::uint64_t n = Chunks;
  for (int k = 0; k < Chunks; ++k) n += popcount(heads[k]);
  return n;
}

// What the decoders have in common: where read_header found each grid's block table and coded
// area, and where failures go, as a key per grid (its block index * 8 + why; the lowest wins).
template <class T, int Dims, class Bits, int SlotWords>
struct decoder_inputs {
  pipeline<T, Dims> p;
  const std::uint16_t* decoder;  // table_count * decoder_table_size entries per grid
  Bits* slots;

  // Block i (of all grids) as its decoder sees it.
  struct block {
    std::size_t grid;
    std::uint64_t local;  // its index in its grid
    pipeline_state* state;
    const std::uint16_t* tables;

    // Whether there are blocks to decode: a coded stream whose header and tables passed.
    KOKKOS_INLINE_FUNCTION bool active() const { return blocks_decoded(*state); }
    KOKKOS_INLINE_FUNCTION void fail(block_failure why) const {
      Kokkos::atomic_fetch_min(&state->block_failure, local * 8 + static_cast<std::uint64_t>(why));
    }
    KOKKOS_INLINE_FUNCTION unsigned next(bit_reader& reader, int t) const {
      return reader.next(tables + static_cast<std::size_t>(t) * decoder_table_size);
    }
  };

  KOKKOS_INLINE_FUNCTION block at(std::size_t i) const {
    const std::size_t g = p.grid_of(i);
    return {g, i - p.grids[g].first_block, &p.states[g],
            decoder + g * static_cast<std::size_t>(table_count<Bits>) * decoder_table_size};
  }
  KOKKOS_INLINE_FUNCTION block_location locate(const block& b) const {
    const std::byte* table = p.items[b.grid].stream + b.state->header_bytes;
    const std::uint64_t blocks = p.grids[b.grid].blocks();
    return locate_block(table, blocks, table + 8 * blocks, b.state->area, b.local);
  }
  KOKKOS_INLINE_FUNCTION Bits* slot(std::size_t i) const {
    return slots + i * static_cast<std::size_t>(SlotWords);
  }
};

// Every block decoded by one thread (the host's decoder) into the gray block's bytes in its slot:
// its eight code streams read side by side, symbol k from stream k mod S, which keeps eight
// independent decodes in flight.
template <class T, int Dims, class Bits, int Chunks, int SlotWords>
struct decode_blocks {
  decoder_inputs<T, Dims, Bits, SlotWords> in;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    constexpr int u = static_cast<int>(sizeof(Bits));
    const auto b = in.at(i);
    if (!b.active()) return;
    const block_location where = in.locate(b);
    Bits* gray = in.slot(i);
    auto* bytes = reinterpret_cast<unsigned char*>(gray);
    if (!where.valid) return b.fail(block_failure::table);
    if (where.stored) {
      if (!stored_size_possible<Bits, Chunks, SlotWords>(where.bytes))
        return b.fail(block_failure::stored_size);
      for (std::uint64_t k = 0; k < where.bytes; ++k)
        bytes[k] = static_cast<unsigned char>(where.at[k]);
      // The heads announce the length: exactly the block's.
      if (block_words<Bits, Chunks>(gray) * sizeof(Bits) != where.bytes)
        b.fail(block_failure::stored_size);
      return;
    }
    bit_reader readers[streams_per_block];
    for (int s = 0; s < streams_per_block; ++s) {
      stream_range range;
      if (!locate_stream(where.at, where.bytes, s, range)) return b.fail(block_failure::table);
      readers[s] = bit_reader(where.at + range.begin, where.at + range.end);
    }
    for (int w = 0; w < Chunks; ++w)
      for_each_byte<Bits>(w, [&](int s, int j) {
        bytes[w * u + j] = static_cast<unsigned char>(b.next(readers[s], j));
      });
    int w = Chunks;
    for (int c = 0; c < Chunks; ++c) {
      const int columns = popcount(gray[c]);
      for (int rank = 0; rank < columns; ++rank, ++w) {
        const int t = column_table<Bits>(rank);
        for_each_byte<Bits>(w, [&](int s, int j) {
          bytes[w * u + j] = static_cast<unsigned char>(b.next(readers[s], t));
        });
      }
    }
    bool code = false, leftover = false;
    for (int s = 0; s < streams_per_block; ++s) {
      code = code || readers[s].failed;
      leftover = leftover || !readers[s].at_end();
    }
    if (code)
      b.fail(block_failure::code);
    else if (leftover)
      b.fail(block_failure::leftover);
  }
};

// What the decoder of one stream keeps between the heads and the columns.
struct stream_state {
  std::uint64_t pending;
  std::uint64_t at;  // bytes of the stream read
  std::int64_t bits;
};

// Every code stream decoded by a thread of its own (a device's decoder: eight threads per
// block), in two steps: its head symbols, then, once all heads of the block are known, its
// column symbols, into the gray block's bytes in its slot; a stored block copied there by its
// stream threads. The same failures as decode_blocks.
template <class T, int Dims, class Bits, int Chunks, int SlotWords>
struct decode_streams {
  decoder_inputs<T, Dims, Bits, SlotWords> in;
  stream_state* states;
  bool columns;  // false: the heads step, true: the columns step

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t index) const {
    const std::size_t i = index / streams_per_block;
    const int s = static_cast<int>(index % streams_per_block);
    const auto b = in.at(i);
    if (!b.active()) return;
    const block_location where = in.locate(b);
    Bits* gray = in.slot(i);
    auto* bytes = reinterpret_cast<unsigned char*>(gray);
    // Stream 0 reports what concerns the whole block, in the heads step.
    const bool reports = s == 0 && !columns;
    if (!where.valid) {
      if (reports) b.fail(block_failure::table);
      return;
    }
    if (where.stored) {
      if (!stored_size_possible<Bits, Chunks, SlotWords>(where.bytes)) {
        if (reports) b.fail(block_failure::stored_size);
        return;
      }
      if (!columns) {
        for (std::uint64_t k = static_cast<std::uint64_t>(s); k < where.bytes;
             k += streams_per_block)
          bytes[k] = static_cast<unsigned char>(where.at[k]);
      } else if (s == 0 && block_words<Bits, Chunks>(gray) * sizeof(Bits) != where.bytes) {
        b.fail(block_failure::stored_size);
      }
      return;
    }
    stream_range range;
    if (!locate_stream(where.at, where.bytes, s, range)) {
      if (reports) b.fail(block_failure::table);
      return;
    }
    bit_reader reader(where.at + range.begin, where.at + range.end);
    stream_state& state = states[index];
    const auto symbol = [&](int k, int t) {
      bytes[k] = static_cast<unsigned char>(b.next(reader, t));
    };
    if (!columns) {
      for_each_head_symbol<Bits, Chunks>(s, symbol);
      if (reader.failed) b.fail(block_failure::code);
      state = {reader.pending, static_cast<std::uint64_t>(reader.at - (where.at + range.begin)),
               reader.failed ? -1 : reader.bits};
      return;
    }
    if (state.bits < 0) return;  // reported by the heads step
    reader.pending = state.pending;
    reader.at = where.at + range.begin + state.at;
    reader.bits = static_cast<int>(state.bits);
    int decoded = 0;
    for_each_column_symbol<Bits, Chunks>(gray, s, [&](int k, int t) {
      if (decoded++ % bit_reader::codes_per_refill == 0) reader.refill();
      bytes[k] = static_cast<unsigned char>(
          reader.decode(b.tables + static_cast<std::size_t>(t) * decoder_table_size));
    });
    if (reader.failed)
      b.fail(block_failure::code);
    else if (!reader.at_end())
      b.fail(block_failure::leftover);
  }
};

// Gray blocks back into ndzip blocks: slot i of `gray` into slot i of `out`, its length in words
// into words[i]. LaneOps void: the host's schedule, a one-thread team that takes the chunks in
// order in one pass; otherwise a team of lane groups, a chunk per group (gray_lanes.hpp), which
// finds its chunk's ndzip head first and its columns' places after a scan of all heads.
template <class T, int Dims, class Bits, int Chunks, int SlotWords, class ExecSpace, class LaneOps>
struct ungray_blocks {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  static constexpr bool lanes = !std::is_void_v<LaneOps>;
  static constexpr std::size_t scratch_bytes = Chunks * sizeof(Bits) + 2 * Chunks * sizeof(int);
  pipeline<T, Dims> p;
  const Bits* gray;
  Bits* out;
  std::uint64_t* words;

  static policy make_policy(const ExecSpace& exec, std::size_t blocks) {
    return lane_block_policy<ExecSpace, LaneOps, Bits>(exec, blocks, scratch_bytes);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename policy::member_type& member) const {
    const std::size_t i = member.league_rank();
    if (!blocks_decoded(p.states[p.grid_of(i)])) return;
    const Bits* in = gray + i * static_cast<std::size_t>(SlotWords);
    Bits* to = out + i * static_cast<std::size_t>(SlotWords);
    if constexpr (!lanes) {
      const Bits* next = in + Chunks;
      Bits* column = to + Chunks;
      for (int c = 0; c < Chunks; ++c)
        to[c] = ungray_chunk(
            in[c], [&]() { return *next++; }, [&](int, Bits value) { *column++ = value; });
      words[i] = static_cast<std::uint64_t>(column - to);
    } else {
      using profile_type = profile<T, Dims>;
      static_assert(profile_type::chunks_per_hypercube == Chunks);
      const std::size_t bytes_of_scratch = scratch_bytes;
      auto* heads = static_cast<Bits*>(member.team_scratch(0).get_shmem(bytes_of_scratch));
      const int total = turn_block<profile_type, LaneOps>(
          member, in, to, heads, reinterpret_cast<int*>(heads + Chunks),
          [](const auto& held, auto& columns) { ungray_columns<LaneOps>(held, columns); },
          [](const auto&, const auto&, const auto&) {});
      Kokkos::parallel_for(Kokkos::TeamVectorRange(member, Chunks),
                           [&](int c) { to[c] = heads[c]; });
      Kokkos::single(Kokkos::PerTeam(member), [&]() { words[i] = Chunks + total; });
    }
  }
};

// Places every grid's decoded blocks into its two ndzip streams: their offset tables (and
// padding words) and the blocks behind them. One scan over all blocks; a grid's main blocks are
// placed from the end before its first block, its border blocks from the end before its first
// border block. Nothing for a grid whose blocks were not decoded (a stored stream, a damaged
// header): its blocks count no words, so that the other grids' places stay right.
template <class T, int Dims, class Bits, int SlotWords, class ExecSpace>
void place_blocks(const ExecSpace& exec, const pipeline<T, Dims>& p, const Bits* slots,
                  const std::uint64_t* words, std::uint64_t* ends, std::size_t blocks) {
  if (blocks == 0) return;
  Kokkos::parallel_scan(
      "ndzip::high_ratio::scan_block_words",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
          exec, 0, static_cast<std::int64_t>(blocks)),
      KOKKOS_LAMBDA(std::int64_t i, std::uint64_t & sum, bool final) {
        if (blocks_decoded(p.states[p.grid_of(i)])) sum += words[i];
        if (final) ends[i] = sum;
      });
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      "ndzip::high_ratio::place_blocks", policy(exec, static_cast<int>(blocks), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename policy::member_type& member) {
        const std::uint64_t i = member.league_rank();
        const std::size_t g = p.grid_of(i);
        pipeline_state& state = p.states[g];
        if (!blocks_decoded(state)) return;
        const grid_plan<T, Dims>& grid = p.grids[g];
        const std::uint64_t border_first = grid.first_block + grid.main_blocks;
        const bool in_main = i < border_first;
        std::byte* const stream = in_main ? grid.main : grid.border_stream;
        const std::uint64_t header_bytes =
            in_main ? grid.layout.header_bytes() : grid.border_header;
        const std::uint64_t first = in_main ? grid.first_block : border_first;
        const std::uint64_t count = in_main ? grid.main_blocks : grid.border_blocks;
        const std::uint64_t base = end_before(ends, first);
        const std::uint64_t k = i - first;  // the block's index in its stream
        const std::uint64_t begin = end_before(ends, i) - base, end = ends[i] - base;
        const Bits* from = slots + i * static_cast<std::size_t>(SlotWords);
        Bits* to = reinterpret_cast<Bits*>(stream + header_bytes) + begin;
        Kokkos::single(Kokkos::PerTeam(member), [&]() {
          reinterpret_cast<std::uint32_t*>(stream)[k] = static_cast<std::uint32_t>(end);
          if (k + 1 == count) {
            (in_main ? state.main_words : state.border_words) = end;
            if (header_bytes > 4 * count) reinterpret_cast<std::uint32_t*>(stream)[count] = 0;
          }
        });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(member, static_cast<int>(end - begin)),
                             [&](int j) { to[j] = from[j]; });
      });
}

}  // namespace ndzip::core::high_ratio
