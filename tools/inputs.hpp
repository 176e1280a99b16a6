// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The commands' inputs, read with a bound: never more than the array, frame or stream they are
// expected to be, plus one byte that tells a longer input, so that an endless input such as
// /dev/zero or a pipe is refused quickly instead of filling memory. Each function throws
// std::runtime_error naming the input and what is wrong with it.

#include <cstdint>
#include <memory>
#include <optional>
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

// An input to compress, opened: its array known before its values are read (from -t/-n, a
// .npy header, or a regular file's size), or for a raw 1-D input of unknown length (a pipe
// without -n) known only once it is read to its end.
struct array_source {
  std::unique_ptr<input_file> file;
  std::optional<array_desc> array;  // none: a raw input whose length tells its extent
  element_type type = element_type::float32;  // of the raw values, where `array` is none
  ndzip::codec_mode mode = ndzip::codec_mode::ndzip;
  bool npy = false;
  bool whole_input = false;          // a raw input without -n: 1-D, all of it
  std::size_t npy_header_bytes = 0;  // a .npy file's header, read and checked already
  byte_buffer head;                  // the first bytes of the values, read already
};

// Opens `path` as read_array_to_compress does and reads no more than the magic (of a raw input)
// or the .npy header, which it checks (the errors of read_array_to_compress).
array_source open_array_to_compress(const std::string& path, const array_request& request,
                                    const progress_fn& progress = {});

// The rest of `source`'s values read whole, with the checks of read_array_to_compress.
array_file read_array_values(array_source source, const progress_fn& progress = {});

// The values of an array to compress, handed out a slab at a time: from an open input, read as
// they are asked for (never more than the array's bytes, then one byte that tells a longer
// input), or from values read whole already. An input of another size fails with the message
// read_array_to_compress gives (before anything is read where a regular file's size shows it).
class value_source {
 public:
  // The values of `source` (whose array is known), of which the first `keep` bytes (at most
  // the array's) are read at once and held until first() is done with them.
  value_source(array_source source, std::size_t keep, const progress_fn& progress = {});
  // Values read whole already.
  explicit value_source(array_file whole);

  const array_desc& array() const { return m_array; }
  // The first `n` bytes of the values, n no more than `keep` (a sample for the shape check).
  byte_span first(std::size_t n) const;
  // The next `n` bytes of the values (aligned for the element type), valid until the next call.
  byte_span next(std::size_t n);
  // After the last values: the input must end there.
  void check_end();

 private:
  [[noreturn]] void refuse_size(std::size_t count, std::size_t limit) const;

  array_desc m_array;
  std::unique_ptr<input_file> m_file;  // none: m_prefix holds every value
  bool m_npy = false;
  std::size_t m_npy_header_bytes = 0;
  progress_fn m_progress;
  byte_buffer m_prefix;  // the values' first bytes (all of them, read whole)
  std::size_t m_prefix_used = 0;
  byte_buffer m_slab;    // the last slab read past the prefix
  std::uint64_t m_delivered = 0;  // value bytes handed out
};

struct frame_file {
  byte_buffer bytes;  // the whole frame
  ndzip::frame_info header;
};

// A frame from `path`. Its header is read first and validated, its stream length included
// (nothing more is read from an input that is not a frame), then no more than the stream it
// announces. The frame has passed ndzip::inspect_frame; its checksum is not verified yet.
frame_file read_frame(const std::string& path, const progress_fn& progress = {});
// The same from an open input of which `head` holds the first bytes, read already.
frame_file read_frame(input_file& file, byte_buffer head, const progress_fn& progress = {});

// Whether the first bytes of an input (at least 5) are those of a chunked frame (version 4).
bool is_chunked_frame(byte_span head);

// A raw stream of `array` from `path`: no longer than the array's largest stream.
byte_buffer read_raw_stream(const std::string& path, const array_desc& array,
                            const progress_fn& progress = {});

}  // namespace ndzip_cli
