// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Whole kernels with emulated GPU lane groups on the host spaces: core::ndzip_engine run with the
// lane-ops of backends/emulated (32-lane warps as on CUDA; 64-lane wavefronts of two 32-lane
// groups as on HIP) on Serial and OpenMP must write every reference stream and every generated
// cross-backend stream byte for byte, and decode them back to the input. So every CI run runs
// the GPU kernels' logic: the row layout, shuffles, ballots, column placement, lane-level scans,
// the GPU shape of the forward and inverse transforms, and single-pass compression with its
// look-back (and, for stream buffers smaller than the bound, the three-kernel path). The
// streamed kernels are run here for every profile, also those the engine does not launch them
// for (core/streamed_kernels.hpp, streamed_kernels_win).

#include <cstring>

#include "backends/emulated/lane_ops.hpp"
#include "codec_support.hpp"
#include "core/ndzip_engine.hpp"
#include "core/streamed_kernels.hpp"

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

// What the streamed kernels (32-lane groups, emulated) make of one grid on `exec`, launched
// directly: the stream of an input, and the outcome and values of decoding a stream's first
// `given` bytes.
template <class C, class Exec>
struct streamed_run {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  using lane_ops = ndzip::backend::emulated_lane_ops<32>;
  using types = ndzip::core::streamed_types<T, C::dims, Exec, lane_ops>;

  Exec exec;
  ndzip::stream_layout<T, C::dims> layout;

  std::vector<unsigned char> compress(const std::vector<Bits>& input) const {
    const std::size_t teams = types::teams(layout);
    std::vector<Bits> stream(ndzip::compressed_size_bound<T>(layout.grid) / sizeof(Bits) + 1);
    std::vector<std::uint64_t> published(layout.hypercube_count, 0);
    std::uint64_t tickets = 0, size = 0;
    const ndzip::core::block_placement placement{published.data(), &tickets, 0, 1, 1};
    Kokkos::parallel_for("test::encode_streamed",
                         types::template policy<ndzip::backend::kernel_role::encode>(exec, teams),
                         ndzip::core::encode_streamed<T, C::dims, Exec, lane_ops>{
                             layout, input.data(), reinterpret_cast<std::byte*>(stream.data()),
                             placement, &size});
    exec.fence();
    REQUIRE(size <= stream.size() * sizeof(Bits));
    std::vector<unsigned char> bytes(size);
    std::memcpy(bytes.data(), stream.data(), size);
    return bytes;
  }

  ndzip::decompress_outcome decompress(const std::vector<unsigned char>& stream,
                                       std::size_t given, std::vector<Bits>& values) const {
    const std::size_t teams = types::teams(layout);
    std::vector<Bits> words(stream.size() / sizeof(Bits) + 1);
    std::memcpy(words.data(), stream.data(), stream.size());
    values.assign(layout.grid.size(), 0);
    std::uint64_t status[3] = {0, 0, 0};
    ndzip::decompress_outcome outcome{};
    Kokkos::parallel_for(
        "test::decode_streamed",
        types::template policy<ndzip::backend::kernel_role::decode>(exec, teams),
        ndzip::core::decode_streamed<T, C::dims, Exec, lane_ops>{
            layout, reinterpret_cast<const std::byte*>(words.data()), given, values.data(),
            ndzip::core::outcome_gatherer{status, status + 1, status + 2, &outcome, teams}});
    exec.fence();
    return outcome;
  }
};

}  // namespace

TEST_CASE_TEMPLATE("emulation: reference vectors through 32-lane warps (CUDA)", C,
                   NDZIP_ALL_CONFIGS) {
  check_reference_vectors<32, C>();
}

TEST_CASE_TEMPLATE("emulation: reference vectors through 64-lane wavefronts (HIP)", C,
                   NDZIP_ALL_CONFIGS) {
  check_reference_vectors<64, C>();
}

// The streamed kernels run here for every profile, launched directly.
TEST_CASE_TEMPLATE(
    "emulation: generated cross-backend cases through 32- and 64-lane groups and the streamed "
    "kernels",
    C, NDZIP_ALL_CONFIGS) {
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
        const streamed_run<C, Exec> streamed{exec, ndzip::stream_layout<T, D>(grid)};
        INFO("streamed kernels");
        REQUIRE(streamed.layout.hypercube_count > 0);
        CHECK(mismatch(streamed.compress(input), expected) == "");
        std::vector<typename C::bits_type> values;
        const auto outcome = streamed.decompress(expected, expected.size(), values);
        CHECK(outcome.failure == ndzip::decompress_outcome::no_failure);
        CHECK(outcome.stream_bytes == expected.size());
        CHECK(mismatch(values, input) == "");
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


TEST_CASE_TEMPLATE("emulation: the streamed decoder reports damaged streams", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = cross_backend_shapes<D>().back();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto stream = model_stream<C>(input, grid);
  const ndzip::stream_layout<T, D> layout(grid);
  REQUIRE(layout.hypercube_count >= 3);
  for_each_host_backend([&](auto exec) {
    const streamed_run<C, decltype(exec)> run{exec, layout};
    std::vector<Bits> values;
    // Truncated: hypercube 0 reports it, with the size the table needs.
    auto outcome = run.decompress(stream, stream.size() - 1, values);
    CHECK(outcome.failure ==
          ndzip::core::failure_key(0, ndzip::core::stream_failure::stream_truncated));
    CHECK(outcome.stream_bytes == stream.size());
    // A head of hypercube 1 with one more column than its block holds.
    auto damaged = stream;
    const auto* table = reinterpret_cast<const std::uint32_t*>(stream.data());
    const std::size_t head = layout.header_bytes() + table[0] * sizeof(Bits);
    Bits word;
    std::memcpy(&word, damaged.data() + head, sizeof word);
    // One column more (its lowest clear bit set), or one fewer where every bit is set.
    word = word == static_cast<Bits>(~Bits{0}) ? static_cast<Bits>(word & (word - 1))
                                               : static_cast<Bits>(word | (word + 1));
    std::memcpy(damaged.data() + head, &word, sizeof word);
    outcome = run.decompress(damaged, damaged.size(), values);
    CHECK(outcome.failure ==
          ndzip::core::failure_key(1, ndzip::core::stream_failure::heads_do_not_match_block));
    // Hypercube 1's entry equal to hypercube 0's: its block is shorter than its heads.
    damaged = stream;
    std::uint32_t entry = table[0];
    std::memcpy(damaged.data() + 4, &entry, sizeof entry);
    outcome = run.decompress(damaged, damaged.size(), values);
    CHECK(outcome.failure ==
          ndzip::core::failure_key(1, ndzip::core::stream_failure::block_shorter_than_heads));
  });
}

TEST_CASE("emulation: a lane group's look-back reads windows of 32 published words") {
  using lane_ops = ndzip::backend::emulated_lane_ops<32>;
  // Block 0 an inclusive prefix, blocks 1..99 aggregates of length j, except where a test
  // publishes an inclusive prefix: the walk from block 100 crosses three whole windows.
  std::vector<std::uint64_t> published(101, 0);
  std::uint64_t tickets = 0;
  const ndzip::core::block_placement placement{published.data(), &tickets, 0, 1, 1};
  placement.publish_inclusive_prefix(0, 1000);
  std::uint64_t sum = 1000;
  for (std::uint64_t j = 1; j < 100; ++j) {
    placement.publish_aggregate(j, j);
    sum += j;
  }
  CHECK(ndzip::core::group_exclusive_prefix<lane_ops>({}, placement, 100, 7) == sum);
  CHECK(ndzip::core::block_placement::is_inclusive_prefix(placement.published_word(100)));
  CHECK(ndzip::core::block_placement::value_of(placement.published_word(100)) == sum + 7);
  // An inclusive prefix in the middle of the first window ends the walk there.
  placement.publish_inclusive_prefix(90, 50);
  const std::uint64_t after_90 = 91 + 92 + 93 + 94 + 95 + 96 + 97 + 98 + 99;
  CHECK(ndzip::core::group_exclusive_prefix<lane_ops>({}, placement, 100, 7) == 50 + after_90);
  // Block 0 takes no look-back.
  CHECK(ndzip::core::group_exclusive_prefix<lane_ops>({}, placement, 0, 3) == 0);
  CHECK(ndzip::core::block_placement::value_of(placement.published_word(0)) == 3);
}
