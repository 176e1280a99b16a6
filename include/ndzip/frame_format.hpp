// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The ndzip frame: a raw ndzip stream records neither its element type nor its extents nor its
// own length, and a stream decoded with the wrong extents may well succeed with garbage. A frame
// puts a fixed 48-byte header in front of the stream that records all three and a checksum, so
// that a file or message can be read back without metadata kept elsewhere and damage is found
// before decoding. Versions 1 to 3, every integer little-endian (docs/FORMAT.md):
//
//   offset  size  field
//        0     4  magic "NDZK"
//        4     1  frame version: 1, 2 for a frame that records its codec mode, 3 for a frame
//                 whose stream codes its array folded (ndzip/folding.hpp)
//        5     1  element type: 1 = float (binary32), 2 = double (binary64)
//        6     1  dimensions, 1..3
//        7     1  version 1: reserved, 0; version 2: codec mode, 0 = ndzip, 1 = high-ratio;
//                 version 3: codec mode + 16 * the coded grid's dimensions (1 .. dimensions-1)
//        8    24  extents N0, N1, N2 (uint64, slowest first; those past `dimensions` are 0)
//       32     8  stream length in bytes (uint64)
//       40     8  XXH3-64 (seed 0) of bytes 0..39 followed by the stream
//       48     -  the stream (the raw ndzip stream, or the high-ratio stream in mode 1) of the
//                 array, or in version 3 of the array folded, exactly `stream length` bytes
//
// Frames of the default mode are written as version 1, byte for byte as before the high-ratio
// mode existed; high-ratio frames as version 2, which readers of version 1 refuse; frames of a
// folded array as version 3, which readers of versions 1 and 2 refuse.
//
// This header needs no Kokkos: it reads and writes headers and checks whole frames in host
// memory. ndzip/frame.hpp compresses Kokkos Views into frames and decodes frames into Views.
// Every check that fails throws ndzip::frame_error saying what is wrong; nothing here reads
// outside the bytes it is given.

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ndzip/codec_mode.hpp"
#include "ndzip/error.hpp"
#include "ndzip/export.hpp"

namespace ndzip {

// The element types a frame records, with the codes of its byte 5.
enum class element_type : std::uint8_t { float32 = 1, float64 = 2 };

template <class T>
constexpr element_type element_type_of() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "ndzip compresses float and double");
  return std::is_same_v<T, float> ? element_type::float32 : element_type::float64;
}

inline constexpr std::size_t frame_header_bytes = 48;
// "NDZK", the first bytes of every frame, whatever its version.
inline constexpr std::array<std::byte, 4> frame_magic = {std::byte{'N'}, std::byte{'D'},
                                                         std::byte{'Z'}, std::byte{'K'}};
// The version of default-mode frames. Readers take it and frame_version_with_mode; a header of
// any other version is refused.
inline constexpr std::uint8_t frame_version = 1;
// The version that records the codec mode in byte 7.
inline constexpr std::uint8_t frame_version_with_mode = 2;
// The version whose stream codes the array folded to fewer dimensions, recorded in byte 7 with
// the mode. Written only for folded arrays: an array coded in its own rank keeps version 1 or 2.
inline constexpr std::uint8_t frame_version_folded = 3;

// What a frame's header records.
struct frame_info {
  element_type type = element_type::float32;
  int dimensions = 0;                      // 1..3
  std::array<std::uint64_t, 3> extents{};  // slowest first; those past `dimensions` are 0
  std::uint64_t stream_bytes = 0;          // length of the raw stream after the header
  std::uint64_t checksum = 0;              // as recorded
  codec_mode mode = codec_mode::ndzip;     // from byte 7 in versions 2 and 3; ndzip in 1
  // The rank of the grid the stream codes: the array's slowest dimensions merged down to it
  // (ndzip::coded_shape_of); `dimensions` in versions 1 and 2.
  int coded_dimensions = 0;

  // Header and stream. A header that read_frame_header accepted announces a stream no longer
  // than compressed_size_bound of its array, so this does not overflow.
  std::size_t frame_bytes() const {
    return frame_header_bytes + static_cast<std::size_t>(stream_bytes);
  }
};

// Reads the header at the start of the `size` bytes at `data` and looks no further, for a reader
// that reads the header first to learn how much follows. Throws ndzip::frame_error unless the
// magic matches as far as the bytes go ("not a frame") and there are 48 bytes ("truncated"),
// the version is 1, 2 or 3 (with a known mode, and in version 3 a coded rank below the array's),
// the type code, the dimension count and the reserved byte are valid, the extents are at least 1
// up to `dimensions` and 0 past it, the ndzip format can hold the grid coded, and a grid of this
// type and these extents can compress to a stream of the recorded length.
NDZIP_EXPORT frame_info read_frame_header(const std::byte* data, std::size_t size);

// Throws ndzip::frame_error unless a frame of `frame_size` bytes holds exactly the stream its
// header announces (no stream cut short, no bytes after it): for a reader that knows the size of
// a file before reading it.
NDZIP_EXPORT void check_frame_size(const frame_info& header, std::uint64_t frame_size);

// Checks the frame at `data` without decoding it: read_frame_header, and that `size` is exactly
// the header plus the stream it announces. Does not verify the checksum.
NDZIP_EXPORT frame_info inspect_frame(const std::byte* data, std::size_t size);

// The checksum a frame of `size` bytes (at least the header) should record: XXH3-64 (seed 0) of
// its bytes 0..39 followed by its bytes 48..size-1, every byte but the checksum itself.
NDZIP_EXPORT std::uint64_t frame_checksum(const std::byte* data, std::size_t size);

// inspect_frame, then throws ndzip::frame_error unless the frame hashes to the checksum its
// header records.
NDZIP_EXPORT void verify_frame_checksum(const std::byte* data, std::size_t size);

// The complete header, checksum included, of a frame around the stream of `stream_bytes` bytes
// at `stream` (coded in `mode`), which holds an array of this type and these extents (slowest
// first; those past `dimensions` are 0) coded as the grid of `coded_dimensions` its slowest
// dimensions merge into (0, or `dimensions`: coded as it is). Version 3 for a folded grid, else
// 1 for the ndzip mode and 2 for another. Throws std::invalid_argument, naming what is wrong,
// where read_frame_header would refuse the result: a writer never writes a frame that readers
// refuse.
NDZIP_EXPORT std::array<std::byte, frame_header_bytes> encode_frame_header(
    element_type type, int dimensions, const std::array<std::uint64_t, 3>& extents,
    const std::byte* stream, std::size_t stream_bytes, codec_mode mode = codec_mode::ndzip,
    int coded_dimensions = 0);

}  // namespace ndzip
