// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The high-ratio stream's encoder and decoder (docs/FORMAT.md, "The high-ratio stream"), for
// ndzip::high_ratio_compressor. Compression: the array's ndzip stream and its border's 1-D
// ndzip stream are made by two ndzip::compressors; a kernel writes every block's gray form into
// a slot of its own, a kernel counts its bytes per code table, the host builds the codes, a
// kernel sizes every code stream, a scan places the blocks, a kernel writes the streams.
// Decompression: kernels decode every code stream (heads, then columns) into the gray blocks,
// one turns them back into ndzip blocks, scans place those into the two ndzip streams, and the
// two compressors decode them (the border stream into the array stream's border).
//
// A gray block is one thread's work, a code stream one thread's (core/high_ratio/
// block_coding.hpp), on every backend.

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
#include "core/high_ratio/huffman.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/detail/disjoint.hpp"
#include "ndzip/error.hpp"
#include "ndzip/high_ratio.hpp"

namespace ndzip::core::high_ratio {

inline constexpr std::uint64_t stored_flag = std::uint64_t{1} << 63;
inline constexpr unsigned char magic[4] = {'N', 'D', 'Z', 'H'};
inline constexpr unsigned char version = 1;
enum class coding : unsigned char { coded = 0, stored = 1 };

// Why a block failed to decode (the low bits of a failure key; the block index above them).
enum class block_failure : std::uint64_t {
  table = 1,       // its end before its start, or past the coded area
  code = 2,        // bits that start no code, or a code running past the block's end
  leftover = 3,    // bytes or non-zero padding after its last code
  stored_size = 4  // a stored block whose length is not what its heads announce
};
inline constexpr std::uint64_t no_failure = ~std::uint64_t{0};

KOKKOS_INLINE_FUNCTION std::uint64_t load_u64(const std::byte* at) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned>(at[i])) << 8 * i;
  return v;
}
KOKKOS_INLINE_FUNCTION void store_u64(std::byte* at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<std::byte>((v >> 8 * i) & 0xffu);
}

// Where the blocks of the two ndzip streams are: the array's n hypercubes, then the border's.
template <class Bits>
struct block_source {
  const std::byte* main;    // the array's ndzip stream
  std::size_t main_blocks;  // n
  std::size_t main_header;  // its offset table's bytes (P)
  const std::byte* border;  // the border's 1-D ndzip stream
  std::size_t border_header;

  KOKKOS_INLINE_FUNCTION const Bits* block(std::size_t i) const {
    const bool in_main = i < main_blocks;
    const std::byte* stream = in_main ? main : border;
    const std::size_t k = in_main ? i : i - main_blocks;
    const auto* table = reinterpret_cast<const std::uint32_t*>(stream);
    const std::size_t start = k == 0 ? 0 : table[k - 1];
    return reinterpret_cast<const Bits*>(stream + (in_main ? main_header : border_header)) + start;
  }
};

// Every block's gray form into its slot (SlotWords words apart), its length in words into
// words[i].
template <class Bits, int Chunks, int SlotWords>
struct gray_blocks {
  block_source<Bits> source;
  Bits* slots;
  std::uint64_t* words;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    words[i] = static_cast<std::uint64_t>(
        gray_block<Bits, Chunks>(source.block(i), slots + i * static_cast<std::size_t>(SlotWords)));
  }
};

// The bytes of every gray block counted per code table into `counts`: a team per block counts
// into its scratch, one thread per code stream, then adds what it counted to `counts` (on a
// device, thousands of threads incrementing a few global counters one byte at a time waited
// on each other for milliseconds).
template <class Bits, int Chunks, int SlotWords, class ExecSpace>
struct count_bytes {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  static constexpr int bins = table_count<Bits> * alphabet;
  static constexpr std::size_t scratch_bytes = bins * sizeof(std::uint32_t);
  // One thread per code stream on a device; host teams are one thread.
  static constexpr int team_size =
      Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible ? 1
                                                                           : streams_per_block;
  const Bits* slots;
  std::uint64_t* counts;

  static policy make_policy(const ExecSpace& exec, std::size_t blocks) {
    return policy(exec, static_cast<int>(blocks), team_size)
        .set_scratch_size(0, Kokkos::PerTeam(scratch_bytes));
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename policy::member_type& member) const {
    const std::size_t bytes_of_scratch = scratch_bytes;
    auto* local = static_cast<std::uint32_t*>(member.team_scratch(0).get_shmem(bytes_of_scratch));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, bins), [&](int k) { local[k] = 0; });
    member.team_barrier();
    const Bits* gray = slots + member.league_rank() * static_cast<std::size_t>(SlotWords);
    const auto* bytes = reinterpret_cast<const unsigned char*>(gray);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, streams_per_block), [&](int s) {
      const auto count = [&](int k, int table) {
        std::uint32_t* bin = &local[table * alphabet + bytes[k]];
        // A host team is one thread: a plain increment (an atomic one costs a locked
        // instruction per byte).
        if constexpr (team_size == 1)
          ++*bin;
        else
          Kokkos::atomic_increment(bin);
      };
      for_each_head_symbol<Bits, Chunks>(s, count);
      for_each_column_symbol<Bits, Chunks>(gray, s, count);
    });
    member.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(member, bins), [&](int k) {
      if (local[k] != 0) Kokkos::atomic_add(&counts[k], static_cast<std::uint64_t>(local[k]));
    });
  }
};

// The coded bytes of stream s of block i (index i * S + s).
template <class Bits, int Chunks, int SlotWords>
struct size_streams {
  const Bits* slots;
  const std::uint32_t* encoder;  // table_count * alphabet entries
  std::uint64_t* stream_bytes;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t index) const {
    const std::size_t i = index / streams_per_block;
    const int s = static_cast<int>(index % streams_per_block);
    const Bits* gray = slots + i * static_cast<std::size_t>(SlotWords);
    const auto* bytes = reinterpret_cast<const unsigned char*>(gray);
    std::uint64_t bits = 0;
    const auto add = [&](int k, int table) { bits += encoder[table * alphabet + bytes[k]] >> 16; };
    for_each_head_symbol<Bits, Chunks>(s, add);
    for_each_column_symbol<Bits, Chunks>(gray, s, add);
    stream_bytes[index] = (bits + 7) / 8;
  }
};

// Each block's bytes, coded (its streams and their lengths) or stored, the shorter (stored_flag
// on the latter).
template <class Bits>
struct size_blocks {
  const std::uint64_t* words;
  const std::uint64_t* stream_bytes;
  std::uint64_t* sizes;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    std::uint64_t coded = stream_lengths_bytes;
    for (int s = 0; s < streams_per_block; ++s) coded += stream_bytes[i * streams_per_block + s];
    const std::uint64_t stored = words[i] * sizeof(Bits);
    sizes[i] = coded < stored ? coded : stored | stored_flag;
  }
};

// Block sizes -> block table entries (the end of each, with its flag); the coded area's length
// into *total.
template <class ExecSpace>
void scan_block_ends(const ExecSpace& exec, const std::uint64_t* sizes, std::uint64_t* ends,
                     std::size_t count, std::uint64_t* total) {
  Kokkos::parallel_scan(
      "ndzip::high_ratio::scan_block_ends",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0,
                                                                        static_cast<std::int64_t>(count)),
      KOKKOS_LAMBDA(std::int64_t i, std::uint64_t & sum, bool final) {
        sum += sizes[i] & ~stored_flag;
        if (final) {
          ends[i] = sum | (sizes[i] & stored_flag);
          if (i + 1 == static_cast<std::int64_t>(count)) *total = sum;
        }
      });
}

// Writes stream s of block i (index i * S + s), its length, and (s = 0) the block's table
// entry; a stored block's words are copied by its S threads in turn.
template <class Bits, int Chunks, int SlotWords>
struct write_streams {
  const Bits* slots;
  const std::uint64_t* words;
  const std::uint32_t* encoder;
  const std::uint64_t* stream_bytes;
  const std::uint64_t* ends;
  std::byte* table;  // the block table in the stream
  std::byte* area;   // the coded area

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t index) const {
    const std::size_t i = index / streams_per_block;
    const int s = static_cast<int>(index % streams_per_block);
    if (s == 0) store_u64(table + 8 * i, ends[i]);
    const std::uint64_t begin = i == 0 ? 0 : ends[i - 1] & ~stored_flag;
    const Bits* gray = slots + i * static_cast<std::size_t>(SlotWords);
    const auto* bytes = reinterpret_cast<const unsigned char*>(gray);
    if (ends[i] & stored_flag) {
      const std::uint64_t n = words[i] * sizeof(Bits);
      for (std::uint64_t k = static_cast<std::uint64_t>(s); k < n; k += streams_per_block)
        area[begin + k] = static_cast<std::byte>(bytes[k]);
      return;
    }
    const std::uint64_t* lengths = stream_bytes + i * streams_per_block;
    std::uint64_t at = begin + stream_lengths_bytes;
    for (int t = 0; t < s; ++t) at += lengths[t];
    if (s < streams_per_block - 1) {
      area[begin + 2 * s] = static_cast<std::byte>(lengths[s] & 0xffu);
      area[begin + 2 * s + 1] = static_cast<std::byte>(lengths[s] >> 8);
    }
    bit_writer writer(area + at);
    const auto put = [&](int k, int table) { writer.put(encoder[table * alphabet + bytes[k]]); };
    for_each_head_symbol<Bits, Chunks>(s, put);
    for_each_column_symbol<Bits, Chunks>(gray, s, put);
    writer.finish();
  }
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

// What the decoder of one stream keeps between the heads and the columns.
struct stream_state {
  std::uint64_t pending;
  std::uint64_t at;  // bytes of the stream read
  std::int64_t bits;
};

// The decoders: every stream of every coded block, in two steps (its head symbols, then, once all
// heads of the block are known, its column symbols), into the gray block's bytes in its slot;
// a stored block copied there by its stream threads. Failures go into *failure as a key (block
// index * 8 + why; the lowest wins).
template <class Bits, int Chunks, int SlotWords>
struct decode_streams {
  const std::byte* table;
  std::size_t blocks;
  const std::byte* area;
  std::uint64_t area_bytes;
  const std::uint16_t* decoder;  // table_count * decoder_table_size entries
  const std::uint8_t* longest;   // table_count
  Bits* slots;
  std::uint64_t* words;
  stream_state* states;
  std::uint64_t* failure;
  bool columns;  // false: the heads step, true: the columns step

  KOKKOS_INLINE_FUNCTION void fail(std::size_t i, block_failure why) const {
    Kokkos::atomic_fetch_min(failure,
                             static_cast<std::uint64_t>(i) * 8 + static_cast<std::uint64_t>(why));
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t index) const {
    const std::size_t i = index / streams_per_block;
    const int s = static_cast<int>(index % streams_per_block);
    const std::uint64_t end_entry = load_u64(table + 8 * i);
    const std::uint64_t begin = i == 0 ? 0 : load_u64(table + 8 * (i - 1)) & ~stored_flag;
    const std::uint64_t end = end_entry & ~stored_flag;
    Bits* gray = slots + i * static_cast<std::size_t>(SlotWords);
    auto* bytes = reinterpret_cast<unsigned char*>(gray);
    // The last block ends the coded area: no bytes lie unread behind it.
    const bool last = i + 1 == blocks;
    if (end < begin || end > area_bytes || (last && end != area_bytes)) {
      if (s == 0 && !columns) fail(i, block_failure::table);
      if (s == 0) words[i] = Chunks;
      return;
    }
    const std::byte* block = area + begin;
    const std::uint64_t block_bytes = end - begin;
    if (end_entry & stored_flag) {
      constexpr std::uint64_t head_bytes = Chunks * sizeof(Bits);
      if (!columns) {
        if (block_bytes < head_bytes || block_bytes > SlotWords * sizeof(Bits)) {
          if (s == 0) fail(i, block_failure::stored_size), words[i] = Chunks;
          return;
        }
        for (std::uint64_t k = static_cast<std::uint64_t>(s); k < block_bytes;
             k += streams_per_block)
          bytes[k] = static_cast<unsigned char>(block[k]);
      } else if (s == 0) {
        // The heads announce the length: exactly the block's.
        if (block_bytes < head_bytes || block_bytes > SlotWords * sizeof(Bits)) return;
        std::uint64_t n = Chunks;
        for (int k = 0; k < Chunks; ++k) n += popcount(gray[k]);
        if (n * sizeof(Bits) != block_bytes) {
          fail(i, block_failure::stored_size);
          n = Chunks;
        }
        words[i] = n;
      }
      return;
    }
    stream_range range;
    if (!locate_stream(block, block_bytes, s, range)) {
      if (s == 0 && !columns) fail(i, block_failure::table);
      if (s == 0) words[i] = Chunks;
      return;
    }
    bit_reader reader(block + range.begin, block + range.end);
    stream_state& state = states[index];
    const auto symbol = [&](int k, int t) {
      bytes[k] = static_cast<unsigned char>(
          reader.next(decoder + static_cast<std::size_t>(t) * decoder_table_size, longest[t]));
    };
    if (!columns) {
      for_each_head_symbol<Bits, Chunks>(s, symbol);
      if (reader.failed) fail(i, block_failure::code);
      state = {reader.pending, static_cast<std::uint64_t>(reader.at - (block + range.begin)),
               reader.failed ? -1 : reader.bits};
      return;
    }
    if (state.bits < 0) return;  // reported by the heads step
    reader.pending = state.pending;
    reader.at = block + range.begin + state.at;
    reader.bits = static_cast<int>(state.bits);
    for_each_column_symbol<Bits, Chunks>(gray, s, symbol);
    if (reader.failed) fail(i, block_failure::code);
    else if (!reader.at_end()) fail(i, block_failure::leftover);
    if (s == 0) {
      std::uint64_t n = Chunks;
      for (int k = 0; k < Chunks; ++k) n += popcount(gray[k]);
      words[i] = n;
    }
  }
};

// Gray blocks back into ndzip blocks: slot i of `gray` into slot i of `out`, its length in words
// into words[i].
template <class Bits, int Chunks, int SlotWords>
struct ungray_blocks {
  const Bits* gray;
  Bits* out;
  std::uint64_t* words;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    const Bits* in = gray + i * static_cast<std::size_t>(SlotWords);
    Bits* to = out + i * static_cast<std::size_t>(SlotWords);
    int next = Chunks, written = Chunks;
    for (int k = 0; k < Chunks; ++k)
      to[k] = ungray_chunk(
          in[k], [&]() { return in[next++]; }, [&](int, Bits c) { to[written++] = c; });
    words[i] = static_cast<std::uint64_t>(written);
  }
};

// Places decoded blocks into an ndzip stream: the offset table (and its padding word) and the
// blocks behind it; `first` is the stream's first block among the slots.
template <class Bits, int SlotWords, class ExecSpace>
void place_blocks(const ExecSpace& exec, const Bits* slots, const std::uint64_t* words,
                  std::uint64_t* ends, std::size_t first, std::size_t count, std::byte* stream,
                  std::size_t header_bytes, std::uint64_t* total) {
  if (count == 0) return;
  Kokkos::parallel_scan(
      "ndzip::high_ratio::scan_block_words",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0,
                                                                        static_cast<std::int64_t>(count)),
      KOKKOS_LAMBDA(std::int64_t i, std::uint64_t & sum, bool final) {
        sum += words[first + i];
        if (final) {
          ends[i] = sum;
          reinterpret_cast<std::uint32_t*>(stream)[i] = static_cast<std::uint32_t>(sum);
          if (i + 1 == static_cast<std::int64_t>(count)) {
            *total = sum;
            if (header_bytes > 4 * count) reinterpret_cast<std::uint32_t*>(stream)[count] = 0;
          }
        }
      });
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      "ndzip::high_ratio::place_blocks", policy(exec, static_cast<int>(count), Kokkos::AUTO),
      KOKKOS_LAMBDA(const typename policy::member_type& member) {
        const std::size_t i = member.league_rank();
        const std::uint64_t begin = i == 0 ? 0 : ends[i - 1];
        const Bits* from = slots + (first + i) * static_cast<std::size_t>(SlotWords);
        Bits* to = reinterpret_cast<Bits*>(stream + header_bytes) + begin;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(member, static_cast<int>(ends[i] - begin)),
                             [&](int j) { to[j] = from[j]; });
      });
}

template <class T, int Dims, class ExecSpace>
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
  Kokkos::View<std::uint8_t*, memory_space> longest;
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
    stream_bytes = decltype(stream_bytes)(
        view_alloc(WithoutInitializing, "ndzip::high_ratio::stream_bytes"),
        blocks * streams_per_block);
    sizes = decltype(sizes)(view_alloc(WithoutInitializing, "ndzip::high_ratio::sizes"), blocks);
    ends = decltype(ends)(view_alloc(WithoutInitializing, "ndzip::high_ratio::ends"), blocks);
    counts = decltype(counts)("ndzip::high_ratio::counts", tables * alphabet);
    encoder = decltype(encoder)("ndzip::high_ratio::encoder", tables * alphabet);
    decoder = decltype(decoder)("ndzip::high_ratio::decoder", tables * decoder_table_size);
    longest = decltype(longest)("ndzip::high_ratio::longest", tables);
    status = decltype(status)("ndzip::high_ratio::status", 4);
  }

  block_source<bits_type> source() const {
    return {main_stream.data(), layout.hypercube_count, layout.header_bytes(),
            border_stream.data(), border_header()};
  }
  std::size_t border_header() const {
    return (4 * border_blocks + word - 1) / word * word;
  }
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
        Kokkos::parallel_for(
            "ndzip::high_ratio::gray_blocks", Kokkos::RangePolicy<ExecSpace>(exec, 0, blocks),
            gray_blocks<bits_type, chunks, slot_words>{src, gray_slots.data(), words.data()});
        using counter = count_bytes<bits_type, chunks, slot_words, ExecSpace>;
        Kokkos::parallel_for("ndzip::high_ratio::count_bytes", counter::make_policy(exec, blocks),
                             counter{gray_slots.data(), counts.data()});
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
        Kokkos::parallel_for(
            "ndzip::high_ratio::size_streams",
            Kokkos::RangePolicy<ExecSpace>(exec, 0, blocks * streams_per_block),
            size_streams<bits_type, chunks, slot_words>{gray_slots.data(), encoder.data(),
                                                        stream_bytes.data()});
        Kokkos::parallel_for(
            "ndzip::high_ratio::size_blocks", Kokkos::RangePolicy<ExecSpace>(exec, 0, blocks),
            size_blocks<bits_type>{words.data(), stream_bytes.data(), sizes.data()});
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
    if (blocks > 0)
      Kokkos::parallel_for(
          "ndzip::high_ratio::write_streams",
          Kokkos::RangePolicy<ExecSpace>(exec, 0, blocks * streams_per_block),
          write_streams<bits_type, chunks, slot_words>{gray_slots.data(), words.data(),
                                                       encoder.data(), stream_bytes.data(),
                                                       ends.data(), table, coded});
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
      if (area != 0)
        throw stream_error("ndzip: stored high-ratio stream with a coded-area length");
      return high_ratio_header_bytes +
             main_codec.decompress_raw(stream + high_ratio_header_bytes,
                                       size - high_ratio_header_bytes, values);
    }
    if (how != static_cast<unsigned>(coding::coded))
      throw stream_error("ndzip: high-ratio stream with unknown coding " + std::to_string(how));

    std::size_t at = high_ratio_header_bytes;
    auto host_decoder = Kokkos::create_mirror_view(Kokkos::HostSpace(), decoder);
    auto host_longest = Kokkos::create_mirror_view(Kokkos::HostSpace(), longest);
    for (int t = 0; t < tables; ++t) {
      code_lengths code;
      const char* why = nullptr;
      const std::size_t read = parse(head.data() + at, head.size() - at, code, why);
      if (read == 0)
        throw stream_error("ndzip: high-ratio stream, code table " + std::to_string(t) + ": " +
                           why);
      at += read;
      decoder_entries(code, host_decoder.data() + t * decoder_table_size);
      host_longest(t) = code.longest;
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
      Kokkos::deep_copy(exec, longest, host_longest);
      Kokkos::deep_copy(exec, status, std::uint64_t{0});
      Kokkos::deep_copy(exec, Kokkos::subview(status, 0), no_failure);
      if (blocks > 0) {
        if (slots.extent(0) == 0) {
          // The decoder's own scratch: the ndzip blocks and the streams' states.
          slots = decltype(slots)(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::high_ratio::slots"),
              blocks * slot_words);
          states = decltype(states)(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::high_ratio::states"),
              blocks * streams_per_block);
        }
        const Kokkos::RangePolicy<ExecSpace> per_stream(exec, 0, blocks * streams_per_block);
        decode_streams<bits_type, chunks, slot_words> decode{
            stream + table_at, blocks,        stream + area_at, area,          decoder.data(),
            longest.data(),    gray_slots.data(), words.data(), states.data(), status.data(),
            false};
        Kokkos::parallel_for("ndzip::high_ratio::decode_heads", per_stream, decode);
        decode.columns = true;
        Kokkos::parallel_for("ndzip::high_ratio::decode_columns", per_stream, decode);
        Kokkos::parallel_for(
            "ndzip::high_ratio::ungray_blocks", Kokkos::RangePolicy<ExecSpace>(exec, 0, blocks),
            ungray_blocks<bits_type, chunks, slot_words>{gray_slots.data(), slots.data(),
                                                         sizes.data()});
      }
      place_blocks<bits_type, slot_words>(exec, slots.data(), sizes.data(), ends.data(), 0,
                                          layout.hypercube_count, main_stream.data(),
                                          layout.header_bytes(), status.data() + 2);
      const auto state = read_status();
      if (state[0] != no_failure) throw stream_error(describe_failure(state[0]));
      main_words = layout.hypercube_count > 0 ? state[2] : 0;
      if (border_blocks > 0) {
        place_blocks<bits_type, slot_words>(exec, slots.data(), sizes.data(), ends.data(),
                                            layout.hypercube_count, border_blocks,
                                            border_stream.data(), border_header(),
                                            status.data() + 3);
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
        what = "its block-table entry lies before its start or past the coded area (or, for the "
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
