// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What every frame version shares (src/frame.cpp: versions 1 to 3; src/chunked_frame.cpp:
// version 4): little-endian fields, XXH3-64 over parts, the text of arrays and checksums in
// messages, and the check that a stream length fits its grid. Not part of the API.

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "ndzip/export.hpp"
#include "ndzip/frame_format.hpp"

namespace ndzip::detail {

inline void put_u64(std::byte* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(v >> (8 * i));
}
inline std::uint64_t get_u64(const std::byte* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{std::to_integer<std::uint8_t>(in[i])} << (8 * i);
  return v;
}
inline std::uint8_t get_u8(const std::byte* in) { return std::to_integer<std::uint8_t>(*in); }

// A message of this library without the "ndzip: " it starts with, to be quoted in another.
inline std::string without_prefix(const char* message) {
  const std::string text = message;
  const std::string prefix = "ndzip: ";
  return text.compare(0, prefix.size(), prefix) == 0 ? text.substr(prefix.size()) : text;
}

struct byte_span {
  const std::byte* data;
  std::size_t size;
};
// XXH3-64 (seed 0) of the parts, one after the other.
NDZIP_EXPORT std::uint64_t xxh3_of(std::initializer_list<byte_span> parts);

// "float 100x200" (extents slowest first).
NDZIP_EXPORT std::string describe_elements(element_type type, int dimensions,
                                           const std::array<std::uint64_t, 3>& extents);
// "0x0123456789abcdef".
NDZIP_EXPORT std::string checksum_text(std::uint64_t checksum);

// Throws ndzip::frame_error ("not a valid ndzip frame: ..." or "inconsistent frame: ...")
// unless the ndzip format can hold the grid `info` codes and its stream length is one that grid
// can compress to in its mode: what makes a stream length a safe bound for a reader to allocate.
NDZIP_EXPORT void check_coded_stream(const frame_info& info);

}  // namespace ndzip::detail
