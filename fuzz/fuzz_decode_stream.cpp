// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: a raw ndzip stream of a shaped array (fuzz_support.hpp) decoded on every backend.
// Properties: decoding ends in ndzip::stream_error or in values; every backend reaches the same
// outcome (the same message, or the same values from the same number of bytes); decoded values
// compress, by the library and by the reference model alike, to a stream that decodes to them.
// The GPUs' streamed decoder (core/streamed_kernels.hpp), run here on Serial with emulated
// 32-lane groups for every shape, reaches the backends' outcome too.

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>

#include <ndzip/error.hpp>

#include "backends/emulated/lane_ops.hpp"
#include "codec.hpp"
#include "core/streamed_kernels.hpp"
#include "fuzz_support.hpp"

using namespace ndzip_fuzz;

namespace {

// Decodes `stream` with the streamed kernel, launched directly (so for every shape, whatever
// the engine would launch), and requires `expected`: the message the engine would give for its
// outcome, or the same values from the same number of bytes. Streams shorter than the smallest
// are refused before any kernel runs, and grids without hypercubes have no streamed kernel.
void check_streamed_decoder(const array_desc& array, const byte_buffer& stream,
                            const decode_outcome& expected) {
  if (array.mode != ndzip::codec_mode::ndzip) return;
  ndzip::visit_shape(array.shape, [&](auto tag, const auto& grid) {
    using T = typename decltype(tag)::type;
    constexpr int D = std::decay_t<decltype(grid)>::dimensions;
    using profile = ndzip::profile<T, D>;
    using lane_ops = ndzip::backend::emulated_lane_ops<32>;
    using types = ndzip::core::streamed_types<T, D, Kokkos::Serial, lane_ops>;
    const ndzip::stream_layout<T, D> layout(grid);
    if (layout.hypercube_count == 0 || stream.size() < layout.smallest_stream_bytes()) return;
    const std::size_t teams = types::teams(layout);
    byte_buffer values(grid.size() * sizeof(T));
    std::uint64_t status[3] = {0, 0, 0};
    ndzip::decompress_outcome outcome{};
    Kokkos::parallel_for(
        "fuzz::decode_streamed",
        types::template policy<ndzip::backend::kernel_role::decode>(Kokkos::Serial(), teams),
        ndzip::core::decode_streamed<T, D, Kokkos::Serial, lane_ops>{
            layout, stream.data(), stream.size(),
            reinterpret_cast<typename profile::bits_type*>(values.data()),
            ndzip::core::outcome_gatherer{status, status + 1, status + 2, &outcome, teams}});
    Kokkos::fence();
    if (outcome.failure != ndzip::decompress_outcome::no_failure) {
      const std::string message = ndzip::core::describe_stream_failure(
          outcome, profile::chunks_per_hypercube, profile::max_block_words, ndzip::to_string(grid));
      require(message == expected.error, "the streamed decoder and " + backends()[0] +
                                             " disagree: '" + message + "' vs '" +
                                             expected.error + "'");
    } else {
      require(expected.error.empty(),
              "the streamed decoder decoded what " + backends()[0] + " refused: " + expected.error);
      require(outcome.stream_bytes == expected.result.consumed &&
                  same_bytes(values, expected.result.values),
              "the streamed decoder decoded other values than " + backends()[0]);
    }
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = parse_shaped_input({reinterpret_cast<const std::byte*>(data), size});
  if (!input) return 0;
  const array_desc& array = input->array;
  const byte_buffer stream = aligned_copy(input->payload);

  const decode_outcome first = decode_on_every_backend(array, stream);
  check_streamed_decoder(array, stream, first);
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
