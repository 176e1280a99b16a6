// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The code tables of the high-ratio stream (docs/FORMAT.md, "The high-ratio stream"): canonical
// Huffman codes over byte values, at most max_code_length bits long, built on the host from
// symbol counts (deterministically, so that every backend writes the same stream), written as
// one byte plus 128 bytes of 4-bit lengths, and read back with every property checked.

#include <array>
#include <cstddef>
#include <cstdint>

namespace ndzip::core::high_ratio {

inline constexpr int max_code_length = 12;
inline constexpr int alphabet = 256;

// A code: each symbol's length in bits (0: no code) and the longest (0: the code is unused).
struct code_lengths {
  std::uint8_t longest = 0;
  std::array<std::uint8_t, alphabet> length{};
};

// Optimal lengths for these counts where none exceeds max_code_length; otherwise the counts are
// halved (rounding up, so no used symbol is lost) until none does. A single used symbol gets
// one bit.
code_lengths build_code(const std::uint64_t* counts);

// The canonical codes of a code, bit-reversed (the stream fills bytes from their least
// significant bit, and a code goes most significant bit first): symbol s -> its reversed code
// in the low 16 bits and its length above them (0 for a symbol without a code).
void encoder_entries(const code_lengths& code, std::uint32_t* entries /* [alphabet] */);

// The decoding table of a code: decoder_table_size entries indexed by the next max_code_length
// bits of the stream (first bit least significant; a code's entry repeats for every value of
// the bits behind it, so that every table is read alike); each is the symbol in the low byte
// and its length above it, or 0 where no code starts with those bits (everywhere for an unused
// code).
inline constexpr std::size_t decoder_table_size = std::size_t{1} << max_code_length;
void decoder_entries(const code_lengths& code, std::uint16_t* entries /* [decoder_table_size] */);

// Serialised size: 1 byte for an unused code, 1 + 128 otherwise.
std::size_t serialized_bytes(const code_lengths& code);
void serialize(const code_lengths& code, std::byte* out);

// Reads a code from `in` (`available` bytes), checking that the longest length is 0 to
// max_code_length and is the longest of the lengths, that some symbol has a code where the
// code is used, and Kraft's inequality. Returns the bytes read, or 0 and a reason in `error`.
std::size_t parse(const std::byte* in, std::size_t available, code_lengths& code,
                  const char*& error);

}  // namespace ndzip::core::high_ratio
