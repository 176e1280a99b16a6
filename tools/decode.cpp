// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "decode.hpp"

#include <stdexcept>

#include <ndzip/error.hpp>

#include "codec.hpp"

namespace ndzip_cli {

namespace {

std::runtime_error refused_by_codec(const std::string& name, const std::invalid_argument& e) {
  return std::runtime_error("cannot decompress " + name + ": " + codec_message(e));
}

}  // namespace

void check_stream_length(const std::string& name, const frame_header& header) {
  const size_range sizes = stream_size_range(header.array);
  if (header.stream_length < sizes.min || header.stream_length > sizes.max)
    throw std::runtime_error(name + ": inconsistent frame: a " + describe(header.array) +
                             " array compresses to " + std::to_string(sizes.min) + " to " +
                             std::to_string(sizes.max) + " bytes, but the stream has " +
                             std::to_string(header.stream_length));
}

frame_header open_frame(const std::string& name, byte_span file) {
  frame_header header;
  try {
    header = parse_frame(file);
    verify_checksum(header, file);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(name + ": " + e.what());
  }
  check_stream_length(name, header);
  return header;
}

std::size_t largest_stream(const std::string& name, const array_desc& array) {
  const size_range sizes = stream_size_range(array);  // throws if the array cannot be addressed
  try {
    check_codec_holds(array);
  } catch (const std::invalid_argument& e) {
    throw refused_by_codec(name, e);
  }
  return sizes.max;
}

byte_buffer decode_stream(const std::string& backend, const std::string& name,
                          const array_desc& array, byte_span stream, bool raw) {
  decompressed result;
  try {
    result = decompress_array(backend, array, stream);
  } catch (const ndzip::error& e) {
    throw std::runtime_error("cannot decompress " + name + " as a " + describe(array) +
                             " array: " + codec_message(e));
  } catch (const std::invalid_argument& e) {  // a grid the format cannot hold
    throw refused_by_codec(name, e);
  }
  if (result.consumed != stream.size) {
    const std::string sizes = " (the stream of a " + describe(array) + " array decoded from " +
                              std::to_string(result.consumed) + " of " +
                              std::to_string(stream.size) + " bytes)";
    throw std::runtime_error(
        raw ? name + " has " + std::to_string(stream.size - result.consumed) +
                  " bytes of trailing data" + sizes + "; are -t and -n right?"
            : name + ": inconsistent frame: the stream is shorter than its length field" + sizes);
  }
  return std::move(result.values);
}

}  // namespace ndzip_cli
