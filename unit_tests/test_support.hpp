// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Test helpers that do not involve the codec: SHA-256, the embedded reference-vector manifest and
// access to the (optional) reference-vector files.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vector_generator.hpp"

namespace ndzip_test {

// Lower-case hex SHA-256 of a byte range (OpenSSL).
std::string sha256_hex(const void* data, std::size_t size);
template <class Container>
std::string sha256_hex(const Container& c) {
  return sha256_hex(c.data(), c.size() * sizeof(c[0]));
}

// One line of ../shared/vectors/manifest.csv, embedded by scripts/embed-vector-manifest.py.
struct reference_vector {
  const char* name;
  bool is_double;
  int dims;
  std::size_t extents[3];  // slowest first; unused axes are 1
  const char* input_sha256;
  const char* stream_sha256;
  std::size_t stream_bytes;
};

const std::vector<reference_vector>& reference_vectors();

// The reference-vector directory (the NDZIP_VECTORS_DIR CMake cache variable, or the environment
// variable of the same name if set) and whether it holds the manifest.
std::string vectors_dir();
bool vectors_available();
// The whole file, or nothing if it cannot be read.
std::optional<std::vector<unsigned char>> read_file(const std::string& path);
// The vector's input or stream file in vectors_dir() (or nothing if missing).
std::optional<std::vector<unsigned char>> read_vector_input(const reference_vector& v);
std::optional<std::vector<unsigned char>> read_vector_stream(const reference_vector& v);

// Little-endian bytes of a word array, and back.
template <class Bits>
std::vector<unsigned char> to_le_bytes(const std::vector<Bits>& words) {
  std::vector<unsigned char> bytes(words.size() * sizeof(Bits));
  for (std::size_t i = 0; i < words.size(); ++i)
    for (std::size_t b = 0; b < sizeof(Bits); ++b)
      bytes[i * sizeof(Bits) + b] = static_cast<unsigned char>(words[i] >> (8 * b));
  return bytes;
}
template <class Bits>
std::vector<Bits> from_le_bytes(const std::vector<unsigned char>& bytes) {
  std::vector<Bits> words(bytes.size() / sizeof(Bits));
  for (std::size_t i = 0; i < words.size(); ++i)
    for (std::size_t b = 0; b < sizeof(Bits); ++b)
      words[i] |= static_cast<Bits>(bytes[i * sizeof(Bits) + b]) << (8 * b);
  return words;
}

// Reads / writes one little-endian 32-bit value inside a byte vector.
std::uint32_t load_u32(const std::vector<unsigned char>& bytes, std::size_t offset);
void store_u32(std::vector<unsigned char>& bytes, std::size_t offset, std::uint32_t value);

// The generator spec for an arbitrary family and shape (noise bits only for smooth/checker).
vector_spec make_spec(const std::string& family, int noise_bits, bool is_double, int dims,
                      std::array<std::size_t, 3> extents);

}  // namespace ndzip_test
