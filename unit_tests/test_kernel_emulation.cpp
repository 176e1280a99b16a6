// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Whole kernels with emulated GPU lane groups on the host spaces: core::ndzip_engine run with the
// lane-ops of backends/emulated (32-lane warps as on CUDA; 64-lane wavefronts of two 32-lane
// groups as on HIP) on Serial and OpenMP must write every reference stream and every generated
// cross-backend stream byte for byte, and decode them back to the input. So every CI run runs
// the GPU kernels' logic: the row layout, shuffles, ballots, column placement, lane-level scans,
// the GPU shape of the forward and inverse transforms, and single-pass compression with its
// look-back (and, for stream buffers smaller than the bound, the three-kernel path).

#include <cstring>

#include "backends/emulated/lane_ops.hpp"
#include "codec_support.hpp"
#include "core/ndzip_engine.hpp"

using namespace ndzip_test;

namespace {

// The default mode's engine for one grid, its kernels over emulated lane groups.
template <int WaveLanes, class T, int D, class Exec>
using emulated_engine =
    ndzip::core::ndzip_engine<T, D, Exec, ndzip::backend::emulated_lane_ops<WaveLanes>>;

// The stream of `input`, compressed by `engine` into a buffer of `capacity` bytes (default: the
// size bound, which selects single-pass compression as on a GPU; less selects the three-kernel
// path).
template <class Engine, class Bits>
std::vector<unsigned char> emulated_compress(Engine& engine, const std::vector<Bits>& input,
                                             std::size_t capacity = 0) {
  using T = std::conditional_t<sizeof(Bits) == 4, float, double>;
  if (capacity == 0) capacity = engine.size_bound(0);
  std::vector<Bits> stream(capacity / sizeof(Bits) + 1, static_cast<Bits>(0xa5a5a5a5a5a5a5a5u));
  const std::size_t size =
      engine.compress(reinterpret_cast<const T*>(input.data()),
                      reinterpret_cast<std::byte*>(stream.data()), capacity);
  Kokkos::fence();
  REQUIRE(size <= capacity);
  std::vector<unsigned char> bytes(size);
  if (size) std::memcpy(bytes.data(), stream.data(), size);
  return bytes;
}

// The values decoded from `stream` by `engine`; the whole stream must be consumed.
template <class Engine>
auto emulated_decompress(Engine& engine, const std::vector<unsigned char>& stream) {
  using Bits = typename ndzip::profile<typename Engine::value_type, Engine::dimensions>::bits_type;
  std::vector<Bits> words((stream.size() + sizeof(Bits) - 1) / sizeof(Bits));
  if (!stream.empty()) std::memcpy(words.data(), stream.data(), stream.size());
  std::vector<Bits> values(engine.grid(0).size());
  const std::size_t consumed =
      engine.decompress(reinterpret_cast<const std::byte*>(words.data()), stream.size(),
                        reinterpret_cast<typename Engine::value_type*>(values.data()));
  CHECK(consumed == stream.size());
  return values;
}

// Calls f(exec) for every enabled backend whose kernels run on the host.
template <class F>
void for_each_host_backend(F&& f) {
  int host_backends = 0;
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    if constexpr (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
      ++host_backends;
      f(exec);
    }
  });
  REQUIRE(host_backends > 0);
}

template <int WaveLanes, class C>
void check_reference_vectors() {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const bool files = vectors_available();
  std::size_t cases = 0;
  for (const auto& v : reference_vectors()) {
    if (v.is_double != C::is_double || v.dims != D) continue;
    ++cases;
    INFO("vector " << std::string(v.name));
    const auto input = generate_bits<Bits>(parse_vector_name(v.name));
    std::optional<std::vector<unsigned char>> stream_file;
    if (files) {
      stream_file = read_vector_stream(v);
      REQUIRE(stream_file.has_value());
    }
    for_each_host_backend([&](auto exec) {
      using Exec = decltype(exec);
      emulated_engine<WaveLanes, T, D, Exec> engine(exec, make_extent<D>(v.extents));
      const auto stream = emulated_compress(engine, input);
      CHECK(stream.size() == v.stream_bytes);
      CHECK(sha256_hex(stream) == v.stream_sha256);
      if (files) CHECK(mismatch(stream, *stream_file) == "");
      CHECK(mismatch(emulated_decompress(engine, files ? *stream_file : stream), input) == "");
    });
  }
  CHECK(cases >= 10);
}

}  // namespace

TEST_CASE_TEMPLATE("emulation: reference vectors through 32-lane warps (CUDA)", C,
                   NDZIP_ALL_CONFIGS) {
  check_reference_vectors<32, C>();
}

TEST_CASE_TEMPLATE("emulation: reference vectors through 64-lane wavefronts (HIP)", C,
                   NDZIP_ALL_CONFIGS) {
  check_reference_vectors<64, C>();
}

TEST_CASE_TEMPLATE("emulation: generated cross-backend cases through 32- and 64-lane groups", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const int noise = C::is_double ? 24 : 8;
  for (const auto& grid : cross_backend_shapes<D>()) {
    for (const auto& family : cross_backend_families()) {
      INFO("grid " << ndzip::to_string(grid) << ", family " << family);
      const auto input = generate_for<C>(family, noise, grid);
      const auto expected = model_stream<C>(input, grid);
      for_each_host_backend([&](auto exec) {
        using Exec = decltype(exec);
        emulated_engine<32, T, D, Exec> warps(exec, grid);
        INFO("32-lane warps");
        CHECK(mismatch(emulated_compress(warps, input), expected) == "");
        CHECK(mismatch(emulated_decompress(warps, expected), input) == "");
        emulated_engine<64, T, D, Exec> wavefronts(exec, grid);
        INFO("64-lane wavefronts");
        CHECK(mismatch(emulated_compress(wavefronts, input), expected) == "");
        CHECK(mismatch(emulated_decompress(wavefronts, expected), input) == "");
      });
    }
  }
}

TEST_CASE_TEMPLATE("emulation: single-pass and three-kernel compression give the same streams", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const auto grid = cross_backend_shapes<D>().front();
  const int noise = C::is_double ? 24 : 8;
  const auto input = generate_for<C>("smooth", noise, grid);
  const auto expected = model_stream<C>(input, grid);
  const auto other_input = generate_for<C>("checker", noise, grid);
  const auto other_expected = model_stream<C>(other_input, grid);
  for_each_host_backend([&](auto exec) {
    using Exec = decltype(exec);
    emulated_engine<32, T, D, Exec> warps(exec, grid);
    emulated_engine<64, T, D, Exec> wavefronts(exec, grid);
    REQUIRE(expected.size() < warps.size_bound(0));
    // Repeated single-pass calls on one engine, with inputs whose blocks differ: each call's
    // look-back must use only its own published words, never the previous call's.
    for (int call = 0; call < 4; ++call) {
      CAPTURE(call);
      CHECK(mismatch(emulated_compress(wavefronts, input), expected) == "");
      CHECK(mismatch(emulated_compress(wavefronts, other_input), other_expected) == "");
      CHECK(mismatch(emulated_compress(warps, other_input), other_expected) == "");
      CHECK(mismatch(emulated_compress(warps, input), expected) == "");
    }
    // A buffer of exactly the stream's size is below the bound: the three-kernel path, which
    // checks the size before writing; one byte less is refused.
    CHECK(mismatch(emulated_compress(wavefronts, input, expected.size()), expected) == "");
    CHECK(mismatch(emulated_compress(wavefronts, input), expected) == "");
    CHECK_THROWS_AS(emulated_compress(warps, input, expected.size() - 1), ndzip::capacity_error);
  });
}
