// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: a high-ratio stream (docs/FORMAT.md) of a shaped array (fuzz_support.hpp) decoded
// on every backend. Properties: decoding ends in ndzip::stream_error or in values; every backend
// reaches the same outcome (the same message, or the same values from the same number of
// bytes), and so does the device schedule of the kernels (a thread per chunk and per code
// stream, run here on the host; the backends here run the host's, a thread per block); decoded
// values compress in the high-ratio mode, on every backend to the same stream,
// within the bound, and that stream decodes back to them; and a high-ratio batch_compressor
// decoding it between two genuine streams reaches the same outcome for it and decodes the
// others.

#include <Kokkos_Core.hpp>
#include <ndzip/batch_compressor.hpp>
#include <ndzip/compressor.hpp>
#include <ndzip/error.hpp>
#include <ndzip/high_ratio.hpp>
#include <string>
#include <vector>

#include "backends/emulated/lane_ops.hpp"
#include "codec.hpp"
#include "core/high_ratio/engine.hpp"
#include "fuzz_support.hpp"

using namespace ndzip_fuzz;

namespace {

// Decodes with the device schedule on Serial: the error message, or empty and the values.
std::string decode_with_device_schedule(const array_desc& array, const byte_buffer& stream,
                                        byte_buffer& values) {
  return ndzip::visit_shape(array.shape, [&](auto tag, const auto& grid) {
    using T = typename decltype(tag)::type;
    constexpr int D = std::decay_t<decltype(grid)>::dimensions;
    if (stream.size() < ndzip::high_ratio_smallest_stream_bytes<T>(grid))
      return std::string("shorter than the smallest stream");  // refused before decoding
    // HIP's 64-lane wavefronts, emulated: two lane groups a call (CUDA's warps are one).
    ndzip::core::high_ratio::engine<T, D, Kokkos::Serial, true,
                                    ndzip::backend::emulated_lane_ops<64>>
        engine(Kokkos::Serial(), grid);
    values.resize(grid.size() * sizeof(T));
    try {
      engine.decompress(stream.data(), stream.size(), reinterpret_cast<T*>(values.data()));
    } catch (const ndzip::stream_error& e) {
      return std::string(e.what());
    }
    return std::string();
  });
}

// The stream as the middle grid of a high-ratio batch of three on Serial, between two genuine
// streams of the same grid: the batch reaches the single decoder's outcome for it (its message
// naming array 1, or its values), fails where the single decoder refuses the stream as shorter
// than the smallest, and decodes the genuine grids exactly whatever the middle one holds.
void check_in_batch(const array_desc& array, const byte_buffer& stream,
                    const decode_outcome& single) {
  ndzip::visit_shape(array.shape, [&](auto tag, const auto& grid) {
    using T = typename decltype(tag)::type;
    constexpr int D = std::decay_t<decltype(grid)>::dimensions;
    constexpr auto high_ratio = ndzip::codec_mode::high_ratio;
    const Kokkos::Serial exec;
    std::vector<T> pattern(grid.size());
    for (std::size_t k = 0; k < pattern.size(); ++k) pattern[k] = static_cast<T>(k % 1000) / 8;
    ndzip::compressor<T, D, Kokkos::Serial> single_codec(exec, grid, high_ratio);
    byte_buffer genuine(single_codec.size_bound());
    genuine.resize(single_codec.compress_raw(pattern.data(), genuine.data(), genuine.size()));
    ndzip::batch_compressor<T, D, Kokkos::Serial> batch(
        exec, std::vector<ndzip::extent<D>>(3, grid), high_ratio);
    std::vector<std::vector<T>> values(3, std::vector<T>(grid.size()));
    const Kokkos::View<ndzip::batch_item<T>*, Kokkos::HostSpace> items("items", 3);
    // (Streams only read may be shared: both genuine grids read the same bytes.)
    items(0) = {values[0].data(), const_cast<std::byte*>(genuine.data()), genuine.size()};
    items(1) = {values[1].data(), const_cast<std::byte*>(stream.data()), stream.size()};
    items(2) = {values[2].data(), const_cast<std::byte*>(genuine.data()), genuine.size()};
    const Kokkos::View<ndzip::decompress_outcome*, Kokkos::HostSpace> outcomes("outcomes", 3);
    batch.decompress_async(items, outcomes);
    exec.fence();
    for (std::size_t i : {0, 2}) {
      require(batch.check_outcome(i, outcomes(i)) == genuine.size() &&
                  same_bytes({reinterpret_cast<const std::byte*>(values[i].data()),
                              values[i].size() * sizeof(T)},
                             {reinterpret_cast<const std::byte*>(pattern.data()),
                              pattern.size() * sizeof(T)}),
              "a genuine grid of the batch does not decode beside the fuzzed one");
    }
    std::string message;
    try {
      batch.check_outcome(1, outcomes(1));
    } catch (const ndzip::stream_error& e) {
      message = e.what();
    }
    if (stream.size() < ndzip::high_ratio_smallest_stream_bytes<T>(grid)) {
      require(!message.empty(), "the batch decodes a stream shorter than the smallest");
    } else if (!single.error.empty()) {
      require(single.error.rfind("ndzip: ", 0) == 0 &&
                  message == "ndzip: array 1: " + single.error.substr(7),
              "the batch says \"" + message + "\", the single decoder \"" + single.error + "\"");
    } else {
      require(message.empty() && same_bytes({reinterpret_cast<const std::byte*>(values[1].data()),
                                             values[1].size() * sizeof(T)},
                                            single.result.values),
              "the batch decodes the stream differently: \"" + message + "\"");
    }
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
  check_in_batch(array, stream, first);
  if (!first.error.empty()) return 0;

  const byte_buffer& values = first.result.values;
  require(values.size() == array.shape.byte_size(), "decoded values of the wrong size");
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
