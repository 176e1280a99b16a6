// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "framing.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace ndzip_cli {

std::array<std::byte, ndzip::frame_header_bytes> encode_frame_header(const array_desc& array,
                                                                     byte_span stream) {
  return ndzip::encode_frame_header(array.shape.type(), array.shape.rank(),
                                    array.shape.extents(), stream.data, stream.size, array.mode,
                                    array.coded_shape().rank());
}

array_desc coded_for_frame(array_desc array, ndzip::folding folding) {
  const int rank = ndzip::coded_shape(array.shape, folding).rank();
  array.folded_rank.reset();
  if (rank != array.shape.rank()) array.folded_rank = rank;
  return array;
}

ndzip::frame_info read_frame_header(byte_span head) {
  try {
    return ndzip::read_frame_header(head.data, head.size);
  } catch (const ndzip::frame_error& e) {
    const std::size_t present = std::min(head.size, ndzip::frame_magic.size());
    if (!std::equal(head.data, head.data + present, ndzip::frame_magic.begin()))
      throw ndzip::frame_error(std::string(e.what()) +
                               " (a raw ndzip stream needs --raw, -t and -n)");
    throw;
  }
}

array_desc frame_array(const ndzip::frame_info& frame) {
  array_desc array(ndzip::array_shape::of(frame), frame.mode);
  if (frame.coded_dimensions != frame.dimensions) array.folded_rank = frame.coded_dimensions;
  return array;
}

std::string checksum_string(std::uint64_t checksum) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016" PRIx64, checksum);
  return text;
}

}  // namespace ndzip_cli
