// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Reproduces the inputs of the ndzip reference vectors (../shared/vectors/README.md) from their
// names, bit for bit: every family is defined on the integer bit pattern of each element.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ndzip_test {

inline constexpr std::uint64_t vector_seed = 20210602;

// Output number k (from 0) of SplitMix64 started from state `seed`.
std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t k);

// What a vector name `FAMILY[-bB]_{f32|f64}_{D}d_{N0}x{N1}x{N2}` says.
struct vector_spec {
  std::string family;  // smooth, checker, const, zeros, negzeros, random, nan, denormal, specials
  int noise_bits = 0;  // B (smooth and checker only)
  bool is_double = false;
  int dims = 1;
  std::array<std::size_t, 3> extents = {1, 1, 1};  // slowest first; unused axes are 1

  std::size_t size() const { return extents[0] * extents[1] * extents[2]; }
  std::size_t word_bytes() const { return is_double ? 8 : 4; }
  // The canonical name, e.g. "smooth-b8_f32_3d_40x50x37".
  std::string name() const;
};

// Parses a vector name; throws std::invalid_argument for anything malformed or unknown.
vector_spec parse_vector_name(const std::string& name);

// The element bit patterns in C order. The width must match spec.is_double (else
// std::invalid_argument).
std::vector<std::uint32_t> generate_bits32(const vector_spec& spec);
std::vector<std::uint64_t> generate_bits64(const vector_spec& spec);

template <class Bits>
std::vector<Bits> generate_bits(const vector_spec& spec);
template <>
inline std::vector<std::uint32_t> generate_bits<std::uint32_t>(const vector_spec& spec) {
  return generate_bits32(spec);
}
template <>
inline std::vector<std::uint64_t> generate_bits<std::uint64_t>(const vector_spec& spec) {
  return generate_bits64(spec);
}

// The raw little-endian bytes of the input, as in the NAME.f32 / NAME.f64 files.
std::vector<unsigned char> generate_bytes(const vector_spec& spec);

}  // namespace ndzip_test
