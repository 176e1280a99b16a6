// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "commands.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "codec.hpp"
#include "decode.hpp"
#include "file_io.hpp"
#include "frame.hpp"
#include "inputs.hpp"

namespace ndzip_cli {

namespace {

// -t and -n are optional for a framed input, but must agree with the frame when given.
void check_options_match(const options& opts, const std::string& name, const array_desc& array) {
  if (opts.type && *opts.type != array.type)
    throw std::runtime_error(std::string("-t ") + type_name(*opts.type) + " does not match " +
                             name + ", which holds a " + describe(array) + " array");
  const bool extents_match =
      opts.extents.empty() ||
      (opts.extents.size() == static_cast<std::size_t>(array.dims) &&
       std::equal(opts.extents.begin(), opts.extents.end(), array.extents.begin()));
  if (!extents_match) {
    std::string given;
    for (const auto n : opts.extents) {
      given += ' ';  // appended piece by piece: see ndzip::to_string
      given += std::to_string(n);
    }
    throw std::runtime_error("-n" + given + " does not match " + name + ", which holds a " +
                             describe(array) + " array");
  }
}

}  // namespace

void run_compress(const options& opts) {
  const std::string& in = opts.files[0];
  const std::string& out = opts.files[1];
  const array_desc array = opts.array();
  check_distinct_files(in, out);
  check_output_target(out, opts.force);

  const byte_buffer input = read_array(in, array);
  const byte_buffer stream = [&] {
    backend_session session;
    return compress_array(opts.backend, array, input);
  }();

  if (opts.raw) {
    write_output(out, {stream}, opts.force);
  } else {
    const auto header = encode_frame_header(array, stream);
    write_output(out, {byte_span(header.data(), header.size()), stream}, opts.force);
  }
}

void run_decompress(const options& opts) {
  const std::string& in = opts.files[0];
  const std::string& out = opts.files[1];
  const std::string name = input_name(in);
  check_distinct_files(in, out);
  check_output_target(out, opts.force);

  byte_buffer input;
  array_desc array;
  byte_span stream;
  if (opts.raw) {
    array = opts.array();
    input = read_raw_stream(in, array);
    stream = input;
  } else {
    input = read_frame(in).bytes;
    array = frame_array(open_frame(name, input));
    stream = frame_stream(input);
    check_options_match(opts, name, array);
  }

  const byte_buffer values = [&] {
    backend_session session;
    return decode_stream(opts.backend, name, array, stream, opts.raw);
  }();
  write_output(out, {values}, opts.force);
}

void run_info(const options& opts) {
  const std::string& path = opts.files[0];
  const std::string name = input_name(path);
  const frame_file frame = read_frame(path);
  const byte_buffer& file = frame.bytes;
  const ndzip::frame_info& header = frame.header;
  const byte_span stream = frame_stream(file);
  const array_desc array = frame_array(header);
  const std::size_t array_bytes = byte_size(array);
  const std::uint64_t actual = ndzip::frame_checksum(file.data(), file.size());

  std::printf("file:        %s\n", path == "-" ? "-" : path.c_str());
  std::printf("format:      ndzip-kokkos frame, version %d\n", int{ndzip::frame_version});
  std::printf("type:        %s\n", type_name(array.type));
  std::printf("dimensions:  %d\n", array.dims);
  std::printf("extents:     %s (slowest first)\n", extents_string(array).c_str());
  std::printf("elements:    %zu\n", element_count(array));
  std::printf("array:       %zu bytes\n", array_bytes);
  std::printf("stream:      %zu bytes\n", stream.size);
  std::printf("file size:   %zu bytes\n", file.size());
  if (actual == header.checksum)
    std::printf("checksum:    ok (XXH3-64 %s)\n", checksum_string(actual).c_str());
  else
    std::printf("checksum:    MISMATCH (stored %s, file hashes to %s)\n",
                checksum_string(header.checksum).c_str(), checksum_string(actual).c_str());
  if (stream.size > 0)
    std::printf("ratio:       %.3f (array bytes / stream bytes)\n",
                static_cast<double>(array_bytes) / static_cast<double>(stream.size));
  std::fflush(stdout);
  open_frame(name, file);  // a damaged frame is reported, after what could be read of it
}

}  // namespace ndzip_cli
