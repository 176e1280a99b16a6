// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The high-ratio stream's frame around the blocks (docs/FORMAT.md, "The high-ratio stream"),
// handled by small kernels so that a call never waits for the host: where the header, the code
// tables, the block table and the coded area go (plan_stream, write_header), the stored form's
// and the border's bytes moved (the copy kernels), a stream's header read and checked
// (read_header), and what a decompression found gathered into its decompress_outcome
// (finish_outcome). What the kernels of one call tell each other lives in a pipeline_state in the
// execution space's memory.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include "core/high_ratio/block_coding.hpp"
#include "core/high_ratio/grids.hpp"
#include "core/high_ratio/huffman.hpp"
#include "core/stream_status.hpp"
#include "ndzip/codec_mode.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core::high_ratio {

// "NDZH", byte k of the stream being byte k of this word from its least significant one (a
// scalar, which device code reads where it cannot read a host array).
inline constexpr std::uint32_t magic = 0x485a444eu;
KOKKOS_INLINE_FUNCTION constexpr std::byte magic_byte(int k) {
  return static_cast<std::byte>((magic >> 8 * k) & 0xffu);
}
inline constexpr unsigned char version = 1;
inline constexpr std::uint64_t no_failure = ~std::uint64_t{0};

// The coding byte of the header, and (compression only) a stream that was not written because
// the output holds too few bytes.
namespace stream_coding {
inline constexpr std::uint64_t coded = 0;
inline constexpr std::uint64_t stored = 1;
inline constexpr std::uint64_t does_not_fit = 2;
}  // namespace stream_coding

// What is wrong with a stream's header or tables, in the order a reader checks them: the lowest
// header_key found is the one reported.
enum class header_failure : std::uint64_t {
  misaligned = 1,  // a stream not aligned to 8 bytes (the host checks a single stream's)
  no_header,       // fewer bytes than the header (likewise)
  magic,
  version,      // the version read, in the key's `value`
  reserved,     // non-zero reserved bytes
  stored_area,  // a stored stream with a coded-area length
  coding,       // an unknown coding, in `value`
  code_table,   // table `value` refused, for the reason in `why`
  truncated,    // fewer bytes than the tables, block table, coded area and tail need
  padding,      // non-zero bytes between the tables and the block table
  area_without_blocks,
  stored_truncated,  // a stored stream shorter than its ndzip stream's offset table says
};
KOKKOS_INLINE_FUNCTION constexpr std::uint64_t header_key(header_failure kind, unsigned value,
                                                          code_failure why) {
  return static_cast<std::uint64_t>(kind) << 16 | static_cast<std::uint64_t>(value & 0xffu) << 8 |
         static_cast<std::uint64_t>(why);
}

// The failure word of a high-ratio decompress_outcome: (index << 8) | kind, where the kind tells
// which part of the stream failed; failures of the rebuilt main ndzip stream keep the ndzip
// decoder's own codes (below outcome_border).
inline constexpr std::uint64_t outcome_border = 0x10;  // + the border stream's ndzip code
inline constexpr std::uint64_t outcome_block = 0x20;   // + block_failure, index: the block
inline constexpr std::uint64_t outcome_header = 0x40;  // index: the header_key

// Whether a decompression rebuilds the stream from its blocks: a coded stream whose header and
// code tables passed (otherwise the block, placing and border kernels do nothing).
KOKKOS_INLINE_FUNCTION bool blocks_decoded(const pipeline_state& state) {
  return state.header_failure == no_failure && state.coding == stream_coding::coded;
}

KOKKOS_INLINE_FUNCTION constexpr std::uint64_t padded_to_8(std::uint64_t bytes) {
  return (bytes + 7) / 8 * 8;
}
// a + b, or ~0 where that overflows (sizes read from an untrusted stream).
KOKKOS_INLINE_FUNCTION constexpr std::uint64_t saturated_sum(std::uint64_t a, std::uint64_t b) {
  return a + b < a ? ~std::uint64_t{0} : a + b;
}

// A thread per grid, after the block sizes: its stream's layout, coded or stored (where coding
// would not make it smaller), or not written at all where its capacity is too small; its size
// into the item (and `sizes`).
template <class T, int Dims>
struct plan_stream {
  pipeline<T, Dims> p;
  const std::uint64_t* serialized_sizes;  // per grid and table
  const std::uint64_t* ends;
  int tables;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t g) const {
    const grid_plan<T, Dims>& grid = p.grids[g];
    pipeline_state& state = p.states[g];
    std::uint64_t head = high_ratio_header_bytes;
    for (int t = 0; t < tables; ++t) head += serialized_sizes[g * tables + t];
    head = padded_to_8(head);
    const std::uint64_t blocks = grid.blocks();
    const std::uint64_t first = grid.first_block;
    const std::uint64_t area =
        blocks > 0 ? (ends[first + blocks - 1] & ~stored_flag) - end_before(ends, first) : 0;
    state.main_bytes = p.main_items[g].stream_bytes;
    state.border_bytes = grid.border_item >= 0 ? p.border_items[grid.border_item].stream_bytes : 0;
    const std::uint64_t coded = head + 8 * blocks + area + grid.tail_bytes;
    const std::uint64_t stored = high_ratio_header_bytes + state.main_bytes;
    const bool store = coded >= stored;
    const std::uint64_t total = store ? stored : coded;
    const std::uint64_t capacity = p.capacity(g);
    state.area = area;
    state.header_bytes = store ? high_ratio_header_bytes : head;
    state.total = total;
    state.coding = total > capacity ? stream_coding::does_not_fit
                   : store          ? stream_coding::stored
                                    : stream_coding::coded;
    p.items[g].stream_bytes = total;
    if (p.sizes) p.sizes[g] = total;
  }
};

// The header and (coded) the code tables and their padding, a thread per byte of the most they
// can take (header_bytes_at_most) and grid.
template <class T, int Dims>
struct write_header {
  pipeline<T, Dims> p;
  const std::byte* serialized;  // per grid and table, serialized_code_bytes each
  const std::uint64_t* serialized_sizes;
  int tables;

  KOKKOS_INLINE_FUNCTION static constexpr std::size_t header_bytes_at_most(int tables) {
    return padded_to_8(high_ratio_header_bytes + tables * serialized_code_bytes);
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t index) const {
    const std::size_t per_grid = header_bytes_at_most(tables);
    const std::size_t g = index / per_grid, i = index % per_grid;
    const pipeline_state& state = p.states[g];
    const std::uint64_t coding = state.coding;
    if (coding == stream_coding::does_not_fit || i >= state.header_bytes) return;
    std::byte b{0};
    if (i < 4) {
      b = magic_byte(static_cast<int>(i));
    } else if (i == 4) {
      b = static_cast<std::byte>(version);
    } else if (i == 5) {
      b = static_cast<std::byte>(coding);
    } else if (i >= 8 && i < 16) {
      // The coded area's length; 0 in a stored stream.
      if (coding == stream_coding::coded)
        b = static_cast<std::byte>((state.area >> 8 * (i - 8)) & 0xffu);
    } else if (i >= 16) {
      const std::uint64_t* sizes = serialized_sizes + g * tables;
      std::uint64_t at = high_ratio_header_bytes;
      for (int t = 0; t < tables; ++t) {
        if (i < at + sizes[t]) {
          b = serialized[(g * tables + t) * serialized_code_bytes + (i - at)];
          break;
        }
        at += sizes[t];
      }
    }
    p.items[g].stream[i] = b;
  }
};

// Copies up to `most` elements per grid from one place to another, the places (and whether to
// copy at all) given for grid g by `Where` from the pipeline state (which decides whether
// before it forms a pointer: a stream that is not copied may be null or shorter than the
// places it would name); a fixed number of threads
// per grid, each taking every `stride`-th element, so that a copy that does not happen costs
// little.
template <class Word, class Where>
struct copy_words {
  Where where;
  std::size_t stride;

  static constexpr std::size_t threads = std::size_t{1} << 16;  // over all grids
  static constexpr std::size_t fewest_per_grid = 256;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t index) const {
    const std::size_t g = index / stride, first = index % stride;
    const Word* from = nullptr;
    Word* to = nullptr;
    std::uint64_t count = 0;
    if (!where(g, from, to, count)) return;
    for (std::uint64_t k = first; k < count; k += stride) to[k] = from[k];
  }
};
template <class Word, class ExecSpace, class Where>
void launch_copies(const char* name, const ExecSpace& exec, std::size_t grids, std::size_t most,
                   const Where& where) {
  using copy = copy_words<Word, Where>;
  if (most == 0 || grids == 0) return;
  std::size_t per_grid = copy::threads / grids;
  if (per_grid < copy::fewest_per_grid) per_grid = copy::fewest_per_grid;
  if (per_grid > most) per_grid = most;
  Kokkos::parallel_for(name, Kokkos::RangePolicy<ExecSpace>(exec, 0, grids * per_grid),
                       copy{where, per_grid});
}

// A thread per grid, first in a decompression: resets the grid's state, then reads the header of
// its stream and, for a coded one, where its tables end (from their first bytes; read_codes
// checks them), the coded area and the size it implies.
template <class T, int Dims>
struct read_header {
  pipeline<T, Dims> p;
  int tables;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t g) const {
    pipeline_state& state = p.states[g];
    const grid_plan<T, Dims>& grid = p.grids[g];
    const std::byte* stream = p.items[g].stream;
    const std::uint64_t size = p.items[g].stream_bytes;
    const auto fail = [&](header_failure kind, unsigned value = 0) {
      const std::uint64_t key = header_key(kind, value, code_failure::none);
      if (key < state.header_failure) state.header_failure = key;
    };
    state.header_failure = no_failure;
    state.block_failure = no_failure;
    state.main_words = state.border_words = 0;
    state.total = high_ratio_header_bytes;
    state.coding = stream_coding::stored;
    state.area = 0;
    state.header_bytes = high_ratio_header_bytes;
    // (The host checks both before queuing a single stream; a batch's are checked here.)
    if (reinterpret_cast<std::uintptr_t>(stream) % high_ratio_stream_alignment != 0)
      return fail(header_failure::misaligned);
    if (size < high_ratio_header_bytes) return fail(header_failure::no_header);
    state.total = 0;
    bool is_magic = true;
    for (int k = 0; k < 4; ++k) is_magic = is_magic && stream[k] == magic_byte(k);
    const auto stream_version = static_cast<unsigned>(stream[4]);
    const auto coding = static_cast<unsigned>(stream[5]);
    const std::uint64_t area = load_u64(stream + 8);
    state.coding = coding;
    state.area = area;
    if (!is_magic) return fail(header_failure::magic);
    if (stream_version != version) return fail(header_failure::version, stream_version);
    if (stream[6] != std::byte{0} || stream[7] != std::byte{0})
      return fail(header_failure::reserved);
    if (coding == stream_coding::stored) {
      if (area != 0) fail(header_failure::stored_area);
      return;
    }
    if (coding != stream_coding::coded) return fail(header_failure::coding, coding);
    std::uint64_t at = high_ratio_header_bytes;
    for (int t = 0; t < tables; ++t) {
      const std::size_t bytes = code_bytes(stream + at, size - at);
      if (bytes == 0 || bytes > size - at) return;  // read_codes reports the table
      at += bytes;
    }
    const std::uint64_t blocks = grid.blocks();
    const std::uint64_t area_at = padded_to_8(at) + 8 * blocks;
    state.header_bytes = padded_to_8(at);
    state.total = saturated_sum(saturated_sum(area_at, area), grid.tail_bytes);
    if (state.total > size) return fail(header_failure::truncated);
    if (blocks == 0 && area != 0) fail(header_failure::area_without_blocks);
  }
};

// A thread per grid, last in a decompression: what it found, into the caller's outcome. The
// header first, then the blocks, the border stream and the main stream, as a reader meets them.
template <class T, int Dims>
struct finish_outcome {
  pipeline<T, Dims> p;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t g) const {
    const pipeline_state& state = p.states[g];
    const std::uint64_t size = p.items[g].stream_bytes;
    const std::int64_t border_item = p.grids[g].border_item;
    decompress_outcome o{decompress_outcome::no_failure, state.total, size};
    const decompress_outcome& main = p.main_outcomes[g];
    if (state.header_failure != no_failure) {
      o.failure = state.header_failure << 8 | outcome_header;
    } else if (state.coding == stream_coding::stored) {
      o.stream_bytes = saturated_sum(high_ratio_header_bytes, main.stream_bytes);
      if (o.stream_bytes > size)
        o.failure = header_key(header_failure::stored_truncated, 0, code_failure::none) << 8 |
                    outcome_header;
      else
        o.failure = main.failure;
    } else if (state.block_failure != no_failure) {
      o.failure = (state.block_failure / 8) << 8 | (outcome_block + state.block_failure % 8);
    } else if (border_item >= 0 &&
               p.border_outcomes[border_item].failure != decompress_outcome::no_failure) {
      const std::uint64_t border = p.border_outcomes[border_item].failure;
      o.failure = (border >> 8) << 8 | (outcome_border + (border & 0xffu));
    } else {
      o.failure = main.failure;
    }
    p.outcomes[g] = o;
  }
};

}  // namespace ndzip::core::high_ratio
