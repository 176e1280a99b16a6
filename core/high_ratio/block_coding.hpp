// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// One block of the high-ratio stream (docs/FORMAT.md, "The high-ratio stream"): the gray step
// over an ndzip block in column form and back, which of a gray block's bytes each of its code
// streams codes and with which table, and the bit strings the codes fill. Used by the kernels
// of core/high_ratio/engine.hpp on every backend alike.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include "backends/bit_count.hpp"
#include "core/high_ratio/huffman.hpp"

namespace ndzip::core::high_ratio {

// Code tables: one per byte of a head word, then by a column's rank among its chunk's present
// planes (0, 1, 2, 3 and lower).
template <class Bits>
inline constexpr int table_count = static_cast<int>(sizeof(Bits)) + 4;

template <class Bits>
KOKKOS_INLINE_FUNCTION constexpr int column_table(int rank) {
  return static_cast<int>(sizeof(Bits)) + (rank < 3 ? rank : 3);
}

template <class Bits>
KOKKOS_INLINE_FUNCTION int popcount(Bits v) {
  return backend::popcount(v);
}

template <class Bits>
KOKKOS_INLINE_FUNCTION constexpr Bits plane_bit(int b) {
  return static_cast<Bits>(Bits{1} << b);
}

// Calls column(plane, gray column) for every plane of one chunk of an ndzip block from the top,
// given its head and its columns (most significant plane first); returns the gray head. The
// top two planes pass unchanged, every lower one is XORed with the plane above it.
template <class Bits, class Column>
KOKKOS_INLINE_FUNCTION Bits gray_chunk(Bits head, const Bits* columns, const Column& column) {
  constexpr int w = static_cast<int>(sizeof(Bits) * 8);
  Bits above = 0, gray_head = 0;
  int next = 0;
  for (int b = w - 1; b >= 0; --b) {
    const Bits col = (head & plane_bit<Bits>(b)) ? columns[next++] : Bits{0};
    const Bits gray = b >= w - 2 ? col : static_cast<Bits>(col ^ above);
    above = col;
    if (gray != 0) {
      gray_head |= plane_bit<Bits>(b);
      column(b, gray);
    }
  }
  return gray_head;
}

// The inverse of gray_chunk: next() gives a chunk's gray columns from the top (as its gray head
// announces them), column(plane, column) receives its ndzip columns from the top; returns the
// chunk's ndzip head.
template <class Bits, class Next, class Column>
KOKKOS_INLINE_FUNCTION Bits ungray_chunk(Bits gray_head, const Next& next, const Column& column) {
  constexpr int w = static_cast<int>(sizeof(Bits) * 8);
  Bits above = 0, head = 0;
  for (int b = w - 1; b >= 0; --b) {
    const Bits gray = (gray_head & plane_bit<Bits>(b)) ? next() : Bits{0};
    const Bits col = b >= w - 2 ? gray : static_cast<Bits>(gray ^ above);
    above = col;
    if (col != 0) {
      head |= plane_bit<Bits>(b);
      column(b, col);
    }
  }
  return head;
}

// A coded block's bytes (the gray block's bytes in memory order, little-endian words: its
// symbols) go to streams_per_block code streams in turn, symbol k to stream k mod S, so that
// S threads (or one core's pipeline) code and decode a block together. A coded block starts
// with the byte lengths of streams 0 to S-2 (uint16 each); the last stream ends with the block.
inline constexpr int streams_per_block = 8;
inline constexpr int stream_lengths_bytes = 2 * (streams_per_block - 1);

// Calls symbol(k, table) for the head symbols of stream `s`: byte k of the heads, from table
// k mod U.
template <class Bits, int Chunks, class Symbol>
KOKKOS_INLINE_FUNCTION void for_each_head_symbol(int s, const Symbol& symbol) {
  constexpr int u = static_cast<int>(sizeof(Bits));
  for (int k = s; k < Chunks * u; k += streams_per_block) symbol(k, k % u);
}

// Calls symbol(k, table) for the column symbols of stream `s` of the gray block whose heads are
// at `heads`: byte k of the block, from the table of its column's rank in its chunk. The column
// words start at byte H * U, a multiple of S, so stream s holds byte s mod U of every (S / U)-th
// column word from word s / U on: a thread visits only its own symbols (visiting every word and
// skipping the other streams' bytes left half of a device's threads idle on float blocks).
template <class Bits, int Chunks, class Symbol>
KOKKOS_INLINE_FUNCTION void for_each_column_symbol(const Bits* heads, int s, const Symbol& symbol) {
  constexpr int u = static_cast<int>(sizeof(Bits));
  constexpr int first = Chunks * u;
  static_assert(streams_per_block % u == 0 && first % streams_per_block == 0,
                "a stream takes the same byte of every (S / U)-th column word");
  constexpr int step = streams_per_block / u;
  const int byte = s % u;
  // Column words [chunk_start, chunk_end) belong to chunk c - 1.
  int chunk_start = 0, chunk_end = 0, c = 0;
  for (int w = s / u;; w += step) {
    while (w >= chunk_end) {
      if (c == Chunks) return;
      chunk_start = chunk_end;
      chunk_end += popcount(heads[c++]);
    }
    symbol(first + w * u + byte, column_table<Bits>(w - chunk_start));
  }
}

// A block's table entry: its end in the coded area, and this flag if it is stored.
inline constexpr std::uint64_t stored_flag = std::uint64_t{1} << 63;

KOKKOS_INLINE_FUNCTION std::uint64_t load_u64(const std::byte* at) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned>(at[i])) << 8 * i;
  return v;
}
KOKKOS_INLINE_FUNCTION void store_u64(std::byte* at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<std::byte>((v >> 8 * i) & 0xffu);
}

// Codes fill bytes from their least significant bit; an encoder entry (huffman.hpp) holds the
// reversed code in its low 16 bits and its length above.
struct bit_writer {
  std::byte* out = nullptr;
  std::uint64_t pending = 0;
  int bits = 0;

  KOKKOS_DEFAULTED_FUNCTION bit_writer() = default;
  KOKKOS_INLINE_FUNCTION explicit bit_writer(std::byte* to) : out(to) {}

  // Whole 32-bit words go out as they fill (a byte at a time cost a hard-to-predict branch per
  // code); at most 31 + 16 bits are held.
  KOKKOS_INLINE_FUNCTION void put(std::uint32_t entry) {
    pending |= static_cast<std::uint64_t>(entry & 0xffffu) << bits;
    bits += static_cast<int>(entry >> 16);
    if (bits >= 32) {
      for (int b = 0; b < 4; ++b) out[b] = static_cast<std::byte>((pending >> (8 * b)) & 0xffu);
      out += 4;
      pending >>= 32;
      bits -= 32;
    }
  }
  KOKKOS_INLINE_FUNCTION void finish() {
    for (; bits > 0; bits -= 8) {
      *out++ = static_cast<std::byte>(pending & 0xffu);
      pending >>= 8;
    }
    bits = 0;
  }
};

// Reads codes from [at, end), never past it; a code that runs past the end, or bits that start
// no code, make it fail (a failed stream's block is refused). Bits are loaded only when fewer than
// a longest code are held, eight bytes at a time where eight remain.
struct bit_reader {
  const std::byte* at = nullptr;
  const std::byte* end = nullptr;
  std::uint64_t pending = 0;
  int bits = 0;
  bool failed = false;

  KOKKOS_DEFAULTED_FUNCTION bit_reader() = default;
  KOKKOS_INLINE_FUNCTION bit_reader(const std::byte* from, const std::byte* to)
      : at(from), end(to) {}

  // Holds at least 56 bits afterwards unless the stream ends first.
  KOKKOS_INLINE_FUNCTION void refill() {
    if (end - at >= 12) {
      // The next eight bytes from three aligned words: a stream starts at a multiple of 8
      // bytes, so the words lie between its start and at + 12, inside it (three loads instead
      // of eight byte loads on a device).
      const auto address = reinterpret_cast<std::uintptr_t>(at);
      const auto* words = reinterpret_cast<const std::uint32_t*>(address & ~std::uintptr_t{3});
      const int shift = static_cast<int>(address & 3) * 8;
      const std::uint64_t low = words[0] | static_cast<std::uint64_t>(words[1]) << 32;
      const std::uint64_t word =
          shift == 0 ? low : low >> shift | static_cast<std::uint64_t>(words[2]) << (64 - shift);
      const int taken = (63 - bits) / 8;  // whole bytes that fit above the held bits
      pending |= (word & ((std::uint64_t{1} << (8 * taken)) - 1)) << bits;
      at += taken;
      bits += 8 * taken;
      return;
    }
    while (bits <= 56 && at < end) {
      pending |= static_cast<std::uint64_t>(static_cast<unsigned>(*at++)) << bits;
      bits += 8;
    }
  }

  // The next symbol with the decoder table `entries` (huffman.hpp); 0 where the bits start no
  // code or the code runs past the end, which fails the reader (what it reads after that does
  // not matter: a failed stream's block is refused).
  KOKKOS_INLINE_FUNCTION unsigned next(const std::uint16_t* entries) {
    if (bits < max_code_length) refill();
    return decode(entries);
  }

  // The same without a refill: the caller refills at least every codes_per_refill symbols
  // (every thread of a warp at the same symbol, where a refill per thread when its bits ran
  // low diverged).
  static constexpr int codes_per_refill = 56 / max_code_length;
  KOKKOS_INLINE_FUNCTION unsigned decode(const std::uint16_t* entries) {
    const unsigned entry = entries[pending & (decoder_table_size - 1)];
    const int length = static_cast<int>(entry >> 8);
    if (length == 0 || length > bits) {
      failed = true;
      return 0;
    }
    pending >>= length;
    bits -= length;
    return entry & 0xffu;
  }

  // Whether everything was read: at most the last byte's padding left, and that zero.
  KOKKOS_INLINE_FUNCTION bool at_end() const {
    return !failed && at == end && bits < 8 && pending == 0;
  }
};

}  // namespace ndzip::core::high_ratio
