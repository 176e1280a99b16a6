// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The bytes ndzip::mpi puts on the wire (docs/FORMAT.md "MPI messages"; NCCL transfers carry
// the same heads), where segment k of a transfer lies in its View, and the checks a receiver
// makes before it trusts a head. Every link uses them; nothing here calls MPI. Not part of the
// API.
//
// A transfer of one View is one or more MPI messages on the caller's (communicator, tag), sent
// in order, so that MPI's non-overtaking rule keeps them in order:
//   message 0   transfer head (64 bytes), then segment 0 (if the View has any element)
//   message k   segment k, for k = 1 .. segments - 1
// A segment is a slab of whole rows of the slowest dimension: a segment head (32 bytes), then
// either the segment's bare ndzip stream or, where that would not be smaller, its raw values.
// A plain transfer (the head's flag; options::compression) carries the values as they are:
//   message 0       transfer head alone
//   message k + 1   the values of segment k, nothing else, for k = 0 .. segments - 1

#include <Kokkos_Macros.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "ndzip/error.hpp"
#include "ndzip/export.hpp"
#include "ndzip/mpi/detail/core/little_endian.hpp"

namespace ndzip::mpi::detail {

inline constexpr std::size_t transfer_head_bytes = 64;
inline constexpr std::size_t segment_head_bytes = 32;
inline constexpr std::uint32_t segment_magic = 0x6773'7a6e;  // "nzsg"
// The largest message this library sends: MPI counts are int.
inline constexpr std::uint64_t largest_message = std::uint64_t{1} << 30;
// The fewest bytes of values a segment holds (whole rows; all rows where the View has fewer):
// smaller segments cost a message, a kernel launch and a 4 KiB buffer each for little data, and
// a receiver must not be made to hold a buffer per element. Senders round options::segment_bytes
// up to it, receivers refuse heads with smaller segments.
inline constexpr std::uint64_t smallest_segment_bytes = 4096;

// The room a transfer of one segment takes in its one message: both heads, then the stream or,
// where the stream would not be smaller, the raw values; so at most the larger of the two.
constexpr std::uint64_t one_segment_message_bytes(std::uint64_t raw_bytes,
                                                  std::uint64_t stream_bound) {
  return transfer_head_bytes + segment_head_bytes +
         (raw_bytes > stream_bound ? raw_bytes : stream_bound);
}

enum class element_code : std::uint32_t { float32 = 0, float64 = 1 };
enum class segment_kind : std::uint32_t { stream = 0, raw = 1 };

template <class T>
constexpr element_code element_code_of() {
  return sizeof(T) == 4 ? element_code::float32 : element_code::float64;
}

struct transfer_head {
  element_code type = element_code::float32;
  std::uint32_t dims = 1;
  bool checksummed = false;
  bool plain = false;  // the values as they are, one message per segment, no segment heads
  std::array<std::uint64_t, 3> extents = {0, 1, 1};  // View extents; 1 past `dims`
  std::uint64_t segment_rows = 1;                    // rows of the slowest dimension per segment

  std::size_t element_bytes() const { return type == element_code::float64 ? 8 : 4; }
  // Bytes of one row of the slowest dimension.
  std::uint64_t row_bytes() const { return element_bytes() * extents[1] * extents[2]; }
  // Bytes of all the View's values.
  std::uint64_t values_bytes() const { return extents[0] * row_bytes(); }
  // Number of segments: 0 for a View without elements (segment_rows must be 1 or more).
  std::uint64_t segments() const;
  // The fewest rows a segment may hold (smallest_segment_bytes, at most all rows).
  std::uint64_t fewest_segment_rows() const;
  // Rows of segment `k` (the last one may be shorter).
  std::uint64_t rows_of(std::uint64_t k) const;
  // Where segment k's slab begins in the View's values (C order), in elements.
  std::uint64_t slab_offset(std::uint64_t k) const {
    return k * segment_rows * extents[1] * extents[2];
  }
  // The bytes of segment k's values.
  std::uint64_t slab_bytes(std::uint64_t k) const { return rows_of(k) * row_bytes(); }
  // "float 64x96x3" (type and extents, for messages).
  std::string describe() const;
};

// Writes `head` into 64 bytes at `out`, with a checksum of its own.
NDZIP_EXPORT void write_transfer_head(const transfer_head& head, std::byte* out);
// The transfer head of a received message 0 of `message_bytes` bytes. Throws
// ndzip::stream_error if the message is shorter than a head, or the head is damaged (magic,
// version, checksum) or inconsistent (type, rank, rows).
NDZIP_EXPORT transfer_head read_transfer_head(const std::byte* message, std::size_t message_bytes);

struct segment_head {
  segment_kind kind = segment_kind::stream;
  std::uint64_t index = 0;
  std::uint64_t payload_bytes = 0;
};

// Writes a segment head, its checksum field `checksum`, on the host or in a kernel. Layout:
// magic (4), kind (4), index (8), payload bytes (8), checksum or 0 (8).
KOKKOS_INLINE_FUNCTION void put_segment_head(std::byte* out, segment_kind kind, std::uint64_t index,
                                             std::uint64_t payload_bytes, std::uint64_t checksum) {
  put_le(out, segment_magic, 4);
  put_le(out + 4, static_cast<std::uint32_t>(kind), 4);
  put_le(out + 8, index, 8);
  put_le(out + 16, payload_bytes, 8);
  put_le(out + 24, checksum, 8);
}

// The payload size a segment head announces (unchecked: read_segment_head checks it).
inline std::uint64_t announced_payload_bytes(const std::byte* head) { return get_le(head + 16, 8); }

// Writes the head of a segment whose payload is already in place after it (at out + 32); with
// `checksum`, the XXH3-64 of the head's first 24 bytes and the payload (host memory).
NDZIP_EXPORT void write_segment_head(const segment_head& head, bool checksum, std::byte* out);
// The checksum write_segment_head writes, of a segment in host memory whose head's first 24
// bytes are written.
NDZIP_EXPORT std::uint64_t segment_checksum(const std::byte* segment, std::uint64_t payload_bytes);
// Checks a received segment of `bytes` bytes (head and payload, host memory): magic, kind,
// index `index`, a payload of exactly the bytes that arrived, at most `raw_bytes` (exactly that
// for raw values), and the checksum where the transfer has one. Throws ndzip::stream_error
// naming the segment.
NDZIP_EXPORT segment_head read_segment_head(const std::byte* segment, std::size_t bytes,
                                            std::uint64_t index, std::uint64_t raw_bytes,
                                            bool checksummed);

}  // namespace ndzip::mpi::detail
