// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: a whole file given to `ndzip decompress` (frame header + stream), through the
// same functions the tool uses (tools/decode.hpp), on every backend.
// Properties: reading ends in std::runtime_error with a message, or in exactly the array the
// header describes; every backend agrees; decoded values re-frame to a file that reads back to
// them. A file whose only defect is its checksum is also read with the checksum repaired, so the
// fuzzer reaches the decoder behind the frame.

#include <stdexcept>
#include <string>

#include "codec.hpp"
#include "decode.hpp"
#include "frame.hpp"
#include "fuzz_support.hpp"

using namespace ndzip_fuzz;

namespace {

struct outcome {
  std::string error;  // empty if read
  ndzip_cli::frame_header header;
  byte_buffer values;
};

outcome read_frame(const std::string& backend, byte_span file) {
  outcome o;
  try {
    o.header = ndzip_cli::open_frame("input", file);
    o.values = ndzip_cli::decode_stream(backend, "input", o.header.array,
                                        ndzip_cli::frame_stream(file), false);
  } catch (const std::runtime_error& e) {
    o.error = e.what();
    require(!o.error.empty(), "error without a message");
  }
  return o;
}

void check_file(byte_span file) {
  const outcome first = read_frame(backends()[0], file);
  for (std::size_t b = 1; b < backends().size(); ++b) {
    const outcome other = read_frame(backends()[b], file);
    require(other.error == first.error && other.values == first.values,
            backends()[b] + " and " + backends()[0] + " disagree: '" + other.error + "' vs '" +
                first.error + "'");
  }
  if (!first.error.empty()) return;

  require(first.values.size() == ndzip_cli::byte_size(first.header.array),
          "decoded values of the wrong size");
  const byte_buffer stream = ndzip_cli::compress_array(backends()[0], first.header.array,
                                                       first.values);
  const auto head = ndzip_cli::encode_frame_header(first.header.array, stream);
  byte_buffer reframed(head.begin(), head.end());
  reframed.insert(reframed.end(), stream.begin(), stream.end());
  const outcome again = read_frame(backends()[0], reframed);
  require(again.error.empty() && again.values == first.values,
          "decoded values do not survive compression: " + again.error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_buffer file = aligned_copy({reinterpret_cast<const std::byte*>(data), size});
  check_file(file);

  ndzip_cli::frame_header header;
  try {
    header = ndzip_cli::parse_frame(file);
  } catch (const std::runtime_error&) {
    return 0;
  }
  const std::uint64_t actual = ndzip_cli::frame_checksum(file);
  if (actual == header.checksum) return 0;
  byte_buffer repaired = file;
  for (std::size_t i = 0; i < 8; ++i)
    repaired[ndzip_cli::frame_checksum_offset + i] = static_cast<std::byte>(actual >> (8 * i));
  check_file(repaired);
  return 0;
}
