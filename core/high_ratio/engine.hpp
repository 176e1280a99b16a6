// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The high-ratio stream's encoder and decoder (docs/FORMAT.md, "The high-ratio stream"), for
// ndzip::high_ratio_compressor. Compression: the array's ndzip stream and its border's 1-D
// ndzip stream are made by two ndzip::compressors; a kernel writes every block's gray form into
// a slot of its own and counts its bytes per code table, the host builds the codes, a kernel
// sizes every code stream, a scan places the blocks, a kernel writes the streams (those three
// in core/high_ratio/encode_kernels.hpp: a team per block, a thread per chunk).
// Decompression: a kernel decodes every code stream into the gray blocks (on the host a thread
// per block, on a device a thread per stream), one turns them back into ndzip blocks, scans place
// those into the two ndzip streams, and the two compressors decode them (the border stream into the
// array stream's border).
//
// The kernels, the same on every backend, are in core/high_ratio/encode_kernels.hpp and
// decode_kernels.hpp.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/call_guard.hpp"
#include "core/high_ratio/block_coding.hpp"
#include "core/high_ratio/decode_kernels.hpp"
#include "core/high_ratio/encode_kernels.hpp"
#include "core/high_ratio/huffman.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/detail/disjoint.hpp"
#include "ndzip/error.hpp"
#include "ndzip/high_ratio.hpp"

namespace ndzip::core::high_ratio {

inline constexpr unsigned char magic[4] = {'N', 'D', 'Z', 'H'};
inline constexpr unsigned char version = 1;
enum class coding : unsigned char { coded = 0, stored = 1 };

template <class T, int Dims, class ExecSpace, bool DeviceSchedule>
struct engine {
  using bits_type = typename profile<T, Dims>::bits_type;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr int chunks = profile<T, Dims>::chunks_per_hypercube;
  static constexpr int slot_words = profile<T, Dims>::max_block_words;
  static constexpr int tables = table_count<bits_type>;
  static constexpr std::size_t word = sizeof(T);
  using bytes_view = Kokkos::View<std::byte*, memory_space>;
  using unmanaged_bytes = Kokkos::View<std::byte*, memory_space, Kokkos::MemoryUnmanaged>;

  ExecSpace exec;
  stream_layout<T, Dims> layout;
  std::size_t border;         // B
  std::size_t border_blocks;  // n_b
  std::size_t tail;           // the border stream's own border elements
  std::size_t blocks;         // n + n_b
  compressor<T, Dims, ExecSpace> main_codec;
  std::optional<compressor<T, 1, ExecSpace>> border_codec;
  bytes_view main_stream, border_stream;
  // Every block's gray form, and (decoding) its ndzip form, a worst-case block apart.
  Kokkos::View<bits_type*, memory_space> gray_slots, slots;
  Kokkos::View<std::uint64_t*, memory_space> words, sizes, ends, stream_bytes;
  Kokkos::View<stream_state*, memory_space> states;
  Kokkos::View<std::uint64_t*, memory_space> counts;
  Kokkos::View<std::uint32_t*, memory_space> encoder;
  Kokkos::View<std::uint16_t*, memory_space> decoder;
  Kokkos::View<std::uint64_t*, memory_space> status;  // failure key, three totals
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
    if (border > 0)
      border_stream = bytes_view(view_alloc(WithoutInitializing, "ndzip::high_ratio::border"),
                                 border_codec->size_bound());
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
    decoder = decltype(decoder)("ndzip::high_ratio::decoder", tables * decoder_table_size);
    status = decltype(status)("ndzip::high_ratio::status", 4);
  }

  block_source<bits_type> source() const {
    return {main_stream.data(), layout.hypercube_count, layout.header_bytes(), border_stream.data(),
            border_header()};
  }
  std::size_t border_header() const { return (4 * border_blocks + word - 1) / word * word; }
  static std::size_t padded(std::size_t bytes) { return (bytes + 7) / 8 * 8; }

  std::array<std::uint64_t, 4> read_status() {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), status);
    return {host(0), host(1), host(2), host(3)};
  }

  void copy(std::byte* to, const std::byte* from, std::size_t bytes) {
    if (bytes == 0) return;
    Kokkos::deep_copy(exec, unmanaged_bytes(to, bytes),
                      unmanaged_bytes(const_cast<std::byte*>(from), bytes));
  }

  std::size_t compress(const T* values, std::byte* stream, std::size_t capacity) {
    if (reinterpret_cast<std::uintptr_t>(stream) % 8 != 0)
      throw std::invalid_argument("ndzip: a high-ratio stream buffer must be aligned to 8 bytes");
    detail::check_disjoint(values, layout.grid.size() * word, stream, capacity);
    const std::lock_guard<std::mutex> lock(calls);
    // The two ndzip streams (each compressor fences once, to return its size).
    const std::size_t main_bytes =
        main_codec.compress_raw(values, main_stream.data(), main_stream.size());
    std::size_t border_bytes = 0;
    if (border > 0)
      border_bytes = border_codec->compress_raw(
          reinterpret_cast<const T*>(main_stream.data() + main_bytes - border * word),
          border_stream.data(), border_stream.size());

    std::vector<std::byte> head(high_ratio_header_bytes);
    std::memcpy(head.data(), magic, 4);
    head[4] = static_cast<std::byte>(version);
    std::uint64_t area = 0;
    std::size_t total = 0;
    {
      const call_guard<ExecSpace> guard(nullptr);
      const auto src = source();
      if (blocks > 0) {
        Kokkos::deep_copy(exec, counts, std::uint64_t{0});
        using grayer = gray_and_count<bits_type, chunks, slot_words, ExecSpace, DeviceSchedule>;
        Kokkos::parallel_for("ndzip::high_ratio::gray_and_count", grayer::make_policy(exec, blocks),
                             grayer{src, gray_slots.data(), words.data(), counts.data()});
      }
      auto host_counts = Kokkos::create_mirror_view(Kokkos::HostSpace(), counts);
      Kokkos::deep_copy(exec, host_counts, counts);
      exec.fence();
      auto host_encoder = Kokkos::create_mirror_view(Kokkos::HostSpace(), encoder);
      for (int t = 0; t < tables; ++t) {
        const code_lengths code = build_code(host_counts.data() + t * alphabet);
        const std::size_t at = head.size();
        head.resize(at + serialized_bytes(code));
        serialize(code, head.data() + at);
        encoder_entries(code, host_encoder.data() + t * alphabet);
      }
      head.resize(padded(head.size()));
      Kokkos::deep_copy(exec, encoder, host_encoder);
      if (blocks > 0) {
        using sizer = size_block_streams<bits_type, chunks, slot_words, ExecSpace>;
        Kokkos::parallel_for("ndzip::high_ratio::size_block_streams",
                             sizer::make_policy(exec, blocks),
                             sizer{gray_slots.data(), words.data(), encoder.data(),
                                   stream_bytes.data(), sizes.data()});
        scan_block_ends(exec, sizes.data(), ends.data(), blocks, status.data() + 1);
        area = read_status()[1];  // fences
      }
      total = head.size() + 8 * blocks + area + tail * word;
    }
    if (total >= high_ratio_header_bytes + main_bytes) {
      // Coding would not shrink the stream: the ndzip stream goes, stored.
      const std::size_t stored = high_ratio_header_bytes + main_bytes;
      check_capacity(stored, capacity);
      head.resize(high_ratio_header_bytes);
      head[5] = static_cast<std::byte>(coding::stored);
      write_host_bytes(stream, head);
      copy(stream + high_ratio_header_bytes, main_stream.data(), main_bytes);
      exec.fence();
      return stored;
    }
    check_capacity(total, capacity);
    head[5] = static_cast<std::byte>(coding::coded);
    store_u64_host(head.data() + 8, area);
    const call_guard<ExecSpace> guard(nullptr);
    write_host_bytes(stream, head);
    std::byte* table = stream + head.size();
    std::byte* coded = table + 8 * blocks;
    if (blocks > 0) {
      if constexpr (DeviceSchedule) {
        using writer = write_block_streams<bits_type, chunks, slot_words, ExecSpace>;
        Kokkos::parallel_for("ndzip::high_ratio::write_block_streams",
                             writer::make_policy(exec, blocks),
                             writer{gray_slots.data(), encoder.data(), stream_bytes.data(),
                                    ends.data(), table, coded});
      } else {
        Kokkos::parallel_for(
            "ndzip::high_ratio::write_blocks", Kokkos::RangePolicy<ExecSpace>(exec, 0, blocks),
            write_blocks<bits_type, chunks, slot_words>{
                gray_slots.data(), encoder.data(), stream_bytes.data(), ends.data(), table, coded});
      }
    }
    copy(coded + area, border_stream.data() + border_bytes - tail * word, tail * word);
    exec.fence();
    return total;
  }

  std::size_t decompress(const std::byte* stream, std::size_t size, T* values) {
    if (reinterpret_cast<std::uintptr_t>(stream) % 8 != 0)
      throw std::invalid_argument("ndzip: a high-ratio stream buffer must be aligned to 8 bytes");
    detail::check_disjoint(values, layout.grid.size() * word, stream, size);
    const std::lock_guard<std::mutex> lock(calls);
    // The header and the code tables, read on the host.
    const std::size_t most = high_ratio_header_bytes + tables * (1 + alphabet / 2) + 8;
    std::vector<std::byte> head(std::min(size, most));
    {
      const call_guard<ExecSpace> guard(nullptr);
      Kokkos::deep_copy(exec,
                        Kokkos::View<std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                            head.data(), head.size()),
                        unmanaged_bytes(const_cast<std::byte*>(stream), head.size()));
      exec.fence();
    }
    if (head.size() < high_ratio_header_bytes)
      throw stream_error("ndzip: the high-ratio stream holds " + std::to_string(size) +
                         " bytes, fewer than its " + std::to_string(high_ratio_header_bytes) +
                         "-byte header");
    if (std::memcmp(head.data(), magic, 4) != 0)
      throw stream_error("ndzip: not a high-ratio stream (its first bytes are not \"NDZH\")");
    if (static_cast<unsigned>(head[4]) != version)
      throw stream_error("ndzip: high-ratio stream version " +
                         std::to_string(static_cast<unsigned>(head[4])) +
                         " (this library reads version 1)");
    if (head[6] != std::byte{0} || head[7] != std::byte{0})
      throw stream_error("ndzip: high-ratio stream with non-zero reserved bytes");
    const auto how = static_cast<unsigned>(head[5]);
    const std::uint64_t area = load_u64(head.data() + 8);
    if (how == static_cast<unsigned>(coding::stored)) {
      if (area != 0) throw stream_error("ndzip: stored high-ratio stream with a coded-area length");
      return high_ratio_header_bytes + main_codec.decompress_raw(stream + high_ratio_header_bytes,
                                                                 size - high_ratio_header_bytes,
                                                                 values);
    }
    if (how != static_cast<unsigned>(coding::coded))
      throw stream_error("ndzip: high-ratio stream with unknown coding " + std::to_string(how));

    std::size_t at = high_ratio_header_bytes;
    auto host_decoder = Kokkos::create_mirror_view(Kokkos::HostSpace(), decoder);
    for (int t = 0; t < tables; ++t) {
      code_lengths code;
      const char* why = nullptr;
      const std::size_t read = parse(head.data() + at, head.size() - at, code, why);
      if (read == 0)
        throw stream_error("ndzip: high-ratio stream, code table " + std::to_string(t) + ": " +
                           why);
      at += read;
      decoder_entries(code, host_decoder.data() + t * decoder_table_size);
    }
    const std::size_t table_at = padded(at);
    const std::size_t area_at = table_at + 8 * blocks;
    const std::size_t tail_bytes = tail * word;
    if (size < area_at || size - area_at < tail_bytes || area > size - area_at - tail_bytes)
      throw stream_error("ndzip: the high-ratio stream is truncated: " + std::to_string(size) +
                         " bytes, but its tables and a coded area of " + std::to_string(area) +
                         " bytes need more");
    for (std::size_t k = at; k < table_at; ++k)
      if (k >= head.size() || head[k] != std::byte{0})
        throw stream_error("ndzip: high-ratio stream with non-zero padding after its tables");
    const std::size_t total = area_at + area + tail_bytes;
    if (blocks == 0 && area != 0)
      throw stream_error("ndzip: high-ratio stream with a coded area of " + std::to_string(area) +
                         " bytes but no blocks");

    std::uint64_t main_words = 0, border_words = 0;
    {
      const call_guard<ExecSpace> guard(nullptr);
      Kokkos::deep_copy(exec, decoder, host_decoder);
      Kokkos::deep_copy(exec, status, std::uint64_t{0});
      Kokkos::deep_copy(exec, Kokkos::subview(status, 0), no_failure);
      if (blocks > 0) {
        if (slots.extent(0) == 0) {
          // The decoder's own scratch: the ndzip blocks and (on a device) the streams' states.
          slots = decltype(slots)(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::high_ratio::slots"),
              blocks * slot_words);
          if constexpr (DeviceSchedule)
            states = decltype(states)(
                Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::high_ratio::states"),
                blocks * streams_per_block);
        }
        const decoder_inputs<bits_type, slot_words> in{
            stream + table_at, blocks,       stream + area_at, area, decoder.data(),
            gray_slots.data(), status.data()};
        if constexpr (!DeviceSchedule) {
          Kokkos::parallel_for("ndzip::high_ratio::decode_blocks",
                               Kokkos::RangePolicy<ExecSpace>(exec, 0, blocks),
                               decode_blocks<bits_type, chunks, slot_words>{in});
        } else {
          // A device needs more threads than blocks: one per code stream, in two steps.
          const Kokkos::RangePolicy<ExecSpace> per_stream(exec, 0, blocks * streams_per_block);
          decode_streams<bits_type, chunks, slot_words> decode{in, states.data(), false};
          Kokkos::parallel_for("ndzip::high_ratio::decode_heads", per_stream, decode);
          decode.columns = true;
          Kokkos::parallel_for("ndzip::high_ratio::decode_columns", per_stream, decode);
        }
        using ungrayer = ungray_blocks<bits_type, chunks, slot_words, ExecSpace, DeviceSchedule>;
        Kokkos::parallel_for("ndzip::high_ratio::ungray_blocks",
                             ungrayer::make_policy(exec, blocks),
                             ungrayer{gray_slots.data(), slots.data(), sizes.data()});
      }
      place_blocks<bits_type, slot_words>(exec, slots.data(), sizes.data(), ends.data(), 0,
                                          layout.hypercube_count, main_stream.data(),
                                          layout.header_bytes(), status.data() + 2);
      const auto state = read_status();
      if (state[0] != no_failure) throw stream_error(describe_failure(state[0]));
      main_words = layout.hypercube_count > 0 ? state[2] : 0;
      if (border_blocks > 0) {
        place_blocks<bits_type, slot_words>(
            exec, slots.data(), sizes.data(), ends.data(), layout.hypercube_count, border_blocks,
            border_stream.data(), border_header(), status.data() + 3);
        border_words = read_status()[3];
      }
    }
    if (border > 0) {
      const std::size_t border_bytes = border_header() + (border_words + tail) * word;
      copy(border_stream.data() + border_bytes - tail_bytes, stream + area_at + area, tail_bytes);
      border_codec->decompress_raw(
          border_stream.data(), border_bytes,
          reinterpret_cast<T*>(main_stream.data() + layout.stream_bytes(main_words) -
                               border * word));
    }
    main_codec.decompress_raw(main_stream.data(), layout.stream_bytes(main_words), values);
    return total;
  }

  std::string describe_failure(std::uint64_t key) const {
    const std::uint64_t block = key / 8;
    const char* what = "";
    switch (static_cast<block_failure>(key % 8)) {
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

  static void check_capacity(std::size_t needed, std::size_t capacity) {
    if (needed > capacity)
      throw capacity_error("ndzip: the high-ratio stream needs " + std::to_string(needed) +
                           " bytes but the output holds only " + std::to_string(capacity));
  }
  static void store_u64_host(std::byte* at, std::uint64_t v) { store_u64(at, v); }
  void write_host_bytes(std::byte* to, const std::vector<std::byte>& bytes) {
    Kokkos::deep_copy(exec, unmanaged_bytes(to, bytes.size()),
                      Kokkos::View<const std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          bytes.data(), bytes.size()));
    exec.fence();  // the host bytes go out of scope
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

}  // namespace ndzip
