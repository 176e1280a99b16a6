// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Reading compressed input, shared by the commands and the fuzz targets: every check a frame or
// a raw stream must pass before its values are trusted. Each function throws std::runtime_error
// naming the input (`name`, as in messages) and what is wrong with it.

#include <cstddef>
#include <string>

#include "array_desc.hpp"
#include "bytes.hpp"
#include "framing.hpp"

namespace ndzip_cli {

// Checks the frame `file` (ndzip::inspect_frame and ndzip::verify_frame_checksum) and returns
// what its header records.
ndzip::frame_info open_frame(const std::string& name, byte_span file);

// The length of the largest stream of an `array`. Throws, with the codec's reason, for an array
// that the codec cannot hold, whatever its stream: none of it is worth reading.
std::size_t largest_stream(const std::string& name, const array_desc& array);

// Decodes `stream` as an `array` on `backend` (inside a backend_session). The stream must be
// consumed exactly: trailing bytes are an error too (for a raw stream the message suggests that
// -t and -n may be wrong). Returns array.shape.byte_size() bytes of values. `owner`: the buffer
// `stream` lies in, released once a GPU has its copy (decompress_array).
byte_buffer decode_stream(const std::string& backend, const std::string& name,
                          const array_desc& array, byte_span stream, bool raw,
                          byte_buffer* owner = nullptr);

}  // namespace ndzip_cli
