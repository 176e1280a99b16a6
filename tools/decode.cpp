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

ndzip::frame_info open_frame(const std::string& name, byte_span file) {
  try {
    ndzip::verify_frame_checksum(file.data, file.size);
    return ndzip::inspect_frame(file.data, file.size);
  } catch (const ndzip::frame_error& e) {
    throw std::runtime_error(name + ": " + codec_message(e));
  }
}

std::size_t largest_stream(const std::string& name, const array_desc& array) {
  const std::size_t largest = largest_stream_size(array);  // throws if it cannot be addressed
  try {
    check_codec_holds(array);
  } catch (const std::invalid_argument& e) {
    throw refused_by_codec(name, e);
  }
  return largest;
}

byte_buffer decode_stream(const std::string& backend, const std::string& name,
                          const array_desc& array, byte_span stream, bool raw, byte_buffer* owner) {
  decompressed result;
  try {
    result = decompress_array(backend, array, stream, owner);
  } catch (const ndzip::error& e) {
    throw std::runtime_error("cannot decompress " + name + " as a " + array.shape.to_string() +
                             " array: " + codec_message(e));
  } catch (const std::invalid_argument& e) {  // a grid the format cannot hold
    throw refused_by_codec(name, e);
  }
  if (result.consumed != stream.size) {
    const std::string sizes = " (the stream of a " + array.shape.to_string() +
                              " array decoded from " + std::to_string(result.consumed) + " of " +
                              std::to_string(stream.size) + " bytes)";
    throw std::runtime_error(
        raw ? name + " has " + std::to_string(stream.size - result.consumed) +
                  " bytes of trailing data" + sizes + "; are -t and -n right?"
            : name + ": inconsistent frame: the stream is shorter than its length field" + sizes);
  }
  return std::move(result.values);
}

}  // namespace ndzip_cli
