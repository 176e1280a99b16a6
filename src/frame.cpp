// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The frame's header and checks (ndzip/frame_format.hpp) and the checks behind the View
// functions of ndzip/frame.hpp.

#include "ndzip/frame.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

// XXH3-64 compiled into this file only, with every xxHash function static here: the library
// needs xxhash.h to build, and nothing to link or to run, and it cannot clash with another
// xxHash in the same program.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ndzip/array_shape.hpp"
#include "ndzip/detail/frame_bytes.hpp"
#include "ndzip/folding.hpp"
#include "ndzip/stream_size.hpp"

namespace ndzip {

namespace detail {

std::uint64_t xxh3_of(std::initializer_list<byte_span> parts) {
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset(&state);
  for (const byte_span& part : parts) XXH3_64bits_update(&state, part.data, part.size);
  return XXH3_64bits_digest(&state);
}

std::string describe_elements(element_type type, int dimensions,
                              const std::array<std::uint64_t, 3>& extents) {
  std::string s = type == element_type::float32 ? "float " : "double ";
  for (int a = 0; a < dimensions; ++a) {
    if (a) s += 'x';
    s += std::to_string(extents[a]);
  }
  return s;
}

std::string checksum_text(std::uint64_t checksum) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016" PRIx64, checksum);
  return text;
}

}  // namespace detail

namespace {

using detail::get_u64;
using detail::get_u8;
using detail::put_u64;

constexpr std::size_t stream_length_offset = 32;
// Version 3's byte 7: the codec mode's code below, the coded rank above.
constexpr unsigned mode_bits_v3 = 0x0f;
constexpr unsigned coded_rank_shift_v3 = 4;
constexpr std::size_t checksum_offset = 40;

[[noreturn]] void not_a_frame(const std::string& what) {
  throw frame_error("ndzip: not a valid ndzip frame: " + what);
}

using detail::without_prefix;

using detail::describe_elements;
// "float 5x90x180 array", and "... (coded as 81000)" for a folded one.
std::string describe_array(const frame_info& info) {
  std::string s = describe_elements(info.type, info.dimensions, info.extents) + " array";
  if (info.coded_dimensions != info.dimensions)
    s += " (coded as " + coded_shape_of(info).extents_string() + ")";
  return s;
}

using detail::checksum_text;

// XXH3-64 (seed 0) of a header's first 40 bytes followed by a stream.
std::uint64_t checksum_of(const std::byte* header, const std::byte* stream,
                          std::size_t stream_bytes) {
  return detail::xxh3_of({{header, checksum_offset}, {stream, stream_bytes}});
}

// That the ndzip format can hold the grid the frame codes and that its stream length is one the
// grid can compress to: what makes frame_bytes() a safe bound for a reader to allocate.
void check_array(const frame_info& info) {
  const array_shape shape = array_shape::of(info);
  try {
    shape.byte_size();  // the folded extent, and the values, addressable
  } catch (const std::overflow_error&) {
    not_a_frame("a " + describe_elements(info.type, info.dimensions, info.extents) +
                " array is too large to address");
  }
  visit_shape(coded_shape_of(info), [&](auto tag, const auto& grid) {
    using T = typename decltype(tag)::type;
    std::size_t largest = 0;
    try {
      largest = compressed_size_bound<T>(grid, info.mode);
    } catch (const std::invalid_argument& e) {
      not_a_frame(without_prefix(e.what()));
    }
    // The range core::check_stream_size (core/stream_status.hpp) checks a stream against.
    const std::size_t smallest = smallest_stream_bytes<T>(grid, info.mode);
    if (info.stream_bytes < smallest || info.stream_bytes > largest)
      throw frame_error("ndzip: inconsistent frame: a " + describe_array(info) + " compresses to " +
                        std::to_string(smallest) + " to " + std::to_string(largest) +
                        " bytes, but the stream has " + std::to_string(info.stream_bytes));
  });
}

}  // namespace

frame_info read_frame_header(const std::byte* data, std::size_t size) {
  bool magic_ok = true;  // as far as the bytes go, so that a cut-off header reads as truncated
  for (std::size_t i = 0; magic_ok && i < frame_magic.size() && i < size; ++i)
    magic_ok = data[i] == frame_magic[i];
  if (!magic_ok) not_a_frame("it does not start with \"NDZK\"");
  if (size < frame_header_bytes)
    not_a_frame("truncated header (" + std::to_string(size) + " of " +
                std::to_string(frame_header_bytes) + " bytes)");

  const std::uint8_t version = get_u8(data + 4);
  if (version != frame_version && version != frame_version_with_mode &&
      version != frame_version_folded)
    not_a_frame("unsupported frame version " + std::to_string(version) +
                " (this library reads versions " + std::to_string(frame_version) + " to " +
                std::to_string(frame_version_folded) + ")");
  frame_info info;
  const std::uint8_t type = get_u8(data + 5);
  if (type != static_cast<std::uint8_t>(element_type::float32) &&
      type != static_cast<std::uint8_t>(element_type::float64))
    not_a_frame("unknown element type code " + std::to_string(type) + " (1 = float, 2 = double)");
  info.type = static_cast<element_type>(type);
  info.dimensions = get_u8(data + 6);
  if (info.dimensions < 1 || info.dimensions > 3)
    not_a_frame("bad dimension count " + std::to_string(info.dimensions) + " (must be 1, 2 or 3)");
  const std::uint8_t byte7 = get_u8(data + 7);
  if (version == frame_version && byte7 != 0)
    not_a_frame("reserved byte 7 is " + std::to_string(byte7) + ", not 0");
  info.coded_dimensions = info.dimensions;
  if (version != frame_version) {
    // Version 3 keeps the coded rank in the high nibble, version 2 has none there.
    const unsigned code = version == frame_version_folded ? byte7 & mode_bits_v3 : byte7;
    const std::optional<codec_mode> mode = codec_mode_of_code(code);
    if (!mode)
      not_a_frame("unknown codec mode " + std::to_string(code) + " (" + codec_mode_codes() + ")");
    info.mode = *mode;
  }
  if (version == frame_version_folded) {
    info.coded_dimensions = byte7 >> coded_rank_shift_v3;
    if (info.coded_dimensions < 1 || info.coded_dimensions >= info.dimensions)
      not_a_frame("a " + std::to_string(info.dimensions) + "-D array coded as " +
                  std::to_string(info.coded_dimensions) +
                  "-D (version 3 records an array folded to fewer dimensions, at least 1)");
  }
  for (int a = 0; a < 3; ++a) {
    const std::uint64_t n = get_u64(data + 8 + 8 * a);
    info.extents[a] = n;
    if (a < info.dimensions && n == 0) not_a_frame("extent N" + std::to_string(a) + " is 0");
    if (a >= info.dimensions && n != 0)
      not_a_frame("extent N" + std::to_string(a) + " is " + std::to_string(n) + " in a " +
                  std::to_string(info.dimensions) + "-D frame (must be 0)");
  }
  info.stream_bytes = get_u64(data + stream_length_offset);
  info.checksum = get_u64(data + checksum_offset);
  check_array(info);
  return info;
}

void check_frame_size(const frame_info& header, std::uint64_t frame_size) {
  const std::uint64_t present =
      frame_size - std::min<std::uint64_t>(frame_size, frame_header_bytes);
  if (present < header.stream_bytes)
    not_a_frame("truncated: the header announces a stream of " +
                std::to_string(header.stream_bytes) + " bytes, but only " +
                std::to_string(present) + " follow it");
  if (present > header.stream_bytes)
    not_a_frame(std::to_string(present - header.stream_bytes) +
                " bytes of trailing data after the stream of " +
                std::to_string(header.stream_bytes) + " bytes");
}

frame_info inspect_frame(const std::byte* data, std::size_t size) {
  const frame_info info = read_frame_header(data, size);
  check_frame_size(info, size);
  return info;
}

std::uint64_t frame_checksum(const std::byte* data, std::size_t size) {
  if (size < frame_header_bytes)
    not_a_frame("truncated header (" + std::to_string(size) + " of " +
                std::to_string(frame_header_bytes) + " bytes)");
  return checksum_of(data, data + frame_header_bytes, size - frame_header_bytes);
}

void verify_frame_checksum(const std::byte* data, std::size_t size) {
  const frame_info info = inspect_frame(data, size);
  const std::uint64_t actual = frame_checksum(data, size);
  if (actual != info.checksum)
    throw frame_error("ndzip: checksum mismatch: the header records XXH3-64 " +
                      checksum_text(info.checksum) + " but the frame hashes to " +
                      checksum_text(actual) + " (the header or the stream is damaged)");
}

std::array<std::byte, frame_header_bytes> encode_frame_header(
    element_type type, int dimensions, const std::array<std::uint64_t, 3>& extents,
    const std::byte* stream, std::size_t stream_bytes, codec_mode mode, int coded_dimensions) {
  if (dimensions < 1 || dimensions > 3)
    throw std::invalid_argument("ndzip: cannot frame an array of " + std::to_string(dimensions) +
                                " dimensions (ndzip holds 1 to 3)");
  if (stream == nullptr && stream_bytes > 0)
    throw std::invalid_argument("ndzip: encode_frame_header: null stream of " +
                                std::to_string(stream_bytes) + " bytes");
  std::array<std::byte, frame_header_bytes> header{};
  for (std::size_t i = 0; i < frame_magic.size(); ++i) header[i] = frame_magic[i];
  if (coded_dimensions == 0) coded_dimensions = dimensions;
  if (coded_dimensions < 1 || coded_dimensions > dimensions)
    throw std::invalid_argument("ndzip: cannot frame a " + std::to_string(dimensions) +
                                "-D array coded as " + std::to_string(coded_dimensions) + "-D");
  if (coded_dimensions < dimensions) {
    header[4] = std::byte{frame_version_folded};
    header[7] = static_cast<std::byte>(static_cast<unsigned>(mode) |
                                       static_cast<unsigned>(coded_dimensions)
                                           << coded_rank_shift_v3);
  } else {
    header[4] = std::byte{mode == codec_mode::ndzip ? frame_version : frame_version_with_mode};
    if (mode != codec_mode::ndzip) header[7] = static_cast<std::byte>(mode);
  }
  header[5] = static_cast<std::byte>(type);
  header[6] = static_cast<std::byte>(dimensions);
  for (int a = 0; a < 3; ++a) put_u64(&header[8 + 8 * a], extents[a]);
  put_u64(&header[stream_length_offset], stream_bytes);
  // What a reader would refuse is refused here, before the stream is hashed.
  try {
    read_frame_header(header.data(), header.size());
  } catch (const frame_error& e) {
    throw std::invalid_argument("ndzip: a reader would refuse this frame header: " +
                                without_prefix(e.what()));
  }
  put_u64(&header[checksum_offset], checksum_of(header.data(), stream, stream_bytes));
  return header;
}

namespace detail {

void check_coded_stream(const frame_info& info) { check_array(info); }

void check_frame_holds(const frame_info& info, element_type type, int dimensions,
                       const std::array<std::uint64_t, 3>& extents, const std::string& view) {
  if (info.type != type || info.dimensions != dimensions || info.extents != extents)
    throw frame_error("ndzip: the frame holds a " +
                      describe_elements(info.type, info.dimensions, info.extents) +
                      " array (extents slowest first), but " + view + " is a " +
                      describe_elements(type, dimensions, extents) + " array");
}

void check_frame_output(std::size_t elements, const std::string& values, std::size_t capacity) {
  if (elements == 0)
    throw std::invalid_argument("ndzip: " + values +
                                " is empty; a frame holds arrays of at least one element");
  if (capacity < frame_header_bytes)
    throw capacity_error("ndzip: a frame needs " + std::to_string(frame_header_bytes) +
                         " bytes for its header alone, but the output holds only " +
                         std::to_string(capacity));
}

void check_frame_stream_consumed(const frame_info& info, std::size_t consumed) {
  if (consumed != info.stream_bytes)
    throw frame_error("ndzip: inconsistent frame: the stream of a " + describe_array(info) +
                      " ends after " + std::to_string(consumed) + " of the " +
                      std::to_string(info.stream_bytes) + " bytes the header announces");
}

}  // namespace detail

}  // namespace ndzip
