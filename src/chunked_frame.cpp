// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The chunked frame's parts and their checks (ndzip/chunked_frame_format.hpp; docs/FORMAT.md
// "The chunked frame, version 4").

#include "ndzip/chunked_frame_format.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ndzip/array_shape.hpp"
#include "ndzip/detail/frame_bytes.hpp"
#include "ndzip/folding.hpp"
#include "ndzip/stream_size.hpp"

namespace ndzip {

namespace {

using detail::get_u64;
using detail::get_u8;
using detail::put_u64;
using detail::without_prefix;

constexpr std::array<std::byte, 4> slab_magic = {std::byte{'N'}, std::byte{'Z'}, std::byte{'S'},
                                                 std::byte{'L'}};
constexpr std::array<std::byte, 4> trailer_magic = {std::byte{'N'}, std::byte{'Z'},
                                                    std::byte{'I'}, std::byte{'X'}};
constexpr std::size_t header_checksum_offset = 56;
constexpr std::size_t slab_checksum_offset = 24;
constexpr std::size_t trailer_checksum_offset = 24;
// A slab head's byte 4: the codec mode's code below, the coded rank above (0: not folded).
constexpr unsigned mode_bits = 0x0f;
constexpr unsigned coded_rank_shift = 4;

[[noreturn]] void not_chunked(const std::string& what) {
  throw frame_error("ndzip: not a valid chunked ndzip frame: " + what);
}

std::string slab_name(std::uint64_t s) { return "slab " + std::to_string(s); }

bool starts_with(const std::byte* data, std::size_t size, const std::array<std::byte, 4>& magic) {
  for (std::size_t i = 0; i < magic.size() && i < size; ++i)
    if (data[i] != magic[i]) return false;
  return true;
}

// The frame_info of a slab's stream, for the checks the frames of versions 1 to 3 make of theirs.
frame_info slab_stream_info(const chunked_frame_info& frame, std::uint64_t s, codec_mode mode,
                            int coded_dimensions, std::uint64_t stream_bytes) {
  frame_info info;
  info.type = frame.type;
  info.dimensions = frame.dimensions;
  info.extents = frame.slab_extents(s);
  info.stream_bytes = stream_bytes;
  info.mode = mode;
  info.coded_dimensions = coded_dimensions == 0 ? frame.dimensions : coded_dimensions;
  return info;
}

// The most bytes a slab of these extents takes in its record (head, stream, padding), folded or
// not as a writer chooses; std::invalid_argument where the format cannot hold it.
std::uint64_t slab_record_bound(element_type type, int dimensions,
                                const std::array<std::uint64_t, 3>& extents, codec_mode mode) {
  const array_shape shape(type, dimensions, extents.data());
  std::uint64_t largest = 0;
  for (const folding f : {folding::none, folding::automatic})
    visit_shape(coded_shape(shape, f), [&](auto tag, const auto& grid) {
      using T = typename decltype(tag)::type;
      largest = std::max<std::uint64_t>(largest, compressed_size_bound<T>(grid, mode));
    });
  return (slab_head_bytes + largest + 7) / 8 * 8;
}

}  // namespace

std::array<std::byte, chunked_header_bytes> encode_chunked_header(
    element_type type, int dimensions, const std::array<std::uint64_t, 3>& extents,
    std::uint64_t slab_rows) {
  std::array<std::byte, chunked_header_bytes> header{};
  for (std::size_t i = 0; i < frame_magic.size(); ++i) header[i] = frame_magic[i];
  header[4] = std::byte{frame_version_chunked};
  header[5] = static_cast<std::byte>(type);
  header[6] = static_cast<std::byte>(dimensions);
  for (int a = 0; a < 3; ++a) put_u64(&header[8 + 8 * a], extents[a]);
  put_u64(&header[32], slab_rows);
  const std::uint64_t n0 = extents[0];
  put_u64(&header[40], slab_rows == 0 ? 0 : n0 / slab_rows + (n0 % slab_rows != 0));
  put_u64(&header[header_checksum_offset], detail::xxh3_of({{header.data(), 56}}));
  try {
    read_chunked_header(header.data(), header.size());
  } catch (const frame_error& e) {
    throw std::invalid_argument("ndzip: a reader would refuse this chunked frame header: " +
                                without_prefix(e.what()));
  }
  return header;
}

chunked_frame_info read_chunked_header(const std::byte* data, std::size_t size) {
  if (!starts_with(data, size, frame_magic)) not_chunked("it does not start with \"NDZK\"");
  if (size < chunked_header_bytes)
    not_chunked("truncated header (" + std::to_string(size) + " of " +
                std::to_string(chunked_header_bytes) + " bytes)");
  const std::uint8_t version = get_u8(data + 4);
  if (version != frame_version_chunked)
    not_chunked("frame version " + std::to_string(version) + ", not " +
                std::to_string(frame_version_chunked) + " (a chunked frame)");
  chunked_frame_info info;
  const std::uint8_t type = get_u8(data + 5);
  if (type != static_cast<std::uint8_t>(element_type::float32) &&
      type != static_cast<std::uint8_t>(element_type::float64))
    not_chunked("unknown element type code " + std::to_string(type) + " (1 = float, 2 = double)");
  info.type = static_cast<element_type>(type);
  info.dimensions = get_u8(data + 6);
  if (info.dimensions < 1 || info.dimensions > 3)
    not_chunked("bad dimension count " + std::to_string(info.dimensions) + " (must be 1, 2 or 3)");
  if (get_u8(data + 7) != 0 || get_u64(data + 48) != 0) not_chunked("reserved bytes are not 0");
  for (int a = 0; a < 3; ++a) {
    const std::uint64_t n = get_u64(data + 8 + 8 * a);
    info.extents[a] = n;
    if (a < info.dimensions && n == 0) not_chunked("extent N" + std::to_string(a) + " is 0");
    if (a >= info.dimensions && n != 0)
      not_chunked("extent N" + std::to_string(a) + " is " + std::to_string(n) + " in a " +
                  std::to_string(info.dimensions) + "-D frame (must be 0)");
  }
  try {
    array_shape(info.type, info.dimensions, info.extents.data()).byte_size();
  } catch (const std::overflow_error&) {
    not_chunked("a " + detail::describe_elements(info.type, info.dimensions, info.extents) +
                " array is too large to address");
  }
  info.slab_rows = get_u64(data + 32);
  info.slab_count = get_u64(data + 40);
  const std::uint64_t n0 = info.extents[0];
  if (info.slab_rows < 1 || info.slab_rows > n0)
    not_chunked(std::to_string(info.slab_rows) + " rows per slab in an array of " +
                std::to_string(n0) + " rows (must be 1 to " + std::to_string(n0) + ")");
  const std::uint64_t expected = n0 / info.slab_rows + (n0 % info.slab_rows != 0);
  if (info.slab_count != expected)
    not_chunked(std::to_string(info.slab_count) + " slabs where " + std::to_string(n0) +
                " rows in slabs of " + std::to_string(info.slab_rows) + " make " +
                std::to_string(expected));
  if (info.slab_count > max_slab_count)
    not_chunked(std::to_string(info.slab_count) + " slabs (at most 2^32)");
  const std::uint64_t recorded = get_u64(data + header_checksum_offset);
  const std::uint64_t actual = detail::xxh3_of({{data, header_checksum_offset}});
  if (recorded != actual)
    throw frame_error("ndzip: chunked frame header checksum mismatch: it records XXH3-64 " +
                      detail::checksum_text(recorded) + " but hashes to " +
                      detail::checksum_text(actual) + " (the header is damaged)");
  return info;
}

std::array<std::byte, slab_head_bytes> encode_slab_head(const chunked_frame_info& frame,
                                                        std::uint64_t s, codec_mode mode,
                                                        int coded_dimensions,
                                                        const std::byte* stream,
                                                        std::size_t stream_bytes) {
  if (stream == nullptr && stream_bytes > 0)
    throw std::invalid_argument("ndzip: encode_slab_head: null stream of " +
                                std::to_string(stream_bytes) + " bytes");
  if (coded_dimensions == frame.dimensions) coded_dimensions = 0;
  std::array<std::byte, slab_head_bytes> head{};
  for (std::size_t i = 0; i < slab_magic.size(); ++i) head[i] = slab_magic[i];
  head[4] = static_cast<std::byte>(static_cast<unsigned>(mode) |
                                   static_cast<unsigned>(coded_dimensions) << coded_rank_shift);
  put_u64(&head[8], s);
  put_u64(&head[16], stream_bytes);
  try {
    read_slab_head(frame, s, head.data(), head.size());
  } catch (const frame_error& e) {
    throw std::invalid_argument("ndzip: a reader would refuse this slab head: " +
                                without_prefix(e.what()));
  }
  put_u64(&head[slab_checksum_offset],
          detail::xxh3_of({{head.data(), slab_checksum_offset}, {stream, stream_bytes}}));
  return head;
}

slab_info read_slab_head(const chunked_frame_info& frame, std::uint64_t s, const std::byte* data,
                         std::size_t size) {
  const std::string where = "ndzip: chunked frame, " + slab_name(s) + ": ";
  if (!starts_with(data, size, slab_magic))
    throw frame_error(where + "its head does not start with \"NZSL\"");
  if (size < slab_head_bytes)
    throw frame_error(where + "truncated head (" + std::to_string(size) + " of " +
                      std::to_string(slab_head_bytes) + " bytes)");
  if (get_u8(data + 5) != 0 || get_u8(data + 6) != 0 || get_u8(data + 7) != 0)
    throw frame_error(where + "reserved bytes are not 0");
  slab_info slab;
  const unsigned byte4 = get_u8(data + 4);
  const std::optional<codec_mode> mode = codec_mode_of_code(byte4 & mode_bits);
  if (!mode)
    throw frame_error(where + "unknown codec mode " + std::to_string(byte4 & mode_bits) + " (" +
                      codec_mode_codes() + ")");
  slab.mode = *mode;
  slab.coded_dimensions = static_cast<int>(byte4 >> coded_rank_shift);
  if (slab.coded_dimensions >= frame.dimensions)
    throw frame_error(where + "a " + std::to_string(frame.dimensions) + "-D slab coded as " +
                      std::to_string(slab.coded_dimensions) +
                      "-D (0: as it is, else fewer dimensions)");
  if (slab.coded_dimensions == 0) slab.coded_dimensions = frame.dimensions;
  slab.index = get_u64(data + 8);
  if (slab.index != s)
    throw frame_error(where + "its head says it is " + slab_name(slab.index) +
                      " (slabs out of order, or the index points elsewhere)");
  slab.stream_bytes = get_u64(data + 16);
  slab.checksum = get_u64(data + slab_checksum_offset);
  try {
    detail::check_coded_stream(
        slab_stream_info(frame, s, slab.mode, slab.coded_dimensions, slab.stream_bytes));
  } catch (const frame_error& e) {
    throw frame_error(where + without_prefix(e.what()));
  }
  return slab;
}

void verify_slab(const slab_info& slab, const std::byte* record, std::size_t available) {
  const std::string where = "ndzip: chunked frame, " + slab_name(slab.index) + ": ";
  if (available < slab.record_bytes())
    throw frame_error(where + "truncated: its head announces " +
                      std::to_string(slab.record_bytes()) + " bytes with its stream, " +
                      std::to_string(available) + " are there");
  const std::byte* stream = record + slab_head_bytes;
  const std::uint64_t actual = detail::xxh3_of(
      {{record, slab_checksum_offset}, {stream, static_cast<std::size_t>(slab.stream_bytes)}});
  if (actual != slab.checksum)
    throw frame_error(where + "checksum mismatch: its head records XXH3-64 " +
                      detail::checksum_text(slab.checksum) + " but it hashes to " +
                      detail::checksum_text(actual) + " (the slab is damaged)");
  for (std::size_t i = slab_head_bytes + slab.stream_bytes; i < slab.record_bytes(); ++i)
    if (record[i] != std::byte{0}) throw frame_error(where + "its padding is not zeros");
}

std::vector<std::byte> encode_chunked_end(const std::vector<std::uint64_t>& offsets,
                                          std::uint64_t index_offset) {
  std::vector<std::byte> end(8 * offsets.size() + chunked_trailer_bytes);
  for (std::size_t s = 0; s < offsets.size(); ++s) put_u64(&end[8 * s], offsets[s]);
  std::byte* trailer = end.data() + 8 * offsets.size();
  for (std::size_t i = 0; i < trailer_magic.size(); ++i) trailer[i] = trailer_magic[i];
  put_u64(trailer + 8, offsets.size());
  put_u64(trailer + 16, index_offset);
  put_u64(trailer + trailer_checksum_offset,
          detail::xxh3_of({{end.data(), 8 * offsets.size() + trailer_checksum_offset}}));
  return end;
}

std::vector<std::uint64_t> read_chunked_index(const chunked_frame_info& frame,
                                              const std::byte* data, std::size_t size) {
  const std::uint64_t s_count = frame.slab_count;
  // No overflow: slab_count <= 2^32.
  const std::uint64_t least = chunked_header_bytes + slab_head_bytes * s_count + 8 * s_count +
                              chunked_trailer_bytes;
  if (size < least)
    not_chunked("truncated: " + std::to_string(s_count) + " slabs take " +
                std::to_string(least) + " bytes at least with the header, index and trailer, " +
                "but the frame has " + std::to_string(size));
  const std::uint64_t index_offset = size - chunked_trailer_bytes - 8 * s_count;
  return read_chunked_end(frame, data + index_offset, static_cast<std::size_t>(size - index_offset),
                          index_offset);
}

std::vector<std::uint64_t> read_chunked_end(const chunked_frame_info& frame, const std::byte* end,
                                            std::size_t size, std::uint64_t index_offset) {
  const std::uint64_t s_count = frame.slab_count;
  const std::uint64_t expected = 8 * s_count + chunked_trailer_bytes;
  if (size != expected)
    not_chunked("truncated: the index and trailer of " + std::to_string(s_count) +
                " slabs take " + std::to_string(expected) + " bytes, " + std::to_string(size) +
                " are there");
  if (index_offset < chunked_header_bytes + slab_head_bytes * s_count)
    not_chunked("the index lies at " + std::to_string(index_offset) + ", before the end of " +
                std::to_string(s_count) + " slabs");
  const std::byte* trailer = end + 8 * s_count;
  if (!starts_with(trailer, chunked_trailer_bytes, trailer_magic))
    not_chunked("its last 32 bytes are not a trailer (\"NZIX\"): the frame is cut short, or "
                "bytes follow it");
  if (get_u8(trailer + 4) != 0 || get_u8(trailer + 5) != 0 || get_u8(trailer + 6) != 0 ||
      get_u8(trailer + 7) != 0)
    not_chunked("the trailer's reserved bytes are not 0");
  const std::byte* index = end;
  const std::uint64_t recorded = get_u64(trailer + trailer_checksum_offset);
  const std::uint64_t actual = detail::xxh3_of(
      {{index, static_cast<std::size_t>(8 * s_count + trailer_checksum_offset)}});
  if (recorded != actual)
    throw frame_error("ndzip: chunked frame index checksum mismatch: its trailer records "
                      "XXH3-64 " +
                      detail::checksum_text(recorded) + " but the index hashes to " +
                      detail::checksum_text(actual) + " (the index or trailer is damaged)");
  if (get_u64(trailer + 8) != s_count)
    not_chunked("the trailer counts " + std::to_string(get_u64(trailer + 8)) +
                " slabs, the header " + std::to_string(s_count));
  if (get_u64(trailer + 16) != index_offset)
    not_chunked("the trailer puts the index at " + std::to_string(get_u64(trailer + 16)) +
                ", but it lies at " + std::to_string(index_offset) + " before the trailer");
  std::vector<std::uint64_t> offsets(static_cast<std::size_t>(s_count));
  std::uint64_t next = chunked_header_bytes;  // the least offset the next slab may have
  for (std::uint64_t s = 0; s < s_count; ++s) {
    const std::uint64_t at = get_u64(index + 8 * s);
    if (s == 0 ? at != next : at < next || at % 8 != 0 || at > index_offset - slab_head_bytes)
      not_chunked("the index puts " + slab_name(s) + " at " + std::to_string(at) +
                  (s == 0 ? std::string(", not right after the header (64)")
                          : ", which overlaps the slab before, is not a multiple of 8, or "
                            "leaves no room for it before the index"));
    offsets[s] = at;
    next = at + slab_head_bytes;
  }
  return offsets;
}

chunked_frame_layout inspect_chunked_frame(const std::byte* data, std::size_t size) {
  chunked_frame_layout layout;
  layout.frame = read_chunked_header(data, size);
  // No more slabs than `size` holds heads for: the vectors stay bounded by the input.
  layout.offsets = read_chunked_index(layout.frame, data, size);
  const std::uint64_t index_offset =
      size - chunked_trailer_bytes - 8 * layout.frame.slab_count;
  layout.slabs.reserve(layout.offsets.size());
  for (std::uint64_t s = 0; s < layout.frame.slab_count; ++s) {
    const std::uint64_t at = layout.offsets[s];
    const std::uint64_t next =
        s + 1 < layout.frame.slab_count ? layout.offsets[s + 1] : index_offset;
    const slab_info slab =
        read_slab_head(layout.frame, s, data + at, static_cast<std::size_t>(next - at));
    if (slab.record_bytes() != next - at)
      throw frame_error("ndzip: chunked frame, " + slab_name(s) + ": its head and stream take " +
                        std::to_string(slab.record_bytes()) + " bytes, but the index gives it " +
                        std::to_string(next - at));
    layout.slabs.push_back(slab);
  }
  return layout;
}

std::uint64_t default_slab_rows(element_type type, int dimensions,
                                const std::array<std::uint64_t, 3>& extents, codec_mode mode) {
  const array_shape shape(type, dimensions, extents.data());
  std::uint64_t row_bytes = shape.element_bytes();
  for (int a = 1; a < dimensions; ++a) row_bytes *= std::max<std::uint64_t>(extents[a], 1);
  const std::uint64_t n0 = std::max<std::uint64_t>(extents[0], 1);
  // Slabs of whole layers of hypercubes, where they hold one: a slab of other rows would store
  // a border of its own raw, and a slabbed frame would be larger than the array's one stream.
  const std::uint64_t side = hypercube_side(dimensions);
  const auto in_layers = [&](std::uint64_t r) {
    return r < n0 && r >= side ? r / side * side : r;
  };
  std::uint64_t rows =
      in_layers(std::clamp<std::uint64_t>((std::uint64_t{64} << 20) / row_bytes, 1, n0));
  rows = std::max(rows, n0 / max_slab_count + (n0 % max_slab_count != 0));
  for (;;) {
    std::array<std::uint64_t, 3> slab = extents;
    slab[0] = rows;
    try {
      slab_record_bound(type, dimensions, slab, mode);
      return rows;
    } catch (const std::exception&) {
      if (rows == 1) throw;  // a single row the format cannot hold: refused by name
      rows = in_layers(rows / 2);
    }
  }
}

std::uint64_t chunked_frame_bound(element_type type, int dimensions,
                                  const std::array<std::uint64_t, 3>& extents,
                                  std::uint64_t slab_rows, codec_mode mode) {
  const std::array<std::byte, chunked_header_bytes> header =
      encode_chunked_header(type, dimensions, extents, slab_rows);
  const chunked_frame_info frame = read_chunked_header(header.data(), header.size());
  const std::uint64_t last = frame.slab_count - 1;
  std::uint64_t bytes = chunked_header_bytes + 8 * frame.slab_count + chunked_trailer_bytes;
  bytes += slab_record_bound(type, dimensions, frame.slab_extents(last), mode);
  if (last > 0) bytes += last * slab_record_bound(type, dimensions, frame.slab_extents(0), mode);
  return bytes;
}

}  // namespace ndzip
