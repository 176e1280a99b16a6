// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The commands' inputs, read with a bound: never more than the array, frame or stream they are
// expected to be, plus one byte that tells a longer input, so that an endless input such as
// /dev/zero or a pipe is refused quickly instead of filling memory. Each function throws
// std::runtime_error naming the input and what is wrong with it.

#include <string>

#include "array_desc.hpp"
#include "bytes.hpp"
#include "file_io.hpp"
#include "framing.hpp"

namespace ndzip_cli {

// The values of `array` from `path` ("-": standard input), which must hold exactly
// array.shape.byte_size() bytes.
byte_buffer read_array(const std::string& path, const array_desc& array,
                       const progress_fn& progress = {});

// Everything `path` holds: a 1-D array of `type` (no extents given), whose byte size must be a
// whole number of elements, at least one. A pipe is read to its end.
byte_buffer read_1d_array(const std::string& path, element_type type,
                          const progress_fn& progress = {});

struct frame_file {
  byte_buffer bytes;  // the whole frame
  ndzip::frame_info header;
};

// A frame from `path`. Its header is read first and validated, its stream length included
// (nothing more is read from an input that is not a frame), then no more than the stream it
// announces. The frame has passed ndzip::inspect_frame; its checksum is not verified yet.
frame_file read_frame(const std::string& path, const progress_fn& progress = {});

// A raw stream of `array` from `path`: no longer than the array's largest stream.
byte_buffer read_raw_stream(const std::string& path, const array_desc& array,
                            const progress_fn& progress = {});

}  // namespace ndzip_cli
