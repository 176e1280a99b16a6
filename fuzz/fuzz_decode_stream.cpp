// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: a raw ndzip stream of a shaped array (fuzz_support.hpp) decoded on every backend.
// Properties: decoding ends in ndzip::stream_error or in values; every backend reaches the same
// outcome (the same message, or the same values from the same number of bytes); decoded values
// compress, by the library and by the reference model alike, to a stream that decodes to them.

#include <string>

#include <ndzip/error.hpp>

#include "codec.hpp"
#include "fuzz_support.hpp"

using namespace ndzip_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = parse_shaped_input({reinterpret_cast<const std::byte*>(data), size});
  if (!input) return 0;
  const array_desc& array = input->array;
  const byte_buffer stream = aligned_copy(input->payload);

  const decode_outcome first = decode_on_every_backend(array, stream);
  if (!first.error.empty()) return 0;

  const byte_buffer& values = first.result.values;
  require(values.size() == array.shape.byte_size(), "decoded values of the wrong size");
  require(first.result.consumed <= stream.size(), "decoder consumed more than the stream");
  const byte_buffer again = ndzip_cli::compress_array(backends()[0], array, values);
  require(same_bytes(again, model_stream(array, values)),
          "the encoder disagrees with the reference model on decoded values");
  require(again.size() <= ndzip_cli::largest_stream_size(array), "stream above the bound");
  const auto round = ndzip_cli::decompress_array(backends()[0], array, again);
  require(same_bytes(round.values, values) && round.consumed == again.size(),
          "decoded values do not survive compression");
  return 0;
}
