// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The tool's side of the library's frame (ndzip/frame_format.hpp; layout in docs/FORMAT.md), the
// container `compress` writes around a raw ndzip stream unless --raw is given. The library
// parses, checks and encodes it; this adds what only the tool needs. Frame errors are
// ndzip::frame_error, whose messages the tool prints without their "ndzip: ".

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include <ndzip/frame_format.hpp>

#include "array_desc.hpp"
#include "bytes.hpp"

namespace ndzip_cli {

// The complete header of a frame around `stream`, the stream of an `array` (of its coded grid).
std::array<std::byte, ndzip::frame_header_bytes> encode_frame_header(const array_desc& array,
                                                                     byte_span stream);

// `array` as a frame codes it with `folding` (ndzip/folding.hpp): folded_rank set where the
// rule folds it, cleared otherwise.
array_desc coded_for_frame(array_desc array, ndzip::folding folding);

// ndzip::read_frame_header on the first bytes of an input; where the input is not a frame at
// all, the message adds how to read a raw stream.
ndzip::frame_info read_frame_header(byte_span head);

// The array a frame holds.
array_desc frame_array(const ndzip::frame_info& frame);

// The stream inside a frame that ndzip::inspect_frame accepted.
inline byte_span frame_stream(byte_span file) { return file.from(ndzip::frame_header_bytes); }

// The version byte (4) of a frame whose header ndzip::read_frame_header accepted: 1 to 3. Read
// from the bytes, not derived from the mode, since a version 2 frame may record mode 0.
inline int frame_version_of(byte_span file) { return std::to_integer<int>(file.data[4]); }

// "0x0123456789abcdef".
std::string checksum_string(std::uint64_t checksum);

}  // namespace ndzip_cli
