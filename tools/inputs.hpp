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

struct array_file {
  array_desc array;
  byte_buffer values;  // array.shape.byte_size() bytes, aligned for its element type
  bool npy = false;    // from a .npy file, whose header described the array
};

// The array to compress from `path` ("-": standard input) and its values. An input that starts
// with NumPy's magic is a .npy file: its header, read and checked whole before anything else (no
// more than npy::max_text_size bytes of text), gives type and shape, which `request` (-t, -n)
// must match where it gives them; exactly that array's bytes must follow. A Fortran-order array
// is refused, unless at most one extent exceeds 1 (its memory is then the C-order array). Any
// other input is raw values of request.type (needed; without it the message says what the input
// looks like: a frame, a file named .npy) and request.extents: exactly their bytes, or without
// extents a 1-D array of the whole input (a pipe is read to its end).
array_file read_array_to_compress(const std::string& path, const array_request& request,
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
