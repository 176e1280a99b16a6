// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "frame.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

#include <xxhash.h>

namespace ndzip_cli {

namespace {

constexpr std::array<std::uint8_t, 4> magic = {'N', 'D', 'Z', 'K'};

void put_u64(std::byte* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(v >> (8 * i));
}

std::uint64_t get_u64(const std::byte* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{std::to_integer<std::uint8_t>(in[i])} << (8 * i);
  return v;
}

std::uint8_t get_u8(const std::byte* in) {
  return std::to_integer<std::uint8_t>(*in);
}

[[noreturn]] void damaged(const std::string& what) {
  throw std::runtime_error("not a valid ndzip frame: " + what);
}

}  // namespace

std::uint64_t frame_checksum(byte_span head, byte_span stream) {
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, head.data, head.size);
  XXH3_64bits_update(state, stream.data, stream.size);
  const std::uint64_t checksum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return checksum;
}

std::string checksum_string(std::uint64_t checksum) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016" PRIx64, checksum);
  return text;
}

std::array<std::byte, frame_header_size> encode_frame_header(const array_desc& array,
                                                             byte_span stream) {
  std::array<std::byte, frame_header_size> out{};
  for (std::size_t i = 0; i < magic.size(); ++i) out[i] = std::byte{magic[i]};
  out[4] = std::byte{frame_version};
  out[5] = static_cast<std::byte>(array.type);
  out[6] = static_cast<std::byte>(array.dims);
  out[7] = std::byte{0};
  for (int a = 0; a < 3; ++a) put_u64(&out[8 + 8 * a], array.extents[a]);
  put_u64(&out[32], stream.size);
  put_u64(&out[frame_checksum_offset],
          frame_checksum({out.data(), frame_checksum_offset}, stream));
  return out;
}

frame_header parse_frame_header(byte_span head) {
  const std::byte* h = head.data;
  bool magic_ok = true;  // as far as the file goes, so that a cut-off header reads as truncated
  for (std::size_t i = 0; magic_ok && i < magic.size() && i < head.size; ++i)
    magic_ok = get_u8(h + i) == magic[i];
  if (!magic_ok)
    damaged("it does not start with \"NDZK\" (a raw ndzip stream needs --raw, -t and -n)");
  if (head.size < frame_header_size)
    damaged("truncated header (" + std::to_string(head.size) + " of " +
            std::to_string(frame_header_size) + " bytes)");

  if (get_u8(h + 4) != frame_version)
    damaged("unsupported frame version " + std::to_string(get_u8(h + 4)) +
            " (this tool reads version " + std::to_string(frame_version) + ")");
  frame_header header;
  const std::uint8_t type = get_u8(h + 5);
  if (type != static_cast<std::uint8_t>(element_type::float32) &&
      type != static_cast<std::uint8_t>(element_type::float64))
    damaged("unknown element type code " + std::to_string(type) + " (1 = float, 2 = double)");
  header.array.type = static_cast<element_type>(type);
  header.array.dims = get_u8(h + 6);
  if (header.array.dims < 1 || header.array.dims > 3)
    damaged("bad dimension count " + std::to_string(header.array.dims) + " (must be 1, 2 or 3)");
  if (get_u8(h + 7) != 0)
    damaged("reserved byte 7 is " + std::to_string(get_u8(h + 7)) + ", not 0");
  for (int a = 0; a < 3; ++a) {
    const std::uint64_t n = get_u64(h + 8 + 8 * a);
    header.array.extents[a] = n;
    if (a < header.array.dims && n == 0) damaged("extent N" + std::to_string(a) + " is 0");
    if (a >= header.array.dims && n != 0)
      damaged("extent N" + std::to_string(a) + " is " + std::to_string(n) + " in a " +
              std::to_string(header.array.dims) + "-D frame (must be 0)");
  }
  try {
    byte_size(header.array);
  } catch (const std::runtime_error& e) {
    damaged(e.what());
  }
  header.stream_length = get_u64(h + 32);
  header.checksum = get_u64(h + frame_checksum_offset);
  return header;
}

void check_frame_size(const frame_header& header, std::uint64_t file_size) {
  const std::uint64_t present = file_size - std::min<std::uint64_t>(file_size, frame_header_size);
  if (present < header.stream_length)
    damaged("truncated: the header announces a stream of " + std::to_string(header.stream_length) +
            " bytes, but only " + std::to_string(present) + " follow it");
  if (present > header.stream_length)
    damaged(std::to_string(present - header.stream_length) +
            " bytes of trailing data after the stream of " + std::to_string(header.stream_length) +
            " bytes");
}

frame_header parse_frame(byte_span file) {
  const frame_header header = parse_frame_header(file);
  check_frame_size(header, file.size);
  return header;
}

void verify_checksum(const frame_header& header, byte_span file) {
  const std::uint64_t actual = frame_checksum(file);
  if (actual != header.checksum)
    throw std::runtime_error("checksum mismatch: the header records XXH3-64 " +
                             checksum_string(header.checksum) + " but the file hashes to " +
                             checksum_string(actual) + " (the header or the stream is damaged)");
}

}  // namespace ndzip_cli
