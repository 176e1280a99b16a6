// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The high-ratio stream's encoder and decoder (docs/FORMAT.md, "The high-ratio stream"), for
// ndzip::high_ratio_compressor. Every step is a kernel queued on the instance, so that both
// directions run without waiting for the host (the synchronous calls are the asynchronous ones,
// a fence and a read of the result).
// Compression: the array's ndzip stream and its border's 1-D ndzip stream are made by two
// ndzip::compressors; a kernel writes every block's gray form into a slot of its own and counts
// its bytes per code table, a team per table builds the codes, a kernel sizes every code stream,
// a scan places the blocks, one thread decides the layout (coded, or the ndzip stream stored),
// and kernels write the header, the blocks and the border's tail
// (core/high_ratio/encode_kernels.hpp, code_kernels.hpp, stream_kernels.hpp).
// Decompression: one thread reads the header, a team per table checks the code tables and fills
// the decoder's, a kernel decodes every code stream into the gray blocks (on the host a thread
// per block, on a device a thread per stream), one turns them back into ndzip blocks, scans place
// those into the two ndzip streams, and the two compressors decode them (the border stream into
// the array stream's border); one thread gathers what every step found into the outcome
// (core/high_ratio/decode_kernels.hpp).

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "core/call_guard.hpp"
#include "core/high_ratio/block_coding.hpp"
#include "core/high_ratio/code_kernels.hpp"
#include "core/high_ratio/decode_kernels.hpp"
#include "core/high_ratio/encode_kernels.hpp"
#include "core/high_ratio/huffman.hpp"
#include "core/high_ratio/stream_kernels.hpp"
#include "core/stream_status.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/detail/disjoint.hpp"
#include "ndzip/error.hpp"
#include "ndzip/high_ratio.hpp"

namespace ndzip::core::high_ratio {

template <class T, int Dims, class ExecSpace, bool DeviceSchedule>
struct engine {
  using bits_type = typename profile<T, Dims>::bits_type;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr int chunks = profile<T, Dims>::chunks_per_hypercube;
  static constexpr int slot_words = profile<T, Dims>::max_block_words;
  static constexpr int tables = table_count<bits_type>;
  static constexpr std::size_t word = sizeof(T);
  using bytes_view = Kokkos::View<std::byte*, memory_space>;
  using one = Kokkos::RangePolicy<ExecSpace>;

  ExecSpace exec;
  stream_layout<T, Dims> layout;
  std::size_t border;         // B
  std::size_t border_blocks;  // n_b
  std::size_t tail;           // the border stream's own border elements
  std::size_t blocks;         // n + n_b
  compressor<T, Dims, ExecSpace> main_codec;
  std::optional<compressor<T, 1, ExecSpace>> border_codec;
  bytes_view main_stream, border_stream;
  // The border's elements, between the main stream and the border stream.
  Kokkos::View<bits_type*, memory_space> border_values;
  // Every block's gray form, and (decoding) its ndzip form, a worst-case block apart.
  Kokkos::View<bits_type*, memory_space> gray_slots, slots;
  Kokkos::View<std::uint64_t*, memory_space> words, sizes, ends, stream_bytes;
  Kokkos::View<stream_state*, memory_space> states;
  Kokkos::View<std::uint64_t*, memory_space> counts;
  Kokkos::View<std::uint32_t*, memory_space> encoder;
  Kokkos::View<std::byte*, memory_space> serialized;
  Kokkos::View<std::uint64_t*, memory_space> serialized_sizes;
  Kokkos::View<std::uint16_t*, memory_space> decoder;
  Kokkos::View<pipeline_state, memory_space> state;
  typename Kokkos::View<pipeline_state, memory_space>::HostMirror host_state;
  // Where the synchronous decompression has its outcome written.
  Kokkos::View<decompress_outcome, memory_space> outcome;
  typename Kokkos::View<decompress_outcome, memory_space>::HostMirror host_outcome;
  std::mutex calls;

  engine(const ExecSpace& e, const extent<Dims>& grid)
      : exec(e),
        layout(grid),
        border(layout.border_size),
        border_blocks(border / 4096),
        tail(border % 4096),
        blocks(layout.hypercube_count + border_blocks),
        main_codec(e, grid) {
    if (border > 0) border_codec.emplace(e, extent<1>{border});
    // After the compressors, which take the library's lock themselves.
    const call_guard<ExecSpace> guard(nullptr);
    using Kokkos::view_alloc;
    using Kokkos::WithoutInitializing;
    main_stream = bytes_view(view_alloc(WithoutInitializing, "ndzip::high_ratio::main"),
                             main_codec.size_bound());
    if (border > 0) {
      border_stream = bytes_view(view_alloc(WithoutInitializing, "ndzip::high_ratio::border"),
                                 border_codec->size_bound());
      border_values = decltype(border_values)(
          view_alloc(WithoutInitializing, "ndzip::high_ratio::border_values"), border);
    }
    gray_slots = decltype(gray_slots)(
        view_alloc(WithoutInitializing, "ndzip::high_ratio::gray_slots"), blocks * slot_words);
    words = decltype(words)(view_alloc(WithoutInitializing, "ndzip::high_ratio::words"), blocks);
    stream_bytes =
        decltype(stream_bytes)(view_alloc(WithoutInitializing, "ndzip::high_ratio::stream_bytes"),
                               blocks * streams_per_block);
    sizes = decltype(sizes)(view_alloc(WithoutInitializing, "ndzip::high_ratio::sizes"), blocks);
    ends = decltype(ends)(view_alloc(WithoutInitializing, "ndzip::high_ratio::ends"), blocks);
    counts = decltype(counts)("ndzip::high_ratio::counts", tables * alphabet);
    encoder = decltype(encoder)("ndzip::high_ratio::encoder", tables * alphabet);
    serialized =
        decltype(serialized)("ndzip::high_ratio::serialized", tables * serialized_code_bytes);
    serialized_sizes = decltype(serialized_sizes)("ndzip::high_ratio::serialized_sizes", tables);
    decoder = decltype(decoder)("ndzip::high_ratio::decoder", tables * decoder_table_size);
    state = decltype(state)("ndzip::high_ratio::state");
    host_state = Kokkos::create_mirror_view(state);
    outcome = decltype(outcome)("ndzip::high_ratio::outcome");
    host_outcome = Kokkos::create_mirror_view(outcome);
  }

  block_source<bits_type> source() const {
    return {main_stream.data(), layout.hypercube_count, layout.header_bytes(), border_stream.data(),
            border_header()};
  }
  std::size_t border_header() const { return (4 * border_blocks + word - 1) / word * word; }

  static void check_stream(const std::byte* stream) {
    if (reinterpret_cast<std::uintptr_t>(stream) % high_ratio_stream_alignment != 0)
      throw std::invalid_argument("ndzip: a high-ratio stream buffer must be aligned to 8 bytes");
  }

  // Queues the compression; its size goes to *result. Nothing is written where the stream needs
  // more than `capacity` bytes (coding does_not_fit in the state).
  void compress_async(const T* values, std::byte* stream, std::size_t capacity,
                      std::uint64_t* result) {
    const std::lock_guard<std::mutex> lock(calls);
    enqueue_compress(values, stream, capacity, result);
  }

  std::size_t compress(const T* values, std::byte* stream, std::size_t capacity) {
    // The lock until the state is read: another call would overwrite it.
    const std::lock_guard<std::mutex> lock(calls);
    enqueue_compress(values, stream, capacity, nullptr);
    const pipeline_state done = read_state();
    if (done.coding == stream_coding::does_not_fit)
      throw capacity_error("ndzip: the high-ratio stream needs " + std::to_string(done.total) +
                           " bytes but the output holds only " + std::to_string(capacity));
    return done.total;
  }

  void enqueue_compress(const T* values, std::byte* stream, std::size_t capacity,
                        std::uint64_t* result) {
    check_stream(stream);
    detail::check_disjoint(values, layout.grid.size() * word, stream, capacity);
    pipeline_state* const s = state.data();
    main_codec.compress_raw_async(values, main_stream.data(), main_stream.size(), &s->main_bytes);
    if (border > 0) {
      {
        const call_guard<ExecSpace> guard(nullptr);
        // The border's elements end the main stream.
        const std::byte* main = main_stream.data();
        bits_type* to = border_values.data();
        const std::size_t border_bytes = border * word;
        launch_copy<bits_type>(
            "ndzip::high_ratio::gather_border", exec, border,
            KOKKOS_LAMBDA(const bits_type*& f, bits_type*& t, std::uint64_t& n) {
              f = reinterpret_cast<const bits_type*>(main + s->main_bytes - border_bytes);
              t = to;
              n = border_bytes / sizeof(bits_type);
              return true;
            });
      }
      border_codec->compress_raw_async(reinterpret_cast<const T*>(border_values.data()),
                                       border_stream.data(), border_stream.size(),
                                       &s->border_bytes);
    }
    const call_guard<ExecSpace> guard(nullptr);
    Kokkos::deep_copy(exec, counts, std::uint64_t{0});
    if (blocks > 0) {
      using grayer = gray_and_count<bits_type, chunks, slot_words, ExecSpace, DeviceSchedule>;
      Kokkos::parallel_for("ndzip::high_ratio::gray_and_count", grayer::make_policy(exec, blocks),
                           grayer{source(), gray_slots.data(), words.data(), counts.data()});
    }
    Kokkos::parallel_for("ndzip::high_ratio::build_codes",
                         build_codes<ExecSpace>::make_policy(exec, tables),
                         build_codes<ExecSpace>{counts.data(), encoder.data(), serialized.data(),
                                                serialized_sizes.data()});
    if (blocks > 0) {
      using sizer = size_block_streams<bits_type, chunks, slot_words, ExecSpace>;
      Kokkos::parallel_for("ndzip::high_ratio::size_block_streams",
                           sizer::make_policy(exec, blocks),
                           sizer{gray_slots.data(), words.data(), encoder.data(),
                                 stream_bytes.data(), sizes.data()});
      scan_block_ends(exec, sizes.data(), ends.data(), blocks, &s->area);
    }
    const std::size_t tail_bytes = tail * word;
    Kokkos::parallel_for(
        "ndzip::high_ratio::plan_stream", one(exec, 0, 1),
        plan_stream{s, serialized_sizes.data(), tables, blocks, tail_bytes, capacity, result});
    Kokkos::parallel_for(
        "ndzip::high_ratio::write_header", one(exec, 0, write_header::header_bytes_at_most(tables)),
        write_header{s, serialized.data(), serialized_sizes.data(), tables, stream});
    const stream_place place{stream, blocks, s};
    if (blocks > 0) {
      if constexpr (DeviceSchedule) {
        using writer = write_block_streams<bits_type, chunks, slot_words, ExecSpace>;
        Kokkos::parallel_for(
            "ndzip::high_ratio::write_block_streams", writer::make_policy(exec, blocks),
            writer{gray_slots.data(), encoder.data(), stream_bytes.data(), ends.data(), place});
      } else {
        Kokkos::parallel_for(
            "ndzip::high_ratio::write_blocks", one(exec, 0, blocks),
            write_blocks<bits_type, chunks, slot_words>{gray_slots.data(), encoder.data(),
                                                        stream_bytes.data(), ends.data(), place});
      }
    }
    // The stored form: the ndzip stream behind the header.
    const std::byte* main = main_stream.data();
    launch_copy<bits_type>(
        "ndzip::high_ratio::store", exec, main_stream.size() / word,
        KOKKOS_LAMBDA(const bits_type*& f, bits_type*& t, std::uint64_t& n) {
          f = reinterpret_cast<const bits_type*>(main);
          t = reinterpret_cast<bits_type*>(stream + high_ratio_header_bytes);
          n = s->main_bytes / sizeof(bits_type);
          return s->coding == stream_coding::stored;
        });
    if (tail_bytes > 0) {
      // The border stream's own border elements, raw, after the coded area.
      const std::byte* border_bytes = border_stream.data();
      const std::size_t table_bytes = 8 * blocks;
      launch_copy<std::byte>(
          "ndzip::high_ratio::write_tail", exec, tail_bytes,
          KOKKOS_LAMBDA(const std::byte*& f, std::byte*& t, std::uint64_t& n) {
            f = border_bytes + s->border_bytes - tail_bytes;
            t = stream + s->header_bytes + table_bytes + s->area;
            n = tail_bytes;
            return s->coding == stream_coding::coded;
          });
    }
  }

  pipeline_state read_state() {
    const call_guard<ExecSpace> guard(nullptr);
    Kokkos::deep_copy(exec, host_state, state);
    exec.fence();
    return host_state();
  }

  // Queues the decompression; what it finds goes to *result. Throws (before queuing anything)
  // for a misaligned stream, overlapping buffers, or a stream shorter than its header.
  void decompress_async(const std::byte* stream, std::size_t size, T* values,
                        decompress_outcome* result) {
    const std::lock_guard<std::mutex> lock(calls);
    enqueue_decompress(stream, size, values, result);
  }

  std::size_t decompress(const std::byte* stream, std::size_t size, T* values) {
    const std::lock_guard<std::mutex> lock(calls);
    enqueue_decompress(stream, size, values, outcome.data());
    {
      const call_guard<ExecSpace> guard(nullptr);
      Kokkos::deep_copy(exec, host_outcome, outcome);
      exec.fence();
    }
    return check_outcome(host_outcome());
  }

  void enqueue_decompress(const std::byte* stream, std::size_t size, T* values,
                          decompress_outcome* result) {
    check_stream(stream);
    detail::check_disjoint(values, layout.grid.size() * word, stream, size);
    if (size < high_ratio_header_bytes)
      throw stream_error("ndzip: the high-ratio stream holds " + std::to_string(size) +
                         " bytes, fewer than its " + std::to_string(high_ratio_header_bytes) +
                         "-byte header");
    pipeline_state* const s = state.data();
    const std::size_t tail_bytes = tail * word;
    {
      const call_guard<ExecSpace> guard(nullptr);
      if (blocks > 0 && slots.extent(0) == 0) {
        // The decoder's own scratch: the ndzip blocks and (on a device) the streams' states.
        slots = decltype(slots)(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::high_ratio::slots"),
            blocks * slot_words);
        if constexpr (DeviceSchedule)
          states = decltype(states)(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::high_ratio::states"),
              blocks * streams_per_block);
      }
      Kokkos::parallel_for("ndzip::high_ratio::read_header", one(exec, 0, 1),
                           read_header{stream, size, blocks, tail_bytes, tables, s});
      Kokkos::parallel_for("ndzip::high_ratio::read_codes",
                           read_codes<ExecSpace>::make_policy(exec, tables),
                           read_codes<ExecSpace>{stream, size, tables, decoder.data(), s});
      if (blocks > 0) {
        const decoder_inputs<bits_type, slot_words> in{stream, blocks, decoder.data(),
                                                       gray_slots.data(), s};
        if constexpr (!DeviceSchedule) {
          Kokkos::parallel_for("ndzip::high_ratio::decode_blocks", one(exec, 0, blocks),
                               decode_blocks<bits_type, chunks, slot_words>{in});
        } else {
          // A device needs more threads than blocks: one per code stream, in two steps.
          const one per_stream(exec, 0, blocks * streams_per_block);
          decode_streams<bits_type, chunks, slot_words> decode{in, states.data(), false};
          Kokkos::parallel_for("ndzip::high_ratio::decode_heads", per_stream, decode);
          decode.columns = true;
          Kokkos::parallel_for("ndzip::high_ratio::decode_columns", per_stream, decode);
        }
        using ungrayer = ungray_blocks<bits_type, chunks, slot_words, ExecSpace, DeviceSchedule>;
        Kokkos::parallel_for("ndzip::high_ratio::ungray_blocks",
                             ungrayer::make_policy(exec, blocks),
                             ungrayer{gray_slots.data(), slots.data(), sizes.data(), s});
      }
      place_blocks<bits_type, slot_words>(exec, slots.data(), sizes.data(), ends.data(), 0,
                                          layout.hypercube_count, main_stream.data(),
                                          layout.header_bytes(), &s->main_words, s);
      place_blocks<bits_type, slot_words>(
          exec, slots.data(), sizes.data(), ends.data(), layout.hypercube_count, border_blocks,
          border_stream.data(), border_header(), &s->border_words, s);
      // A stored stream: its ndzip stream, as far as the main stream's scratch holds it.
      std::byte* main = main_stream.data();
      const std::uint64_t room = main_stream.size();
      launch_copy<bits_type>(
          "ndzip::high_ratio::unstore", exec, room / word,
          KOKKOS_LAMBDA(const bits_type*& f, bits_type*& t, std::uint64_t& n) {
            f = reinterpret_cast<const bits_type*>(stream + high_ratio_header_bytes);
            t = reinterpret_cast<bits_type*>(main);
            const std::uint64_t given = size - high_ratio_header_bytes;
            n = (given < room ? given : room) / sizeof(bits_type);
            return s->header_failure == no_failure && s->coding == stream_coding::stored;
          });
    }
    if (border > 0) {
      {
        const call_guard<ExecSpace> guard(nullptr);
        std::byte* border_bytes = border_stream.data();
        const std::size_t border_head = border_header();
        launch_copy<std::byte>(
            "ndzip::high_ratio::read_tail", exec, tail_bytes,
            KOKKOS_LAMBDA(const std::byte*& f, std::byte*& t, std::uint64_t& n) {
              f = stream + s->total - tail_bytes;
              t = border_bytes + border_head + s->border_words * word;
              n = tail_bytes;
              return blocks_decoded(*s);
            });
      }
      border_codec->decompress_raw_async(border_stream.data(), border_stream.size(),
                                         reinterpret_cast<T*>(border_values.data()),
                                         &s->border_outcome);
      {
        const call_guard<ExecSpace> guard(nullptr);
        std::byte* main = main_stream.data();
        const bits_type* from = border_values.data();
        const stream_layout<T, Dims> l = layout;
        const std::size_t border_bytes = border * word;
        launch_copy<bits_type>(
            "ndzip::high_ratio::place_border", exec, border,
            KOKKOS_LAMBDA(const bits_type*& f, bits_type*& t, std::uint64_t& n) {
              f = from;
              t = reinterpret_cast<bits_type*>(main + l.stream_bytes(s->main_words) - border_bytes);
              n = border_bytes / sizeof(bits_type);
              return blocks_decoded(*s);
            });
      }
    }
    main_codec.decompress_raw_async(main_stream.data(), main_stream.size(), values,
                                    &s->main_outcome);
    const call_guard<ExecSpace> guard(nullptr);
    Kokkos::parallel_for("ndzip::high_ratio::finish_outcome", one(exec, 0, 1),
                         finish_outcome{s, size, border > 0, result});
  }

  // The bytes consumed, or the stream_error that the outcome of a decompression describes.
  std::size_t check_outcome(const decompress_outcome& o) const {
    if (o.failure != decompress_outcome::no_failure) throw stream_error(describe(o));
    return o.stream_bytes;
  }

  std::string describe(const decompress_outcome& o) const {
    const std::uint64_t kind = o.failure & 0xffu;
    const std::uint64_t index = o.failure >> 8;
    if (kind >= outcome_header) return describe_header(o, index);
    if (kind >= outcome_block) return describe_block(index, kind - outcome_block);
    if (kind >= outcome_border) {
      decompress_outcome inner = o;
      inner.failure = index << 8 | (kind - outcome_border);
      return "ndzip: high-ratio stream, its border's ndzip stream: " +
             describe_stream_failure(inner, profile<T, 1>::chunks_per_hypercube,
                                     profile<T, 1>::max_block_words,
                                     "border of " + std::to_string(border) + " elements");
    }
    return describe_stream_failure(o, chunks, slot_words, to_string(layout.grid));
  }

  std::string describe_header(const decompress_outcome& o, std::uint64_t key) const {
    const auto value = static_cast<unsigned>((key >> 8) & 0xffu);
    const std::string size = std::to_string(o.given_bytes);
    switch (static_cast<header_failure>(key >> 16)) {
      case header_failure::magic:
        return "ndzip: not a high-ratio stream (its first bytes are not \"NDZH\")";
      case header_failure::version:
        return "ndzip: high-ratio stream version " + std::to_string(value) +
               " (this library reads version 1)";
      case header_failure::reserved:
        return "ndzip: high-ratio stream with non-zero reserved bytes";
      case header_failure::stored_area:
        return "ndzip: stored high-ratio stream with a coded-area length";
      case header_failure::coding:
        return "ndzip: high-ratio stream with unknown coding " + std::to_string(value);
      case header_failure::code_table:
        return "ndzip: high-ratio stream, code table " + std::to_string(value) + ": " +
               high_ratio::describe(static_cast<code_failure>(key & 0xffu));
      case header_failure::truncated:
        return "ndzip: the high-ratio stream is truncated: " + size +
               " bytes, but its tables, coded area and border need " +
               std::to_string(o.stream_bytes);
      case header_failure::padding:
        return "ndzip: high-ratio stream with non-zero padding after its tables";
      case header_failure::area_without_blocks:
        return "ndzip: high-ratio stream with a coded area but no blocks";
      case header_failure::stored_truncated:
        return "ndzip: the stored high-ratio stream is truncated: " + size +
               " bytes, but its ndzip stream needs " + std::to_string(o.stream_bytes);
    }
    return "ndzip: high-ratio stream with an unknown header failure";
  }

  std::string describe_block(std::uint64_t block, std::uint64_t why) const {
    const char* what = "";
    switch (static_cast<block_failure>(why)) {
      case block_failure::table:
        what =
            "its block-table entry lies before its start or past the coded area (or, for the "
            "last block, short of its end), or its stream lengths exceed it";
        break;
      case block_failure::code:
        what = "its bits hold no valid code, or a code runs past its end";
        break;
      case block_failure::leftover:
        what = "bytes or non-zero padding follow its last code";
        break;
      case block_failure::stored_size:
        what = "its stored length is not what its heads announce";
        break;
    }
    return "ndzip: high-ratio stream, block " + std::to_string(block) + " of " +
           std::to_string(blocks) + ": " + what;
  }
};

}  // namespace ndzip::core::high_ratio

namespace ndzip {

template <class T, int Dims, class ExecSpace>
high_ratio_compressor<T, Dims, ExecSpace>::high_ratio_compressor(const ExecSpace& exec,
                                                                 const extent<Dims>& grid)
    : m_exec(exec),
      m_grid(grid),
      m_engine(std::make_unique<core::high_ratio::engine<T, Dims, ExecSpace>>(exec, grid)) {}

template <class T, int Dims, class ExecSpace>
high_ratio_compressor<T, Dims, ExecSpace>::~high_ratio_compressor() = default;
template <class T, int Dims, class ExecSpace>
high_ratio_compressor<T, Dims, ExecSpace>::high_ratio_compressor(high_ratio_compressor&&) noexcept =
    default;
template <class T, int Dims, class ExecSpace>
high_ratio_compressor<T, Dims, ExecSpace>& high_ratio_compressor<T, Dims, ExecSpace>::operator=(
    high_ratio_compressor&&) noexcept = default;

template <class T, int Dims, class ExecSpace>
std::size_t high_ratio_compressor<T, Dims, ExecSpace>::compress_raw(const T* values,
                                                                    std::byte* stream,
                                                                    std::size_t stream_capacity) {
  return m_engine->compress(values, stream, stream_capacity);
}

template <class T, int Dims, class ExecSpace>
std::size_t high_ratio_compressor<T, Dims, ExecSpace>::decompress_raw(const std::byte* stream,
                                                                      std::size_t stream_size,
                                                                      T* values) {
  return m_engine->decompress(stream, stream_size, values);
}

template <class T, int Dims, class ExecSpace>
void high_ratio_compressor<T, Dims, ExecSpace>::compress_raw_async(const T* values,
                                                                   std::byte* stream,
                                                                   std::size_t stream_capacity,
                                                                   std::uint64_t* stream_size) {
  if (stream_capacity < size_bound())
    throw capacity_error("ndzip: compress_async needs a stream buffer of size_bound() = " +
                         std::to_string(size_bound()) + " bytes, but the output holds only " +
                         std::to_string(stream_capacity));
  m_engine->compress_async(values, stream, stream_capacity, stream_size);
}

template <class T, int Dims, class ExecSpace>
void high_ratio_compressor<T, Dims, ExecSpace>::decompress_raw_async(const std::byte* stream,
                                                                     std::size_t stream_size,
                                                                     T* values,
                                                                     decompress_outcome* outcome) {
  m_engine->decompress_async(stream, stream_size, values, outcome);
}

template <class T, int Dims, class ExecSpace>
std::size_t high_ratio_compressor<T, Dims, ExecSpace>::check_outcome(
    const decompress_outcome& outcome) const {
  return m_engine->check_outcome(outcome);
}

}  // namespace ndzip
