// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The high-ratio encoder's kernels (docs/FORMAT.md, "The high-ratio stream"): a team per block,
// a thread per chunk (host teams are one thread). A block's symbols fall into units, the bytes
// of one chunk's head and the bytes of one chunk's gray columns; a unit's symbols of one code
// stream are consecutive in that stream, so once a team has scanned its units' bit counts per
// stream, every thread writes its units' codes independently. The kernels:
//   gray_and_count: the gray block into its slot, its bytes counted per code table;
//   size_block_streams: every code stream's coded bytes and the block's size (coded or stored);
//   write_block_streams: the block into the coded area, staged in team scratch.
// On the host (a one-thread team), gray_and_count takes the chunks in order in one pass, and
// write_blocks writes a block's eight streams side by side instead of write_block_streams.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "backends/scratch_atomics.hpp"
#include "core/chunk_packing.hpp"
#include "core/high_ratio/block_coding.hpp"
#include "core/high_ratio/gray_lanes.hpp"
#include "core/high_ratio/huffman.hpp"
#include "core/high_ratio/stream_kernels.hpp"

namespace ndzip::core::high_ratio {

// How many threads a team of the per-block kernels has: one per chunk on a device, one on the
// host.
template <class ExecSpace, int Chunks>
inline constexpr int block_team_size =
    Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible ? 1 : Chunks;

// Adds to a counter in team scratch: a plain add in a one-thread team (an atomic one costs a
// locked instruction per symbol on the host).
template <class ExecSpace, int TeamSize>
KOKKOS_INLINE_FUNCTION void team_add(std::uint32_t* at, std::uint32_t value) {
  if constexpr (TeamSize == 1)
    *at += value;
  else
    backend::scratch_atomics<ExecSpace>::add(at, value);
}

// Byte j of word w of a gray block is symbol w * U + j, of stream (w * U + j) mod S: calls
// symbol(stream, j) for j = 0 .. U-1 with the stream a constant after unrolling (so that
// per-stream accumulators stay in registers).
template <class Bits, class Symbol>
KOKKOS_INLINE_FUNCTION void for_each_byte(int w, const Symbol& symbol) {
  constexpr int u = static_cast<int>(sizeof(Bits));
  static_assert(u == 4 || u == 8, "words of 4 or 8 bytes");
  static_assert(streams_per_block == 8, "a word's bytes fall into one half of the streams or all");
  if constexpr (u == 8) {
    for (int j = 0; j < u; ++j) symbol(j, j);
  } else if (w % 2 == 0) {
    for (int j = 0; j < u; ++j) symbol(j, j);
  } else {
    for (int j = 0; j < u; ++j) symbol(u + j, j);
  }
}

template <class Bits>
KOKKOS_INLINE_FUNCTION unsigned byte_of(Bits word, int j) {
  return static_cast<unsigned>(word >> (8 * j)) & 0xffu;
}

// Calls symbol(stream, table, byte) for the symbols of unit `unit` of a gray block in order:
// units 0 .. H-1 are the heads, unit H + c the gray columns of chunk c, which start at word
// H + column_start.
template <class Bits, int Chunks, class Symbol>
KOKKOS_INLINE_FUNCTION void for_each_unit_symbol(const Bits* gray, int unit, int column_start,
                                                 const Symbol& symbol) {
  if (unit < Chunks) {
    const Bits head = gray[unit];
    for_each_byte<Bits>(unit, [&](int s, int j) { symbol(s, j, byte_of(head, j)); });
    return;
  }
  const int columns = popcount(gray[unit - Chunks]);
  for (int rank = 0; rank < columns; ++rank) {
    const int w = Chunks + column_start + rank;
    const Bits column = gray[w];
    const int table = column_table<Bits>(rank);
    for_each_byte<Bits>(w, [&](int s, int j) { symbol(s, table, byte_of(column, j)); });
  }
}

// start[c] = the words of the columns of chunks 0 .. c-1 of a block whose heads are `heads`.
template <class Member, class Bits>
KOKKOS_INLINE_FUNCTION void scan_column_starts(const Member& member, const Bits* heads, int chunks,
                                               std::uint32_t* start) {
  Kokkos::parallel_scan(Kokkos::TeamThreadRange(member, chunks),
                        [&](int c, std::uint32_t& sum, bool final) {
                          const auto n = static_cast<std::uint32_t>(popcount(heads[c]));
                          if (final) start[c] = sum;
                          sum += n;
                        });
}

// Every block's gray form into its slot (SlotWords words apart), its length in words into
// words[i], its bytes counted per code table into `counts`: in team scratch first (thousands of
// threads adding to a few global counters one byte at a time waited on each other for
// milliseconds), then added to `counts`. LaneOps void: the host's schedule, a one-thread team
// that takes the chunks in order in one pass; otherwise a team of lane groups, a chunk per
// group (gray_lanes.hpp), which finds its chunk's gray head first and its columns' places
// after a scan of all heads.
template <class T, int Dims, class Bits, int Chunks, int SlotWords, class ExecSpace, class LaneOps>
struct gray_and_count {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  static constexpr bool lanes = !std::is_void_v<LaneOps>;
  static constexpr int bins = table_count<Bits> * alphabet;
  static constexpr std::size_t scratch_bytes =
      bins * sizeof(std::uint32_t) + Chunks * sizeof(Bits) + 2 * Chunks * sizeof(int);
  pipeline<T, Dims> p;
  Bits* slots;
  std::uint64_t* words;
  std::uint64_t* counts;  // bins per grid

  static policy make_policy(const ExecSpace& exec, std::size_t blocks) {
    return lane_block_policy<ExecSpace, LaneOps, Bits>(exec, blocks, scratch_bytes);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename policy::member_type& member) const {
    const std::size_t bytes_of_scratch = scratch_bytes;
    auto* hist = static_cast<std::uint32_t*>(member.team_scratch(0).get_shmem(bytes_of_scratch));
    const std::size_t i = member.league_rank();
    const std::size_t g = p.grid_of(i);
    const Bits* block = p.grids[g].source_block(i - p.grids[g].first_block);
    Bits* gray = slots + i * static_cast<std::size_t>(SlotWords);
    Kokkos::parallel_for(Kokkos::TeamVectorRange(member, int{bins}), [&](int k) { hist[k] = 0; });
    member.team_barrier();
    const auto add = [&](int table, unsigned byte) {
      std::uint32_t* bin = &hist[table * alphabet + byte];
      if constexpr (lanes_run_alone<LaneOps>)
        backend::scratch_atomics<ExecSpace>::add(bin, 1u);
      else
        ++*bin;
    };
    // A column's bytes, all from one table; a head's byte j from table j.
    const auto count = [&](int table, Bits word) {
      for (int j = 0; j < static_cast<int>(sizeof(Bits)); ++j) add(table, byte_of(word, j));
    };
    const auto count_head = [&](Bits head) {
      for (int j = 0; j < static_cast<int>(sizeof(Bits)); ++j) add(j, byte_of(head, j));
    };
    if constexpr (!lanes) {
      const Bits* columns = block + Chunks;
      Bits* to = gray + Chunks;
      for (int c = 0; c < Chunks; ++c) {
        int rank = 0;
        gray[c] = gray_chunk(block[c], columns, [&](int, Bits column) {
          to[rank] = column;
          count(column_table<Bits>(rank++), column);
        });
        count_head(gray[c]);
        to += rank;
        columns += popcount(block[c]);
      }
      words[i] = static_cast<std::uint64_t>(to - gray);
    } else {
      auto* heads = reinterpret_cast<Bits*>(hist + bins);
      using profile_type = profile<T, Dims>;
      static_assert(profile_type::chunks_per_hypercube == Chunks);
      const int total = turn_block<profile_type, LaneOps>(
          member, block, gray, heads, reinterpret_cast<int*>(heads + Chunks),
          [](const auto& held, auto& columns) { gray_columns<LaneOps>(held, columns); },
          [&](const auto& held, const auto& columns, const auto& gray_heads) {
            for (int s = 0; s < LaneOps::held_lanes; ++s)
              for (int h = 0; h < columns_per_lane<LaneOps, Bits>; ++h)
                if (columns[s][h] != 0)
                  count(column_table<Bits>(
                            columns_before(gray_heads[s], held.lane(s) + LaneOps::group_lanes * h)),
                        columns[s][h]);
          });
      Kokkos::parallel_for(Kokkos::TeamVectorRange(member, Chunks), [&](int c) {
        gray[c] = heads[c];
        count_head(heads[c]);
      });
      Kokkos::single(Kokkos::PerTeam(member), [&]() { words[i] = Chunks + total; });
    }
    member.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamVectorRange(member, int{bins}), [&](int k) {
      if (hist[k] != 0)
        Kokkos::atomic_add(&counts[g * bins + k], static_cast<std::uint64_t>(hist[k]));
    });
  }
};

// The bits of each code stream among a unit's symbols; a stream's bits in a block stay below
// 2^16 (at most max_block_words * U / S symbols of 12 bits), so four streams pack into a word.
struct packed_stream_bits {
  std::uint64_t low = 0, high = 0;  // streams 0-3 and 4-7, 16 bits each

  KOKKOS_INLINE_FUNCTION std::uint32_t get(int s) const {
    return static_cast<std::uint32_t>(((s < 4 ? low : high) >> (16 * (s % 4))) & 0xffffu);
  }
};

template <class Bits, int Chunks>
KOKKOS_INLINE_FUNCTION packed_stream_bits unit_stream_bits(const Bits* gray, int unit,
                                                           int column_start,
                                                           const std::uint32_t* encoder) {
  std::uint32_t bits[streams_per_block] = {};
  for_each_unit_symbol<Bits, Chunks>(gray, unit, column_start, [&](int s, int table, unsigned b) {
    bits[s] += encoder[table * alphabet + b] >> 16;
  });
  packed_stream_bits packed;
  for (int s = 0; s < 4; ++s) {
    packed.low |= static_cast<std::uint64_t>(bits[s]) << (16 * s);
    packed.high |= static_cast<std::uint64_t>(bits[4 + s]) << (16 * s);
  }
  return packed;
}

// Each code stream's coded bytes (index i * S + s) and each block's bytes, coded (its streams
// and their lengths) or stored, the shorter (stored_flag on the latter); if unit_bits is not
// null, every unit's bits per stream there too (2H per block, for write_block_streams).
template <class Bits, int Chunks, int SlotWords, class ExecSpace>
struct size_block_streams {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  static constexpr int team_size = block_team_size<ExecSpace, Chunks>;
  static constexpr std::size_t scratch_bytes = (Chunks + streams_per_block) * sizeof(std::uint32_t);
  static_assert(SlotWords * sizeof(Bits) / streams_per_block * max_code_length < (1u << 16),
                "a stream's bits in a block fit 16 bits");
  const Bits* slots;
  const std::uint64_t* words;
  const std::uint32_t* encoder;  // table_count * alphabet entries per grid
  const std::uint32_t* block_grid;
  std::uint64_t* stream_bytes;
  std::uint64_t* sizes;
  packed_stream_bits* unit_bits;

  static policy make_policy(const ExecSpace& exec, std::size_t blocks) {
    return policy(exec, static_cast<int>(blocks), team_size)
        .set_scratch_size(0, Kokkos::PerTeam(scratch_bytes));
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename policy::member_type& member) const {
    const std::size_t bytes_of_scratch = scratch_bytes;
    auto* start = static_cast<std::uint32_t*>(member.team_scratch(0).get_shmem(bytes_of_scratch));
    std::uint32_t* total = start + Chunks;
    const std::size_t i = member.league_rank();
    const Bits* gray = slots + i * static_cast<std::size_t>(SlotWords);
    const std::uint32_t* codes =
        encoder + static_cast<std::size_t>(block_grid[i]) * table_count<Bits> * alphabet;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, streams_per_block),
                         [&](int s) { total[s] = 0; });
    scan_column_starts(member, gray, Chunks, start);
    member.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, 2 * Chunks), [&](int unit) {
      const packed_stream_bits bits = unit_stream_bits<Bits, Chunks>(
          gray, unit, unit < Chunks ? 0 : static_cast<int>(start[unit - Chunks]), codes);
      if (unit_bits) unit_bits[i * 2 * Chunks + unit] = bits;
      for (int s = 0; s < streams_per_block; ++s)
        if (bits.get(s) != 0) team_add<ExecSpace, team_size>(&total[s], bits.get(s));
    });
    member.team_barrier();
    Kokkos::single(Kokkos::PerTeam(member), [&]() {
      std::uint64_t coded = stream_lengths_bytes;
      for (int s = 0; s < streams_per_block; ++s) {
        const std::uint64_t bytes = (total[s] + 7) / 8;
        stream_bytes[i * streams_per_block + s] = bytes;
        coded += bytes;
      }
      const std::uint64_t stored = words[i] * sizeof(Bits);
      sizes[i] = coded < stored ? coded : stored | stored_flag;
    });
  }
};

// Where block i's grid writes its block table and coded area, which plan_stream decided (nothing
// is written unless that stream is coded), and the block's place among its grid's.
template <class T, int Dims>
struct block_place {
  std::byte* table = nullptr;                    // null: the stream is not coded
  std::uint64_t local = 0;                       // the block's index in its grid
  std::uint64_t begin = 0, end = 0, stored = 0;  // in the coded area; stored_flag or 0
  std::size_t grid = 0;

  KOKKOS_INLINE_FUNCTION block_place(const pipeline<T, Dims>& p, const std::uint64_t* ends,
                                     std::uint64_t i) {
    grid = p.grid_of(i);
    const grid_plan<T, Dims>& plan = p.grids[grid];
    const pipeline_state& state = p.states[grid];
    if (state.coding != stream_coding::coded) return;
    table = p.items[grid].stream + state.header_bytes;
    local = i - plan.first_block;
    const std::uint64_t base = end_before(ends, plan.first_block);
    begin = end_before(ends, i) - base;
    end = (ends[i] & ~stored_flag) - base;
    stored = ends[i] & stored_flag;
    area = table + 8 * plan.blocks();
  }
  KOKKOS_INLINE_FUNCTION bool coded() const { return table != nullptr; }
  // Its table entry: its end in the coded area, flagged if stored.
  KOKKOS_INLINE_FUNCTION void write_entry() const { store_u64(table + 8 * local, end | stored); }
  KOKKOS_INLINE_FUNCTION std::byte* out() const { return area + begin; }

 private:
  std::byte* area = nullptr;
};

// Writes block i into the coded area and its table entry into the block table, a thread per
// block (the host's schedule): a stored block's gray words as they are; a coded block's stream
// lengths, then its symbols in order, symbol k into stream k mod S.
template <class T, int Dims, class Bits, int Chunks, int SlotWords>
struct write_blocks {
  pipeline<T, Dims> p;
  const Bits* slots;
  const std::uint32_t* encoder;  // per grid
  const std::uint64_t* stream_bytes;
  const std::uint64_t* ends;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    const block_place<T, Dims> place(p, ends, i);
    if (!place.coded()) return;
    place.write_entry();
    const std::uint64_t block_bytes = place.end - place.begin;
    const Bits* gray = slots + i * static_cast<std::size_t>(SlotWords);
    const std::uint32_t* codes =
        encoder + place.grid * static_cast<std::size_t>(table_count<Bits>) * alphabet;
    std::byte* out = place.out();
    if (place.stored) {
      const auto* bytes = reinterpret_cast<const std::byte*>(gray);
      for (std::uint64_t k = 0; k < block_bytes; ++k) out[k] = bytes[k];
      return;
    }
    const std::uint64_t* lengths = stream_bytes + i * streams_per_block;
    bit_writer writers[streams_per_block];
    std::uint64_t at = stream_lengths_bytes;
    for (int s = 0; s < streams_per_block; ++s) {
      if (s < streams_per_block - 1) {
        out[2 * s] = static_cast<std::byte>(lengths[s] & 0xffu);
        out[2 * s + 1] = static_cast<std::byte>(lengths[s] >> 8);
      }
      writers[s] = bit_writer(out + at);
      at += lengths[s];
    }
    for (int w = 0; w < Chunks; ++w)
      for_each_byte<Bits>(
          w, [&](int s, int j) { writers[s].put(codes[j * alphabet + byte_of(gray[w], j)]); });
    int w = Chunks;
    for (int c = 0; c < Chunks; ++c) {
      const int columns = popcount(gray[c]);
      for (int rank = 0; rank < columns; ++rank, ++w) {
        const int t = column_table<Bits>(rank);
        for_each_byte<Bits>(
            w, [&](int s, int j) { writers[s].put(codes[t * alphabet + byte_of(gray[w], j)]); });
      }
    }
    for (int s = 0; s < streams_per_block; ++s) writers[s].finish();
  }
};

// The same with a team per block, a thread per chunk (a device's schedule): a stored block's
// gray words as they are; a coded block's stream lengths and streams staged in team scratch
// (codes ORed into 32-bit words, little-endian: bit p of the block is bit p % 8 of its byte
// p / 8), then copied out.
template <class T, int Dims, class Bits, int Chunks, int SlotWords, class ExecSpace>
struct write_block_streams {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  static constexpr int team_size = block_team_size<ExecSpace, Chunks>;
  static constexpr int staging_words = SlotWords * static_cast<int>(sizeof(Bits)) / 4;
  static constexpr std::size_t scratch_bytes = staging_words * sizeof(std::uint32_t) +
                                               Chunks * sizeof(std::uint32_t) +
                                               4 * (2 * Chunks) * sizeof(std::uint64_t);
  // The unit counts behind the staged words and the column starts stay 8-byte aligned.
  static_assert((staging_words + Chunks) % 2 == 0);
  pipeline<T, Dims> p;
  const Bits* slots;
  const std::uint32_t* encoder;  // per grid
  const std::uint64_t* stream_bytes;
  const std::uint64_t* ends;
  const packed_stream_bits* sized_units;  // size_block_streams' unit_bits, or null: count again

  static policy make_policy(const ExecSpace& exec, std::size_t blocks) {
    return policy(exec, static_cast<int>(blocks), team_size)
        .set_scratch_size(0, Kokkos::PerTeam(scratch_bytes));
  }

  // One code stream's codes of one unit, gathered in a register and written into the staged
  // block a whole 32-bit word at a time. Only a unit's first word (where it starts inside it)
  // and its last may hold its neighbours' bits too: those take an atomic OR, the words between
  // a plain store (an atomic per word, through a generic address, took a third of the
  // kernel's instructions).
  struct staged_bits {
    std::uint64_t pending = 0;  // from bit 0 of staging word `word` on
    std::uint32_t word = 0;
    std::uint32_t fill = 0;
    bool shared = false;  // whether staging word `word` may hold bits of the unit before

    KOKKOS_INLINE_FUNCTION void start(std::uint32_t at) {
      pending = 0;
      word = at / 32;
      fill = at % 32;
      shared = fill != 0;
    }
    KOKKOS_INLINE_FUNCTION void put(std::uint32_t* staging, std::uint32_t entry) {
      pending |= static_cast<std::uint64_t>(entry & 0xffffu) << fill;
      fill += entry >> 16;
      if (fill >= 32) {
        if (shared)
          team_add_or(&staging[word], static_cast<std::uint32_t>(pending));
        else
          staging[word] = static_cast<std::uint32_t>(pending);
        shared = false;
        ++word;
        pending >>= 32;
        fill -= 32;
      }
    }
    KOKKOS_INLINE_FUNCTION void finish(std::uint32_t* staging) const {
      if (pending != 0) team_add_or(&staging[word], static_cast<std::uint32_t>(pending));
    }
  };
  KOKKOS_INLINE_FUNCTION static void team_add_or(std::uint32_t* at, std::uint32_t bits) {
    if constexpr (team_size == 1)
      *at |= bits;
    else
      backend::scratch_atomics<ExecSpace>::bit_or(at, bits);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename policy::member_type& member) const {
    const std::size_t i = member.league_rank();
    const block_place<T, Dims> place(p, ends, i);
    if (!place.coded()) return;
    const std::uint64_t block_bytes = place.end - place.begin;
    const Bits* gray = slots + i * static_cast<std::size_t>(SlotWords);
    const std::uint32_t* codes =
        encoder + place.grid * static_cast<std::size_t>(table_count<Bits>) * alphabet;
    std::byte* out = place.out();
    Kokkos::single(Kokkos::PerTeam(member), [&]() { place.write_entry(); });
    if (place.stored) {
      const auto* bytes = reinterpret_cast<const std::byte*>(gray);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, static_cast<int>(block_bytes)),
                           [&](int k) { out[k] = bytes[k]; });
      return;
    }
    const std::size_t bytes_of_scratch = scratch_bytes;
    auto* staging = static_cast<std::uint32_t*>(member.team_scratch(0).get_shmem(bytes_of_scratch));
    auto* start = staging + staging_words;
    auto* unit_bits = reinterpret_cast<packed_stream_bits*>(start + Chunks);
    packed_stream_bits* unit_offset = unit_bits + 2 * Chunks;
    const int used_words = static_cast<int>((block_bytes + 3) / 4);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, used_words),
                         [&](int k) { staging[k] = 0; });
    scan_column_starts(member, gray, Chunks, start);
    member.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, 2 * Chunks), [&](int unit) {
      unit_bits[unit] =
          sized_units
              ? sized_units[i * 2 * Chunks + unit]
              : unit_stream_bits<Bits, Chunks>(
                    gray, unit, unit < Chunks ? 0 : static_cast<int>(start[unit - Chunks]), codes);
    });
    member.team_barrier();
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(member, 2 * Chunks),
                          [&](int unit, std::uint64_t& sum, bool final) {
                            const std::uint64_t bits = unit_bits[unit].low;
                            if (final) unit_offset[unit].low = sum;
                            sum += bits;
                          });
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(member, 2 * Chunks),
                          [&](int unit, std::uint64_t& sum, bool final) {
                            const std::uint64_t bits = unit_bits[unit].high;
                            if (final) unit_offset[unit].high = sum;
                            sum += bits;
                          });
    member.team_barrier();
    const std::uint64_t* lengths = stream_bytes + i * streams_per_block;
    Kokkos::single(Kokkos::PerTeam(member), [&]() {
      // The lengths of streams 0 to S-2, uint16 little-endian, in front of the streams.
      for (int s = 0; s < streams_per_block - 1; ++s)
        team_add_or(&staging[s / 2], static_cast<std::uint32_t>(lengths[s]) << (16 * (s % 2)));
    });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, 2 * Chunks), [&](int unit) {
      staged_bits streams[streams_per_block];
      std::uint32_t first = 8 * stream_lengths_bytes;
      for (int s = 0; s < streams_per_block; ++s) {
        streams[s].start(first + unit_offset[unit].get(s));
        first += static_cast<std::uint32_t>(8 * lengths[s]);
      }
      for_each_unit_symbol<Bits, Chunks>(
          gray, unit, unit < Chunks ? 0 : static_cast<int>(start[unit - Chunks]),
          [&](int s, int t, unsigned b) { streams[s].put(staging, codes[t * alphabet + b]); });
      for (int s = 0; s < streams_per_block; ++s) streams[s].finish(staging);
    });
    member.team_barrier();
    const auto* staged = reinterpret_cast<const std::byte*>(staging);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, static_cast<int>(block_bytes)),
                         [&](int k) { out[k] = staged[k]; });
  }
};

// Block sizes -> their ends over all grids' blocks, each with its stored flag (a grid's table
// entries are these less the end before its first block: block_place, plan_stream).
template <class ExecSpace>
void scan_block_ends(const ExecSpace& exec, const std::uint64_t* sizes, std::uint64_t* ends,
                     std::size_t count) {
  Kokkos::parallel_scan(
      "ndzip::high_ratio::scan_block_ends",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
          exec, 0, static_cast<std::int64_t>(count)),
      KOKKOS_LAMBDA(std::int64_t i, std::uint64_t & sum, bool final) {
        sum += sizes[i] & ~stored_flag;
        if (final) ends[i] = sum | (sizes[i] & stored_flag);
      });
}

}  // namespace ndzip::core::high_ratio
