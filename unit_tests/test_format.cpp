// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stream-format facts that do not need the reference vector files: the size bound (with the
// double header padding), the worked examples of the format specification, and padding handling.

#include <climits>

#include "codec_support.hpp"

using namespace ndzip_test;

TEST_CASE("format: compressed_size_bound counts the double header padding") {
  // Spec section 8: bound = P + n*512*(W+1) + B*U, with P = 4n rounded up to a whole word.
  CHECK(ndzip::compressed_size_bound<double>(ndzip::extent<1>(12293)) == 99896);  // not 99892
  CHECK(ndzip::compressed_size_bound<float>(ndzip::extent<1>(12293)) == 12 + 3 * 16896 + 5 * 4);
  CHECK(ndzip::compressed_size_bound<double>(ndzip::extent<1>(4096)) == 8 + 33280);
  CHECK(ndzip::compressed_size_bound<double>(ndzip::extent<1>(8192)) == 8 + 2 * 33280);
  CHECK(ndzip::compressed_size_bound<double>(ndzip::extent<2>(64, 192)) == 16 + 3 * 33280);
  CHECK(ndzip::compressed_size_bound<double>(ndzip::extent<3>(16, 16, 48)) == 16 + 3 * 33280);
  CHECK(ndzip::compressed_size_bound<double>(ndzip::extent<2>(65, 64)) == 8 + 33280 + 64 * 8);
  CHECK(ndzip::compressed_size_bound<float>(ndzip::extent<2>(65, 64)) == 4 + 16896 + 64 * 4);
  CHECK(ndzip::compressed_size_bound<float>(ndzip::extent<2>(63, 300)) == 63 * 300 * 4);
  CHECK(ndzip::compressed_size_bound<double>(ndzip::extent<3>(5, 6, 7)) == 5 * 6 * 7 * 8);
  CHECK(ndzip::compressed_size_bound<float>(ndzip::extent<1>(1)) == 4);
}

TEST_CASE_TEMPLATE("format: random double data with odd hypercube counts fills the bound exactly",
                   C, ndzip_test::f64_1d, ndzip_test::f64_2d, ndzip_test::f64_3d) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  std::vector<std::pair<ndzip::extent<D>, std::size_t>> cases;
  if constexpr (D == 1) {
    cases = {{ndzip::extent<1>(12293), 99896},
             {ndzip::extent<1>(4096), 33288},
             {ndzip::extent<1>(4097), 33296}};
  } else if constexpr (D == 2) {
    cases = {{ndzip::extent<2>(64, 192), 99856}, {ndzip::extent<2>(65, 64), 33800}};
  } else {
    cases = {{ndzip::extent<3>(16, 16, 48), 99856},
             {ndzip::extent<3>(17, 16, 16), 33288 + 256 * 8}};
  }
  for (const auto& grid_size : cases) {
    // Named copies, not a structured binding: lambdas below capture them (C++17, nvcc).
    const auto grid = grid_size.first;
    const auto size = grid_size.second;
    INFO("grid " << ndzip::to_string(grid));
    const auto input = generate_for<C>("random", 0, grid);
    CHECK(ndzip::compressed_size_bound<T>(grid) == size);
    for_each_backend([&](const std::string&, auto exec) {
      const auto stream = compress_on<T, D>(exec, input, grid);
      CHECK(stream.size() == size);
      CHECK(mismatch(decompress_on<T, D>(exec, stream, grid), input) == "");
    });
  }
}

TEST_CASE("format: spec example 12.3, a 4100-element float stream") {
  std::vector<std::uint32_t> input(4100, 0x80000001u);
  input[0] = 0x80000001u;
  for (int i = 1; i <= 30; ++i) input[i] = 0x00000002u;
  input[4096] = 0x3f800000u;  // 1.0f
  input[4097] = 0x40000000u;  // 2.0f
  input[4098] = 0x40400000u;  // 3.0f
  input[4099] = 0x40800000u;  // 4.0f
  std::vector<unsigned char> expected(544, 0);
  expected[0] = 0x83;                      // E_0 = 131 words
  expected[4] = 0x03, expected[7] = 0x80;  // head of chunk 0: 0x80000003
  expected[516] = 0x01;                    // plane 31: 0x00000001
  expected[523] = 0x80;                    // plane 1: 0x80000000
  expected[527] = 0xc0;                    // plane 0: 0xC0000000
  const unsigned char border[] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40,
                                  0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x40};
  std::copy(std::begin(border), std::end(border), expected.begin() + 528);

  // The float ramp of the same length: E_0 = 852, so 4 + 852*4 + 4*4 bytes.
  std::vector<std::uint32_t> ramp(4100);
  for (std::size_t i = 0; i < ramp.size(); ++i) {
    const float f = static_cast<float>(0.001 * static_cast<double>(i));
    std::memcpy(&ramp[i], &f, 4);
  }
  const ndzip::extent<1> grid(4100);
  for_each_backend([&](const std::string&, auto exec) {
    const auto stream = compress_on<float, 1>(exec, input, grid);
    CHECK(mismatch(stream, expected) == "");
    CHECK(mismatch(decompress_on<float, 1>(exec, expected, grid), input) == "");

    const auto ramp_stream = compress_on<float, 1>(exec, ramp, grid);
    CHECK(ramp_stream.size() == 3428);
    CHECK(load_u32(ramp_stream, 0) == 852);
    CHECK(mismatch(decompress_on<float, 1>(exec, ramp_stream, grid), ramp) == "");
  });
}

TEST_CASE("format: spec example 12.4, a 65x64 double field of ones") {
  const ndzip::extent<2> grid(65, 64);
  const std::vector<std::uint64_t> input(grid.size(), 0x3ff0000000000000ull);
  std::vector<unsigned char> expected(1112, 0);
  expected[0] = 0x4a;                        // E_0 = 74 words; bytes 4-7 are padding
  expected[14] = 0xe0, expected[15] = 0x7f;  // head 0 = 0x7FE0000000000000
  for (int c = 0; c < 10; ++c) expected[520 + 8 * c + 7] = 0x80;
  for (int e = 0; e < 64; ++e) expected[600 + 8 * e + 6] = 0xf0, expected[600 + 8 * e + 7] = 0x3f;
  for_each_backend([&](const std::string&, auto exec) {
    // compress_with pre-fills the stream buffer with 0xA5: the padding must still come out 0.
    const auto stream = compress_on<double, 2>(exec, input, grid);
    CHECK(mismatch(stream, expected) == "");
    CHECK(mismatch(decompress_on<double, 2>(exec, expected, grid), input) == "");
  });
}

TEST_CASE_TEMPLATE("format: header padding is written as zeros and ignored when decoding", C,
                   ndzip_test::f64_1d, ndzip_test::f64_2d, ndzip_test::f64_3d) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  constexpr std::size_t s = ndzip::profile<T, D>::side_length;
  ndzip::extent<D> grid;  // 3 hypercubes along the first axis and a border: odd n
  for (int a = 0; a < D; ++a) grid[a] = a == 0 ? 3 * s + 1 : s + 1;
  const auto input = generate_for<C>("smooth", 12, grid);
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    ndzip::compressor<T, D, Exec> codec(exec, grid);
    for (unsigned char filler : {0x00, 0xa5, 0xff}) {
      CAPTURE(+filler);
      auto stream = compress_with(codec, input, filler);
      REQUIRE(stream.size() > 16);
      CHECK(load_u32(stream, 12) == 0);
      stream[12] = stream[13] = stream[14] = stream[15] = 0xee;
      std::size_t consumed = 0;
      CHECK(mismatch(decompress_with(codec, stream, &consumed), input) == "");
      CHECK(consumed == stream.size());
    }
  });
}

TEST_CASE_TEMPLATE("format: grids at and beyond the format's limits", C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  using profile = ndzip::profile<T, D>;
  constexpr std::size_t s = profile::side_length;
  // The offset table holds 32-bit word offsets: at most this many worst-case blocks.
  constexpr std::size_t max_hypercubes = 0xffffffffu / profile::max_block_words;
  const auto hypercubes_along_first_axis = [](std::size_t n) {
    ndzip::extent<D> e;
    for (int a = 0; a < D; ++a) e[a] = a == 0 ? n * s : s;
    return e;
  };

  const auto largest = hypercubes_along_first_axis(max_hypercubes);
  const auto layout = model_layout_of(C::is_double, D, to_array(largest));
  CHECK(ndzip::compressed_size_bound<T>(largest) == layout.size_bound);
  CHECK_THROWS_AS(ndzip::compressed_size_bound<T>(hypercubes_along_first_axis(max_hypercubes + 1)),
                  std::invalid_argument);

  // Element counts whose byte sizes overflow std::size_t.
  ndzip::extent<D> overflowing;
  for (int a = 0; a < D; ++a) overflowing[a] = std::size_t{1} << (D == 1 ? 63 : 40);
  CHECK_THROWS_AS(ndzip::compressed_size_bound<T>(overflowing), std::invalid_argument);

  // A huge grid that is all border (no hypercube; in 1-D a border is shorter than a hypercube):
  // representable, and a compressor for it allocates nothing of the array's size, so a short
  // stream is rejected cheaply.
  // Every 4096 border elements are one team of a kernel launch, whose team count is an int.
  const auto border_only_grid = [](std::size_t last_extent) {
    ndzip::extent<D> e;
    for (int a = 0; a < D; ++a) e[a] = a == D - 1 && D > 1 ? last_extent : s - 1;
    return e;
  };
  const auto border_only = border_only_grid(std::size_t{1} << (D == 3 ? 32 : 36));
  CHECK(ndzip::compressed_size_bound<T>(border_only) == border_only.size() * sizeof(T));
  if constexpr (D > 1) {
    // 63 x 2^38 (2-D) has 4.2e9 border slices: refused, not launched with a wrapped count.
    const auto too_many_teams = border_only_grid(std::size_t{1} << (D == 3 ? 36 : 38));
    CHECK(too_many_teams.size() / ndzip::border_slice_size > std::size_t{INT_MAX});
    CHECK_THROWS_WITH_AS(ndzip::compressed_size_bound<T>(too_many_teams),
                         doctest::Contains("too large for one kernel launch"),
                         std::invalid_argument);
  }

  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    CHECK_THROWS_AS((ndzip::compressor<T, D, Exec>(exec, hypercubes_along_first_axis(
                        max_hypercubes + 1))),
                    std::invalid_argument);
    CHECK_THROWS_AS((ndzip::compressor<T, D, Exec>(exec, overflowing)), std::invalid_argument);
    ndzip::compressor<T, D, Exec> huge(exec, border_only);
    CHECK_THROWS_AS(huge.check_stream_size(border_only.size() * sizeof(T) - 1),
                    ndzip::stream_error);
    CHECK_NOTHROW(huge.check_stream_size(border_only.size() * sizeof(T)));
    // Too short: rejected before `values` (null here) is touched.
    Kokkos::View<std::uint64_t*, typename Exec::memory_space> stream("stream", 512);
    const std::size_t short_size = std::min<std::size_t>(4096, (border_only.size() - 1) * sizeof(T));
    CHECK_THROWS_AS(huge.decompress_raw(reinterpret_cast<const std::byte*>(stream.data()),
                                        short_size, nullptr),
                    ndzip::stream_error);
  });
}
