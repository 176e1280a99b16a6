// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: arbitrary element bit patterns of a shaped array (fuzz_support.hpp; the payload
// is repeated to fill the array, zeros if empty) compressed on every backend.
// Properties: every backend emits the same stream, which is the reference model's, fits the size
// bound, and decodes bit-exactly to the input from exactly its own length.

#include "codec.hpp"
#include "fuzz_support.hpp"

using namespace ndzip_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = parse_shaped_input({reinterpret_cast<const std::byte*>(data), size},
                                        roundtrip_max_elements);
  if (!input) return 0;
  const array_desc& array = input->array;
  const byte_buffer values = repeated(input->payload, array.shape.byte_size());

  const byte_buffer expected = model_stream(array, values);
  for (const std::string& backend : backends()) {
    const byte_buffer stream = ndzip_cli::compress_array(backend, array, values);
    require(same_bytes(stream, expected), backend + ": stream differs from the reference model's");
    require(stream.size() <= ndzip_cli::largest_stream_size(array),
            backend + ": stream above the bound");
    const auto round = ndzip_cli::decompress_array(backend, array, stream);
    require(same_bytes(round.values, values), backend + ": round trip is not bit-exact");
    require(round.consumed == stream.size(), backend + ": decoder did not consume the stream");
  }
  return 0;
}
