// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: a high-ratio stream (docs/FORMAT.md) of a shaped array (fuzz_support.hpp) decoded
// on every backend. Properties: decoding ends in ndzip::stream_error or in values; every backend
// reaches the same outcome (the same message, or the same values from the same number of
// bytes), and so does the device schedule of the kernels (a thread per chunk and per code
// stream, run here on the host; the backends here run the host's, a thread per block); decoded
// values compress in the high-ratio mode, on every backend to the same stream,
// within the bound, and that stream decodes back to them.

#include <Kokkos_Core.hpp>
#include <ndzip/error.hpp>
#include <ndzip/high_ratio.hpp>
#include <string>

#include "codec.hpp"
#include "core/array_dispatch.hpp"
#include "core/high_ratio/engine.hpp"
#include "fuzz_support.hpp"

using namespace ndzip_fuzz;

namespace {

// Decodes with the device schedule on Serial: the error message, or empty and the values.
std::string decode_with_device_schedule(const array_desc& array, const byte_buffer& stream,
                                        byte_buffer& values) {
  return ndzip::detail::with_array_type(array.type, array.dims, [&](auto tag, auto dims) {
    using T = typename decltype(tag)::type;
    constexpr int D = decltype(dims)::value;
    ndzip::extent<D> grid;
    for (int a = 0; a < D; ++a) grid[a] = array.extents[a];
    if (stream.size() < ndzip::high_ratio_smallest_stream_bytes<T>(grid))
      return std::string("shorter than the smallest stream");  // refused before decoding
    ndzip::core::high_ratio::engine<T, D, Kokkos::Serial, true> engine(Kokkos::Serial(), grid);
    values.resize(grid.size() * sizeof(T));
    try {
      engine.decompress(stream.data(), stream.size(), reinterpret_cast<T*>(values.data()));
    } catch (const ndzip::stream_error& e) {
      return std::string(e.what());
    }
    return std::string();
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto input = parse_shaped_input({reinterpret_cast<const std::byte*>(data), size});
  if (!input) return 0;
  array_desc array = input->array;
  array.mode = ndzip::codec_mode::high_ratio;
  const byte_buffer stream = aligned_copy(input->payload);

  const decode_outcome first = decode_on_every_backend(array, stream);
  byte_buffer device_values;
  const std::string device_error = decode_with_device_schedule(array, stream, device_values);
  if (device_error != "shorter than the smallest stream") {
    require(device_error == first.error, "the device schedule says \"" + device_error +
                                             "\", the backends \"" + first.error + "\"");
    require(!device_error.empty() || same_bytes(device_values, first.result.values),
            "the device schedule decodes other values");
  }
  if (!first.error.empty()) return 0;

  const byte_buffer& values = first.result.values;
  require(values.size() == ndzip_cli::byte_size(array), "decoded values of the wrong size");
  require(first.result.consumed <= stream.size(), "decoder consumed more than the stream");
  const byte_buffer again = ndzip_cli::compress_array(backends()[0], array, values);
  require(again.size() <= ndzip_cli::largest_stream_size(array), "stream above the bound");
  for (std::size_t b = 1; b < backends().size(); ++b)
    require(same_bytes(ndzip_cli::compress_array(backends()[b], array, values), again),
            backends()[b] + " and " + backends()[0] + " write different high-ratio streams");
  const auto round = ndzip_cli::decompress_array(backends()[0], array, again);
  require(same_bytes(round.values, values) && round.consumed == again.size(),
          "decoded values do not survive compression");
  return 0;
}
