// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The bytes ndzip::mpi puts on the wire (docs/FORMAT.md "MPI messages"), and the checks a
// receiver makes before it trusts them. Not part of the API.
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

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "ndzip/error.hpp"
#include "ndzip/export.hpp"
#include "ndzip/mpi/detail/segment_head.hpp"
#include "ndzip/mpi/error.hpp"

namespace ndzip::mpi::detail {

inline constexpr std::size_t transfer_head_bytes = 64;
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
  // Number of segments: 0 for a View without elements (segment_rows must be 1 or more).
  std::uint64_t segments() const;
  // The fewest rows a segment may hold (smallest_segment_bytes, at most all rows).
  std::uint64_t fewest_segment_rows() const;
  // Rows of segment `k` (the last one may be shorter).
  std::uint64_t rows_of(std::uint64_t k) const;
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

// Throws std::logic_error unless MPI is initialised (and not finalised) with a thread level
// that allows this call from this thread: MPI_THREAD_FUNNELED or more, from the main thread
// below MPI_THREAD_SERIALIZED.
NDZIP_EXPORT void require_mpi_ready(const char* call);
// Whether MPI_Finalize has been called: no MPI call may follow it, so a request left over then
// can neither complete nor be waited for.
NDZIP_EXPORT bool mpi_finalized();
// Throws ndzip::mpi::error with MPI's message unless `rc` is MPI_SUCCESS.
NDZIP_EXPORT void check(int rc, const char* what);
// Held while receives take and handle their messages (matching.hpp) and while a send posts its
// messages: with MPI_THREAD_MULTIPLE, another ndzip::mpi call on the same (communicator, peer,
// tag) could otherwise take one of them, or interleave its messages with them.
NDZIP_EXPORT std::mutex& matching_mutex();

}  // namespace ndzip::mpi::detail
