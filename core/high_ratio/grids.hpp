// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The grids one high-ratio engine codes, as its kernels see them: one for
// ndzip::high_ratio_compressor, many for a batch_compressor in the high-ratio mode, each with
// its own stream, code tables and pipeline state, and all their blocks coded by one launch per
// step (a block kernel finds its grid in block_grid). What a call adds (the caller's items,
// where the sizes and outcomes go) travels in a pipeline, passed by value to every kernel.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include "core/high_ratio/block_coding.hpp"
#include "ndzip/batch_compressor.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core::high_ratio {

// What the kernels of one call tell each other about one grid's stream, in the execution
// space's memory.
struct pipeline_state {
  // Compression.
  std::uint64_t main_bytes;    // the array's ndzip stream (written by its compressor)
  std::uint64_t border_bytes;  // the border's ndzip stream
  std::uint64_t area;          // the coded area's bytes (also read from a stream's header)
  std::uint64_t header_bytes;  // header and code tables, padded: where the block table starts
  std::uint64_t total;         // the stream's bytes (decompression: what its header implies)
  std::uint64_t coding;        // stream_coding
  // Decompression.
  std::uint64_t header_failure;            // the lowest header_key, or no_failure
  std::uint64_t block_failure;             // the lowest block key (block * 8 + block_failure)
  std::uint64_t main_words, border_words;  // the rebuilt ndzip streams' block words
};

// One grid, fixed when the engine is made: its blocks among all grids' (its n hypercubes, then
// its border stream's n_b), its two ndzip streams' scratch, and its border elements' scratch.
template <class T, int Dims>
struct grid_plan {
  using bits_type = typename profile<T, Dims>::bits_type;
  stream_layout<T, Dims> layout{extent<Dims>{}};
  std::uint64_t first_block;    // blocks of the grids before it
  std::uint64_t main_blocks;    // n
  std::uint64_t border_blocks;  // n_b = floor(B / 4096)
  std::uint64_t border;         // B
  std::uint64_t tail_bytes;     // the border stream's own border elements, raw
  std::uint64_t border_header;  // the border stream's offset table, padded to a word
  std::uint64_t bound;          // high_ratio_size_bound
  std::byte* main;              // the array's ndzip stream
  std::uint64_t main_room;
  std::byte* border_stream;  // the border's (null without a border)
  std::uint64_t border_room;
  bits_type* border_values;  // the border's elements between the two streams
  std::int64_t border_item;  // its place among the border codec's grids; -1: no border

  KOKKOS_INLINE_FUNCTION std::uint64_t blocks() const { return main_blocks + border_blocks; }

  // Where local block k (a main hypercube, then a border one) lies in its ndzip stream.
  KOKKOS_INLINE_FUNCTION const bits_type* source_block(std::uint64_t k) const {
    const bool in_main = k < main_blocks;
    const std::byte* stream = in_main ? main : border_stream;
    const std::uint64_t j = in_main ? k : k - main_blocks;
    const auto* table = reinterpret_cast<const std::uint32_t*>(stream);
    const std::uint64_t start = j == 0 ? 0 : table[j - 1];
    return reinterpret_cast<const bits_type*>(stream +
                                              (in_main ? layout.header_bytes() : border_header)) +
           start;
  }
};

// Block sizes or ends are scanned over all grids' blocks at once; a grid's own are relative to
// the end of the block before its first.
KOKKOS_INLINE_FUNCTION std::uint64_t end_before(const std::uint64_t* ends, std::uint64_t first) {
  return first == 0 ? 0 : ends[first - 1] & ~stored_flag;
}

// One call: the engine's grids and scratch, and the caller's items (one per grid: values,
// stream and, compressing, the capacity where capacity_in_items, else the grid's bound;
// decompressing, the stream's bytes), where stream sizes go (compression: into the items and,
// if not null, `sizes`) and where outcomes go (decompression).
template <class T, int Dims>
struct pipeline {
  const grid_plan<T, Dims>* grids;
  std::uint64_t grid_count;
  const std::uint32_t* block_grid;  // a block's grid
  pipeline_state* states;           // one per grid
  // The items and outcomes of the two ndzip codecs: one per grid, one per grid with a border.
  batch_item<T>* main_items;
  batch_item<T>* border_items;
  decompress_outcome* main_outcomes;
  decompress_outcome* border_outcomes;
  batch_item<T>* items;
  std::uint64_t* sizes;
  decompress_outcome* outcomes;
  bool capacity_in_items;

  KOKKOS_INLINE_FUNCTION std::uint64_t capacity(std::uint64_t g) const {
    return capacity_in_items ? items[g].stream_bytes : grids[g].bound;
  }
  KOKKOS_INLINE_FUNCTION std::uint64_t grid_of(std::uint64_t block) const {
    return block_grid[block];
  }
};

}  // namespace ndzip::core::high_ratio
