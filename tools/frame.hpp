// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The tool's container around a raw ndzip stream. A raw stream records neither element type nor
// extents nor its own length, so the tool wraps it in a fixed 48-byte header:
//
//   Frame layout, version 1 (every integer little-endian)
//   offset  size  field
//        0     4  magic "NDZK" (4E 44 5A 4B)
//        4     1  frame version = 1
//        5     1  element type: 1 = float (IEEE-754 binary32), 2 = double (binary64)
//        6     1  dimensions, 1..3
//        7     1  reserved, 0
//        8    24  extents N0, N1, N2 as uint64, slowest first; those past `dimensions` are 0,
//                 the others are at least 1
//       32     8  stream length in bytes (uint64)
//       40     8  checksum: XXH3-64 (seed 0) of bytes 0..39 followed by the stream, so that
//                 it covers every other byte of the file (a damaged extent is caught too)
//       48     -  the raw ndzip stream: exactly `stream length` bytes, nothing after it
//
// A reader rejects any other magic, version, type code, dimension count or reserved value,
// zero or stray extents, an array whose byte size overflows, and a file whose length is not
// exactly 48 + stream length. The checksum is verified before the stream is decoded.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "array_desc.hpp"
#include "bytes.hpp"

namespace ndzip_cli {

inline constexpr std::size_t frame_header_size = 48;
inline constexpr std::uint8_t frame_version = 1;

inline constexpr std::size_t frame_checksum_offset = 40;

struct frame_header {
  array_desc array;
  std::uint64_t stream_length = 0;
  std::uint64_t checksum = 0;  // as stored
};

// The checksum of a frame: XXH3-64 (seed 0) of its first 40 bytes (`head`) and then `stream`.
std::uint64_t frame_checksum(byte_span head, byte_span stream);
// The checksum `file` (at least frame_checksum_offset bytes) should store.
inline std::uint64_t frame_checksum(byte_span file) {
  return frame_checksum({file.data, frame_checksum_offset}, file.from(frame_header_size));
}

// "0x0123456789abcdef".
std::string checksum_string(std::uint64_t checksum);

// The complete header of a frame around `stream`, checksum included.
std::array<std::byte, frame_header_size> encode_frame_header(const array_desc& array,
                                                             byte_span stream);

// Parses and validates the header at the start of `head` and looks no further: magic, version,
// type, dimensions, reserved byte, extents. A `head` shorter than frame_header_size is reported
// as truncated, or as not a frame if what there is of the magic is wrong. Throws
// std::runtime_error saying what is wrong.
frame_header parse_frame_header(byte_span head);

// Throws std::runtime_error unless a frame file of `file_size` bytes holds exactly the stream
// its header announces: it is not truncated and has no trailing data.
void check_frame_size(const frame_header& header, std::uint64_t file_size);

// Parses and validates the header of the frame `file` and checks that exactly `stream_length`
// bytes follow it (parse_frame_header and check_frame_size). Does not verify the checksum.
frame_header parse_frame(byte_span file);

// The stream inside a frame that parse_frame accepted.
inline byte_span frame_stream(byte_span file) {
  return file.from(frame_header_size);
}

// Throws std::runtime_error unless `file`, which parse_frame accepted as `header`, hashes to the
// checksum it stores.
void verify_checksum(const frame_header& header, byte_span file);

}  // namespace ndzip_cli
