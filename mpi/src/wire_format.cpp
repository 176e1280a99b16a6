// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ndzip/mpi/detail/core/wire_format.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

// XXH3-64 compiled into this file only (header-only mode), as in core/frame.cpp.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ndzip::mpi::detail {

namespace {

// "ndzmpi" and the format version, little-endian.
constexpr std::byte transfer_magic[6] = {std::byte{'n'}, std::byte{'d'}, std::byte{'z'},
                                         std::byte{'m'}, std::byte{'p'}, std::byte{'i'}};
constexpr std::uint16_t wire_version = 1;
constexpr std::uint32_t flag_checksummed = 1;
constexpr std::uint32_t flag_plain = 2;

std::uint64_t xxh3(const std::byte* data, std::size_t bytes) { return XXH3_64bits(data, bytes); }

}  // namespace

// The checksum of a segment: XXH3-64 of its head's first 24 bytes followed by the XXH3-64 (8
// bytes, little-endian) of each 1 MiB piece of its payload, so that the pieces are hashed in
// parallel: one thread hashing a whole 16 MiB segment on each side took longer than moving it
// between two ranks of an H200 node.
std::uint64_t segment_checksum(const std::byte* segment, std::uint64_t payload_bytes) {
  constexpr std::uint64_t piece = std::uint64_t{1} << 20;
  const std::uint64_t pieces = (payload_bytes + piece - 1) / piece;
  std::vector<std::byte> digest(24 + 8 * pieces);
  std::memcpy(digest.data(), segment, 24);
  const std::byte* payload = segment + segment_head_bytes;
  const auto count = static_cast<std::int64_t>(pieces);
#pragma omp parallel for schedule(static) if (count > 1)
  for (std::int64_t p = 0; p < count; ++p) {
    const std::uint64_t first = static_cast<std::uint64_t>(p) * piece;
    put_le(digest.data() + 24 + 8 * p,
        XXH3_64bits(payload + first, std::min(piece, payload_bytes - first)), 8);
  }
  return XXH3_64bits(digest.data(), digest.size());
}

std::uint64_t transfer_head::segments() const {
  if (extents[0] == 0 || extents[1] == 0 || extents[2] == 0) return 0;
  return (extents[0] + segment_rows - 1) / segment_rows;
}

std::uint64_t transfer_head::fewest_segment_rows() const {
  const std::uint64_t row = std::max<std::uint64_t>(row_bytes(), 1);
  return std::min<std::uint64_t>(extents[0], (smallest_segment_bytes + row - 1) / row);
}

std::uint64_t transfer_head::rows_of(std::uint64_t k) const {
  const std::uint64_t first = k * segment_rows;
  return std::min(segment_rows, extents[0] - first);
}

std::string transfer_head::describe() const {
  std::string s = type == element_code::float64 ? "double " : "float ";
  for (std::uint32_t a = 0; a < dims; ++a) {
    if (a) s += 'x';
    s += std::to_string(extents[a]);
  }
  return s;
}

// Layout: magic (6), version (2), type (4), dims (4), flags (4), reserved (4), extents (3 x 8),
// segment rows (8), XXH3-64 of the 56 bytes before it (8).
void write_transfer_head(const transfer_head& head, std::byte* out) {
  std::memset(out, 0, transfer_head_bytes);
  std::memcpy(out, transfer_magic, sizeof transfer_magic);
  put_le(out + 6, wire_version, 2);
  put_le(out + 8, static_cast<std::uint32_t>(head.type), 4);
  put_le(out + 12, head.dims, 4);
  put_le(out + 16, (head.checksummed ? flag_checksummed : 0) | (head.plain ? flag_plain : 0), 4);
  for (int a = 0; a < 3; ++a) put_le(out + 24 + 8 * a, head.extents[a], 8);
  put_le(out + 48, head.segment_rows, 8);
  put_le(out + 56, xxh3(out, 56), 8);
}

transfer_head read_transfer_head(const std::byte* message, std::size_t message_bytes) {
  const auto damaged = [](const std::string& what) {
    return stream_error(
        "ndzip::mpi: the received message is not an ndzip::mpi transfer or is "
        "damaged: " +
        what);
  };
  if (message_bytes < transfer_head_bytes)
    throw damaged(std::to_string(message_bytes) + " bytes, fewer than its " +
                  std::to_string(transfer_head_bytes) + "-byte head");
  if (std::memcmp(message, transfer_magic, sizeof transfer_magic) != 0)
    throw damaged("no \"ndzmpi\" magic");
  if (const auto version = get_le(message + 6, 2); version != wire_version)
    throw damaged("wire format version " + std::to_string(version) + ", this library reads " +
                  std::to_string(wire_version));
  if (get_le(message + 56, 8) != xxh3(message, 56)) throw damaged("the head's checksum differs");
  transfer_head head;
  const auto type = get_le(message + 8, 4);
  head.dims = static_cast<std::uint32_t>(get_le(message + 12, 4));
  const auto flags = get_le(message + 16, 4);
  for (int a = 0; a < 3; ++a) head.extents[a] = get_le(message + 24 + 8 * a, 8);
  head.segment_rows = get_le(message + 48, 8);
  if (type > 1) throw damaged("element type code " + std::to_string(type));
  head.type = static_cast<element_code>(type);
  if (head.dims < 1 || head.dims > 3) throw damaged("rank " + std::to_string(head.dims));
  if ((flags & ~std::uint64_t{flag_checksummed | flag_plain}) != 0)
    throw damaged("unknown flags " + std::to_string(flags));
  head.checksummed = (flags & flag_checksummed) != 0;
  head.plain = (flags & flag_plain) != 0;
  if (head.checksummed && head.plain)
    throw damaged("a plain transfer with checksums (plain values carry none)");
  for (std::uint32_t a = head.dims; a < 3; ++a)
    if (head.extents[a] != 1) throw damaged("an extent past its rank");
  // segments() divides by the rows: they are checked first.
  const bool empty = head.extents[0] == 0 || head.extents[1] == 0 || head.extents[2] == 0;
  if (!empty && (head.segment_rows == 0 || head.segment_rows > head.extents[0]))
    throw damaged(std::to_string(head.segment_rows) + " rows per segment of " +
                  std::to_string(head.extents[0]));
  if (!empty && head.segment_rows < head.fewest_segment_rows())
    throw damaged(std::to_string(head.segment_rows) + " rows per segment of " +
                  std::to_string(head.row_bytes()) + " bytes each, fewer than the " +
                  std::to_string(head.fewest_segment_rows()) + " that hold the " +
                  std::to_string(smallest_segment_bytes) + " bytes a segment holds at least");
  return head;
}

// Layout: magic (4), kind (4), index (8), payload bytes (8), XXH3-64 of the 24 bytes before it
// and the payload, or 0 (8).
void write_segment_head(const segment_head& head, bool checksum, std::byte* out) {
  put_segment_head(out, head.kind, head.index, head.payload_bytes, 0);
  if (checksum) put_le(out + 24, segment_checksum(out, head.payload_bytes), 8);
}

segment_head read_segment_head(const std::byte* segment, std::size_t bytes, std::uint64_t index,
                               std::uint64_t raw_bytes, bool checksummed) {
  const auto damaged = [&](const std::string& what) {
    return stream_error("ndzip::mpi: segment " + std::to_string(index) +
                        " of the received message is damaged: " + what);
  };
  if (bytes == 0)
    throw stream_error("ndzip::mpi: segment " + std::to_string(index) +
                       " of the received message is empty: the sending rank gave the transfer "
                       "up after an error there");
  if (bytes < segment_head_bytes)
    throw damaged(std::to_string(bytes) + " bytes, fewer than its head");
  if (get_le(segment, 4) != segment_magic) throw damaged("no segment magic");
  segment_head head;
  const auto kind = get_le(segment + 4, 4);
  head.index = get_le(segment + 8, 8);
  head.payload_bytes = get_le(segment + 16, 8);
  if (kind > 1) throw damaged("segment kind " + std::to_string(kind));
  head.kind = static_cast<segment_kind>(kind);
  if (head.index != index) throw damaged("it says it is segment " + std::to_string(head.index));
  if (head.payload_bytes != bytes - segment_head_bytes)
    throw damaged("its head announces " + std::to_string(head.payload_bytes) +
                  " payload bytes, the message holds " +
                  std::to_string(bytes - segment_head_bytes) + " (truncated?)");
  if (head.kind == segment_kind::raw ? head.payload_bytes != raw_bytes
                                     : head.payload_bytes >= raw_bytes)
    throw damaged(std::to_string(head.payload_bytes) + " payload bytes of " +
                  (head.kind == segment_kind::raw ? "raw values" : "ndzip stream") +
                  " for a slab of " + std::to_string(raw_bytes) + " bytes");
  if (checksummed && segment_checksum(segment, head.payload_bytes) != get_le(segment + 24, 8))
    throw damaged("checksum mismatch (XXH3-64)");
  return head;
}

}  // namespace ndzip::mpi::detail
