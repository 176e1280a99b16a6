// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "fuzz_support.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <ndzip/chunked_frame_format.hpp>
#include <ndzip/error.hpp>
#include <ndzip/frame_format.hpp>

#include "codec.hpp"

namespace ndzip_fuzz {

namespace {

std::unique_ptr<ndzip_cli::backend_session> session;

}  // namespace

std::string current_input;

std::optional<shaped_input> parse_shaped_input(byte_span input, std::size_t element_limit) {
  if (input.size < 1) return std::nullopt;
  const auto byte = [&](std::size_t i) { return std::to_integer<unsigned>(input.data[i]); };
  shaped_input out;
  const auto type =
      byte(0) & 1 ? ndzip_cli::element_type::float64 : ndzip_cli::element_type::float32;
  const int rank = static_cast<int>((byte(0) >> 1) % 3 + 1);
  const std::size_t prefix = 1 + 2 * static_cast<std::size_t>(rank);
  if (input.size < prefix) return std::nullopt;
  std::size_t elements = 1;
  std::uint64_t extents[3] = {};
  for (int a = 0; a < rank; ++a) {
    extents[a] = byte(1 + 2 * a) | byte(2 + 2 * a) << 8;
    elements *= extents[a];
  }
  out.array.shape = ndzip::array_shape(type, rank, extents);
  if (elements > element_limit) return std::nullopt;
  out.payload = input.from(prefix);
  return out;
}

byte_buffer shaped_input_prefix(const array_desc& array) {
  const unsigned type_bit = array.shape.type() == ndzip_cli::element_type::float64 ? 1 : 0;
  byte_buffer prefix{static_cast<std::byte>(type_bit | (array.shape.rank() - 1) << 1)};
  for (int a = 0; a < array.shape.rank(); ++a) {
    prefix.push_back(static_cast<std::byte>(array.shape.extent(a) & 0xff));
    prefix.push_back(static_cast<std::byte>(array.shape.extent(a) >> 8 & 0xff));
  }
  return prefix;
}

std::optional<hdf5_chunk_input> parse_hdf5_chunk_input(byte_span input) {
  if (input.size < 1) return std::nullopt;
  const auto byte = [&](std::size_t i) { return std::to_integer<unsigned>(input.data[i]); };
  const std::size_t count = byte(0) % 8;
  const std::size_t prefix = 1 + 4 * count;
  if (input.size < prefix) return std::nullopt;
  hdf5_chunk_input out;
  for (std::size_t v = 0; v < count; ++v) {
    const std::size_t at = 1 + 4 * v;
    out.cd_values.push_back(byte(at) | byte(at + 1) << 8 | byte(at + 2) << 16 |
                            byte(at + 3) << 24);
  }
  out.chunk = input.from(prefix);
  return out;
}

byte_buffer hdf5_chunk_input_prefix(const std::vector<unsigned>& cd_values) {
  byte_buffer prefix{static_cast<std::byte>(cd_values.size())};
  for (const unsigned value : cd_values)
    for (int shift = 0; shift < 32; shift += 8)
      prefix.push_back(static_cast<std::byte>(value >> shift & 0xff));
  return prefix;
}

namespace {

std::uint32_t u32_at(byte_span bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i)
    v |= std::uint32_t{std::to_integer<std::uint8_t>(bytes.data[at + i])} << (8 * i);
  return v;
}

void put_u32(byte_buffer& out, std::uint32_t v) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<std::byte>(v >> shift));
}

constexpr std::size_t region_box_bytes = 1 + 24;

// The raw streams' grids: per rank none, one and several hypercubes, with and without a border
// (hypercube sides 4096, 64, 16); each of them float and double.
constexpr std::uint64_t region_raw_extents[][3] = {
    {1, 0, 0},  {100, 0, 0}, {4096, 0, 0}, {8200, 0, 0},  {12290, 0, 0},
    {1, 1, 0},  {10, 10, 0}, {64, 64, 0},  {130, 65, 0},  {65, 200, 0},
    {5, 6, 7},  {16, 16, 16}, {33, 17, 18}, {40, 35, 17},
};
constexpr std::size_t region_raw_shapes = std::size(region_raw_extents);

}  // namespace

std::optional<region_input> parse_region_input(byte_span input) {
  if (input.size < region_box_bytes) return std::nullopt;
  region_input out;
  const unsigned flags = std::to_integer<unsigned>(input.data[0]);
  out.raw = flags & 1;
  out.box_kind = flags >> 1 & 7;
  for (std::size_t a = 0; a < 3; ++a) {
    out.start[a] = u32_at(input, 1 + 8 * a);
    out.count[a] = u32_at(input, 5 + 8 * a);
  }
  std::size_t prefix = region_box_bytes;
  if (out.raw) {
    if (input.size < prefix + 1) return std::nullopt;
    out.raw_grid = std::to_integer<unsigned>(input.data[prefix]);
    ++prefix;
  }
  out.payload = input.from(prefix);
  return out;
}

byte_buffer region_input_prefix(const region_input& input) {
  byte_buffer prefix{static_cast<std::byte>((input.raw ? 1 : 0) | (input.box_kind & 7) << 1)};
  for (std::size_t a = 0; a < 3; ++a) {
    put_u32(prefix, input.start[a]);
    put_u32(prefix, input.count[a]);
  }
  if (input.raw) prefix.push_back(static_cast<std::byte>(input.raw_grid));
  return prefix;
}

region_box region_box_of(const region_input& input, const ndzip::array_shape& shape) {
  region_box box;
  box.rank = shape.rank();
  if (box.rank < 1) return box;
  for (int a = 0; a < box.rank; ++a) {
    const std::uint64_t extent = shape.extent(a);
    if (input.box_kind == 7) {
      box.start[a] = input.start[a];
      box.count[a] = input.count[a] & 0xffff;
    } else if (extent > 0) {
      box.start[a] = input.start[a] % extent;
      box.count[a] = 1 + input.count[a] % (extent - box.start[a]);
    }
  }
  if (input.box_kind == 6) box.count[input.start[0] % static_cast<unsigned>(box.rank)] = 0;
  box.inside = true;
  for (int a = 0; a < box.rank; ++a)
    box.inside = box.inside && box.count[a] > 0 && box.start[a] <= shape.extent(a) &&
                 box.count[a] <= shape.extent(a) - box.start[a];
  return box;
}

array_desc region_raw_grid(unsigned byte) {
  const std::size_t index = (byte & 0x7f) % (2 * region_raw_shapes);
  const std::uint64_t* extents = region_raw_extents[index / 2];
  const int rank = extents[2] ? 3 : extents[1] ? 2 : 1;
  array_desc array;
  array.shape = ndzip::array_shape(
      index % 2 ? ndzip_cli::element_type::float64 : ndzip_cli::element_type::float32, rank,
      extents);
  array.mode = byte & 0x80 ? ndzip::codec_mode::high_ratio : ndzip::codec_mode::ndzip;
  return array;
}

std::size_t region_raw_grid_count() { return 2 * region_raw_shapes; }

namespace {

std::uint64_t u64_at(const byte_buffer& bytes, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i)
    v |= std::uint64_t{std::to_integer<std::uint8_t>(bytes[at + i])} << (8 * i);
  return v;
}

}  // namespace

std::optional<byte_buffer> with_frame_checksum_repaired(const byte_buffer& file) {
  ndzip::frame_info header;
  try {
    header = ndzip::inspect_frame(file.data(), file.size());
  } catch (const ndzip::frame_error&) {
    return std::nullopt;
  }
  const std::uint64_t actual = ndzip::frame_checksum(file.data(), file.size());
  if (actual == header.checksum) return std::nullopt;
  byte_buffer repaired = file;
  constexpr std::size_t checksum_offset = 40;  // docs/FORMAT.md
  for (std::size_t i = 0; i < 8; ++i)
    repaired[checksum_offset + i] = static_cast<std::byte>(actual >> (8 * i));
  return repaired;
}

// The header and the trailer are compared with those the writer makes of their own fields
// (encode_chunked_header, encode_chunked_end): any other difference is another defect. Where the
// checksums lie (docs/FORMAT.md, "The chunked frame, version 4"): the header's in its bytes
// 56-63, each slab head's in its bytes 24-31, the trailer's in the frame's last 8 bytes.
std::optional<byte_buffer> with_chunked_checksums_repaired(const byte_buffer& file) {
  constexpr std::size_t header_checksum_offset = 56;
  constexpr std::size_t slab_checksum_offset = 24;
  constexpr std::size_t checksum_bytes = 8;
  if (file.size() < ndzip::chunked_header_bytes) return std::nullopt;
  byte_buffer repaired = file;
  try {
    std::array<std::uint64_t, 3> extents;
    for (int a = 0; a < 3; ++a) extents[a] = u64_at(file, 8 + 8 * a);
    const auto header = ndzip::encode_chunked_header(
        static_cast<ndzip::element_type>(std::to_integer<std::uint8_t>(file[5])),
        std::to_integer<int>(file[6]), extents, u64_at(file, 32));
    if (!std::equal(header.begin(), header.begin() + header_checksum_offset, file.begin()))
      return std::nullopt;
    std::copy(header.begin() + header_checksum_offset, header.end(),
              repaired.begin() + header_checksum_offset);

    // The header holds at most 2^32 slabs, so this does not overflow; and the index read is no
    // larger than the file.
    const std::uint64_t count = ndzip::read_chunked_header(header.data(), header.size()).slab_count;
    const std::uint64_t tail = 8 * count + ndzip::chunked_trailer_bytes;
    if (file.size() < ndzip::chunked_header_bytes + tail) return std::nullopt;
    const std::size_t index_offset = file.size() - static_cast<std::size_t>(tail);
    std::vector<std::uint64_t> offsets(static_cast<std::size_t>(count));
    for (std::size_t s = 0; s < offsets.size(); ++s)
      offsets[s] = u64_at(file, index_offset + 8 * s);
    const std::vector<std::byte> end = ndzip::encode_chunked_end(offsets, index_offset);
    if (!std::equal(end.begin(), end.end() - checksum_bytes, file.begin() + index_offset))
      return std::nullopt;
    std::copy(end.end() - checksum_bytes, end.end(), repaired.end() - checksum_bytes);

    const ndzip::chunked_frame_layout layout =
        ndzip::inspect_chunked_frame(repaired.data(), repaired.size());
    for (std::uint64_t s = 0; s < count; ++s) {
      const ndzip::slab_info& slab = layout.slabs[s];
      std::byte* const record = repaired.data() + layout.offsets[s];
      const auto head =
          ndzip::encode_slab_head(layout.frame, s, slab.mode, slab.coded_dimensions,
                                  record + ndzip::slab_head_bytes, slab.stream_bytes);
      // The reader took every field but the checksum from bytes 0-23, so the writer's head of
      // those fields must repeat them: only the checksum is replaced.
      if (!std::equal(head.begin(), head.begin() + slab_checksum_offset, record))
        violated("encode_slab_head writes another head than inspect_chunked_frame read for slab " +
                 std::to_string(s));
      std::copy(head.begin() + slab_checksum_offset, head.end(), record + slab_checksum_offset);
    }
  } catch (const std::invalid_argument&) {  // fields the writer refuses: not only checksums
    return std::nullopt;
  } catch (const ndzip::frame_error&) {  // defects beyond the header's and trailer's checksums
    return std::nullopt;
  }
  if (repaired == file) return std::nullopt;
  return repaired;
}

byte_buffer aligned_copy(byte_span data) {
  return byte_buffer(data.data, data.data + data.size);
}

const std::vector<std::string>& backends() {
  static const std::vector<std::string> names = ndzip_cli::backend_names();
  return names;
}

namespace {

decode_outcome decode_on(const std::string& backend, const array_desc& array, byte_span stream) {
  decode_outcome o;
  try {
    o.result = ndzip_cli::decompress_array(backend, array, stream);
  } catch (const ndzip::stream_error& e) {
    o.error = e.what();
    require(!o.error.empty(), "stream_error without a message");
  }
  return o;
}

}  // namespace

decode_outcome decode_on_every_backend(const array_desc& array, byte_span stream) {
  decode_outcome first = decode_on(backends()[0], array, stream);
  for (std::size_t b = 1; b < backends().size(); ++b) {
    const decode_outcome other = decode_on(backends()[b], array, stream);
    require(other.error == first.error, backends()[b] + " and " + backends()[0] +
                                            " disagree: '" + other.error + "' vs '" +
                                            first.error + "'");
    require(other.result.consumed == first.result.consumed &&
                same_bytes(other.result.values, first.result.values),
            backends()[b] + " decoded other values than " + backends()[0]);
  }
  return first;
}

bool same_bytes(byte_span a, byte_span b) {
  return a.size == b.size && (a.size == 0 || std::memcmp(a.data, b.data, a.size) == 0);
}

byte_buffer repeated(byte_span pattern, std::size_t size) {
  byte_buffer out(size, std::byte{0});
  if (pattern.size == 0 || size == 0) return out;
  // Doubling copies rather than a loop per byte: the arrays reach 1 MiB, and instrumented
  // loops per byte were a large part of each execution.
  std::size_t filled = std::min(pattern.size, size);
  std::memcpy(out.data(), pattern.data, filled);
  while (filled < size) {
    const std::size_t chunk = std::min(filled, size - filled);
    std::memcpy(out.data() + filled, out.data(), chunk);
    filled += chunk;
  }
  return out;
}

void violated(const std::string& what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what.c_str());
  if (!current_input.empty()) std::fprintf(stderr, "input: %s\n", current_input.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace ndzip_fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Kokkos lives until exit; it is finalized before the sanitizers' leak check runs.
  ndzip_fuzz::session = std::make_unique<ndzip_cli::backend_session>();
  std::atexit([] { ndzip_fuzz::session.reset(); });
  return 0;
}
