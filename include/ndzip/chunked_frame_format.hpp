// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The chunked frame (version 4, docs/FORMAT.md "The chunked frame, version 4"): an array of any
// size as independent slabs of rows along its slowest dimension, each slab a stream of either
// codec mode (its grid folded or not) with its own checksum, behind a 64-byte header and before
// an index of the slabs' offsets and a trailer:
//
//   header (64)  slab 0: head (32), stream, 0-7 zero bytes  ...  slab S-1  index (8 S)  trailer (32)
//
// A raw ndzip stream's offset table holds 32-bit word offsets, so one stream cannot hold every
// grid; a slab of fewer rows can. Each slab decodes on its own: a reader of part of an array
// reads only the slabs it touches, and a reader in order (a pipe) needs no index.
//
// This header needs no Kokkos: it writes and checks the frame's parts in host memory;
// ndzip/chunked_frame.hpp codes Kokkos Views into chunked frames and back. Every check that
// fails throws ndzip::frame_error saying what is wrong (and which slab); nothing here reads
// outside the bytes it is given.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ndzip/codec_mode.hpp"
#include "ndzip/export.hpp"
#include "ndzip/frame_format.hpp"

namespace ndzip {

inline constexpr std::uint8_t frame_version_chunked = 4;
inline constexpr std::size_t chunked_header_bytes = 64;
inline constexpr std::size_t slab_head_bytes = 32;
inline constexpr std::size_t chunked_trailer_bytes = 32;
// The most slabs a chunked frame holds.
inline constexpr std::uint64_t max_slab_count = std::uint64_t{1} << 32;

// What a chunked frame's header records.
struct chunked_frame_info {
  element_type type = element_type::float32;
  int dimensions = 0;                      // 1..3
  std::array<std::uint64_t, 3> extents{};  // slowest first; those past `dimensions` are 0
  std::uint64_t slab_rows = 0;             // R: rows of the slowest dimension per slab
  std::uint64_t slab_count = 0;            // S = ceil(N0 / R)

  // The first row of slab s and its extents (the array's, with its rows in the slowest).
  std::uint64_t first_row(std::uint64_t s) const { return s * slab_rows; }
  std::array<std::uint64_t, 3> slab_extents(std::uint64_t s) const {
    std::array<std::uint64_t, 3> e = extents;
    const std::uint64_t end = s + 1 == slab_count ? extents[0] : (s + 1) * slab_rows;
    e[0] = end - first_row(s);
    return e;
  }
};

// What a slab's head records.
struct slab_info {
  std::uint64_t index = 0;          // s
  codec_mode mode = codec_mode::ndzip;
  int coded_dimensions = 0;         // the rank of the grid its stream codes (its own, or folded)
  std::uint64_t stream_bytes = 0;   // L_s
  std::uint64_t checksum = 0;       // as recorded

  // The bytes the slab takes in the frame: its head, its stream and 0 to 7 zero bytes.
  std::uint64_t record_bytes() const { return (slab_head_bytes + stream_bytes + 7) / 8 * 8; }
};

// The header of a chunked frame of an array of this type and these extents (slowest first, 0
// past `dimensions`) in slabs of `slab_rows` rows. Throws std::invalid_argument where
// read_chunked_header would refuse it.
NDZIP_EXPORT std::array<std::byte, chunked_header_bytes> encode_chunked_header(
    element_type type, int dimensions, const std::array<std::uint64_t, 3>& extents,
    std::uint64_t slab_rows);

// Reads the header at the start of the `size` bytes at `data` (checks 1-6 of docs/FORMAT.md):
// magic (as far as the bytes go), 64 bytes, version 4, element type, dimensions, reserved bytes,
// extents, R in 1..N0, S = ceil(N0 / R) and at most max_slab_count, the header's checksum.
NDZIP_EXPORT chunked_frame_info read_chunked_header(const std::byte* data, std::size_t size);

// The head of slab s of the frame `frame` around its stream of `stream_bytes` bytes at
// `stream`, coded in `mode` as the grid of `coded_dimensions` (0: the slab's own rank) its
// slowest dimensions merge into. Throws std::invalid_argument where read_slab_head would refuse
// it.
NDZIP_EXPORT std::array<std::byte, slab_head_bytes> encode_slab_head(
    const chunked_frame_info& frame, std::uint64_t s, codec_mode mode, int coded_dimensions,
    const std::byte* stream, std::size_t stream_bytes);

// Reads slab s's head from the `size` bytes at `data` (check 7): magic, reserved bytes, a known
// mode and coded rank, its own index, a grid the ndzip format can hold and a stream length its
// mode allows for that grid, which bounds what a reader reads next.
NDZIP_EXPORT slab_info read_slab_head(const chunked_frame_info& frame, std::uint64_t s,
                                      const std::byte* data, std::size_t size);

// Check 8: the slab record at `record` (its head, then `available` bytes at least
// slab.record_bytes() in all) hashes to its head's checksum and its padding is zeros.
NDZIP_EXPORT void verify_slab(const slab_info& slab, const std::byte* record,
                              std::size_t available);

// The frame's end: the index of the slabs' offsets (from the frame's first byte) and the
// trailer, the index lying at `index_offset` (the end of the last slab).
NDZIP_EXPORT std::vector<std::byte> encode_chunked_end(const std::vector<std::uint64_t>& offsets,
                                                       std::uint64_t index_offset);

// Reads the index and trailer of the whole frame of `size` bytes at `data`, whose header is
// `frame` (checks 10-11, reading by index): the trailer's magic, reserved bytes, slab count,
// index offset and checksum, nothing after it, and offsets from 64 on, each at least 32 bytes
// past the one before and the last ending before the index. Returns the offsets.
NDZIP_EXPORT std::vector<std::uint64_t> read_chunked_index(const chunked_frame_info& frame,
                                                           const std::byte* data,
                                                           std::size_t size);

// The same checks on the frame's end alone, for a reader that holds no more of it: `size` bytes
// at `end` (8 S + 32: the index, then the trailer) that lie at `index_offset` in the frame,
// where a reader in order found them (the end of the last slab) or a reader of a file of known
// size looks for them (its size less 8 S + 32). Refuses `size` other than 8 S + 32 as
// truncated. Returns the offsets the index holds; a reader in order compares them with where
// it found the slabs.
NDZIP_EXPORT std::vector<std::uint64_t> read_chunked_end(const chunked_frame_info& frame,
                                                         const std::byte* end, std::size_t size,
                                                         std::uint64_t index_offset);

// A whole chunked frame read without decoding: its header, and each slab's offset and head.
struct chunked_frame_layout {
  chunked_frame_info frame;
  std::vector<std::uint64_t> offsets;  // of each slab's head from the frame's first byte
  std::vector<slab_info> slabs;
};

// Checks the whole frame of `size` bytes at `data` but its slabs' checksums: the header, the
// index and trailer, and every slab's head, each slab filling exactly the room the index gives
// it. A reader may size its output from the header then: every slab's stream is at least as
// long as the smallest stream of its grid, and all lie within `size` bytes. verify_slab checks
// a slab's checksum, before it is decoded.
NDZIP_EXPORT chunked_frame_layout inspect_chunked_frame(const std::byte* data, std::size_t size);

// The rows per slab a writer takes by default for this array in `mode`: about 64 MiB of values a
// slab, in whole layers of hypercubes where a slab holds one (so that no slab stores a border of
// its own: a slab costs its head and stream header), fewer where a slab's stream could exceed
// what the format holds, at least 1.
NDZIP_EXPORT std::uint64_t default_slab_rows(element_type type, int dimensions,
                                             const std::array<std::uint64_t, 3>& extents,
                                             codec_mode mode = codec_mode::ndzip);

// The most bytes a chunked frame of this array in slabs of `slab_rows` rows takes in `mode`
// (each slab at the larger of its stream bounds folded or not).
NDZIP_EXPORT std::uint64_t chunked_frame_bound(element_type type, int dimensions,
                                               const std::array<std::uint64_t, 3>& extents,
                                               std::uint64_t slab_rows,
                                               codec_mode mode = codec_mode::ndzip);

}  // namespace ndzip
