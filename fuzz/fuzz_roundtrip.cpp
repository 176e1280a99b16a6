// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: arbitrary element bit patterns of a shaped array (fuzz_support.hpp; the payload
// is repeated to fill the array, zeros if empty) compressed on every backend.
// Properties: every backend emits the same stream, which is the reference model's, fits the size
// bound, and decodes bit-exactly to the input from exactly its own length.

#include "codec.hpp"
#include "fuzz_support.hpp"

using namespace ndzip_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = parse_shaped_input({reinterpret_cast<const std::byte*>(data), size});
  if (!input) return 0;
  const array_desc& array = input->array;
  byte_buffer values(ndzip_cli::byte_size(array), std::byte{0});
  if (input->payload.size > 0)
    for (std::size_t i = 0; i < values.size(); ++i)
      values[i] = input->payload.data[i % input->payload.size];

  const byte_buffer expected = model_stream(array, values);
  for (const std::string& backend : backends()) {
    const byte_buffer stream = ndzip_cli::compress_array(backend, array, values);
    require(stream == expected, backend + ": stream differs from the reference model's");
    require(stream.size() <= ndzip_cli::largest_stream_size(array),
            backend + ": stream above the bound");
    const auto round = ndzip_cli::decompress_array(backend, array, stream);
    require(round.values == values, backend + ": round trip is not bit-exact");
    require(round.consumed == stream.size(), backend + ": decoder did not consume the stream");
  }
  return 0;
}
