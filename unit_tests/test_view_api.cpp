// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Kokkos::View interface: layouts, the one-shot free functions, byte types of the stream,
// misuse (non-contiguous Views, wrong extents) and reuse of one compressor.

#include <stdexcept>

#include "codec_support.hpp"

using namespace ndzip_test;

namespace {

template <int D>
ndzip::extent<D> reversed(const ndzip::extent<D>& e) {
  ndzip::extent<D> r;
  for (int a = 0; a < D; ++a) r[a] = e[D - 1 - a];
  return r;
}

}  // namespace

TEST_CASE_TEMPLATE("view api: LayoutLeft Views are the C-order grid of reversed extents", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = bordered_grid<D>();  // C-order grid, slowest first
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto expected = model_stream<C>(input, grid);

  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    // The same memory seen as LayoutRight(grid) and as LayoutLeft(reversed grid).
    const auto right =
        Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
    using left_view = grid_view<T, D, Kokkos::LayoutLeft, space>;
    left_view left;
    if constexpr (D == 1)
      left = left_view(right.data(), grid[0]);
    else if constexpr (D == 2)
      left = left_view(right.data(), grid[1], grid[0]);
    else
      left = left_view(right.data(), grid[2], grid[1], grid[0]);
    REQUIRE(ndzip::grid_of(left) == grid);
    REQUIRE(ndzip::grid_of(right) == grid);
    if constexpr (D > 1) {
      // The LayoutLeft View's own extent order is reversed.
      CHECK(left.extent(0) == grid[D - 1]);
      CHECK(ndzip::grid_of(make_view<grid_view<T, D, Kokkos::LayoutLeft, space>>("l", grid)) ==
            reversed(grid));
    }

    ndzip::compressor<T, D, Exec> codec(exec, grid);
    auto stream = device_bytes<space>({}, codec.size_bound());
    const std::size_t size = codec.compress(left, stream);
    exec.fence();
    CHECK(mismatch(host_bytes(stream, size), expected) == "");
    CHECK(ndzip::compressed_size_bound(left) == ndzip::compressed_size_bound<T>(grid));

    // Decompressing into a LayoutLeft View writes the same memory as into LayoutRight.
    auto left_out = make_view<left_view>("left_out", reversed(grid));
    CHECK(codec.decompress(stream, left_out) == size);
    CHECK(mismatch(bits_of<Bits>(left_out), input) == "");

    // A compressor for the reversed extents does not accept the LayoutLeft View.
    if constexpr (D > 1) {
      ndzip::compressor<T, D, Exec> other(exec, reversed(grid));
      CHECK_THROWS_AS(other.compress(left, stream), std::invalid_argument);
    }
  });
}

TEST_CASE_TEMPLATE("view api: free functions compress and decompress", C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = bordered_grid<D>();
  const auto input = generate_for<C>("checker", C::is_double ? 12 : 4, grid);
  const auto expected = model_stream<C>(input, grid);

  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    const auto values =
        Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
    CHECK(ndzip::compressed_size_bound(values) == ndzip::compressed_size_bound<T>(grid));
    auto stream = device_bytes<space>({}, ndzip::compressed_size_bound(values), 0x33);
    // A const values View is accepted for compression.
    const grid_view<const T, D, Kokkos::LayoutRight, space> const_values = values;
    const std::size_t size = ndzip::compress(exec, const_values, stream);
    CHECK(mismatch(host_bytes(stream, size), expected) == "");

    auto out = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("out", grid);
    CHECK(ndzip::decompress(exec, stream, out) == size);
    CHECK(mismatch(bits_of<Bits>(out), input) == "");
  });
}

TEST_CASE("view api: stream Views of std::byte, char and unsigned char") {
  const ndzip::extent<2> grid(70, 130);
  using C = f32_2d;
  const auto input = generate_for<C>("smooth", 4, grid);
  const auto expected = model_stream<C>(input, grid);
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    const auto values =
        Kokkos::create_mirror_view_and_copy(space{}, host_view_of<float, 2>(input, grid));
    ndzip::compressor<float, 2, Exec> codec(exec, grid);
    auto check_with = [&](auto byte_tag) {
      using Byte = decltype(byte_tag);
      auto stream = device_bytes<space, Byte>({}, codec.size_bound());
      const std::size_t size = codec.compress(values, stream);
      exec.fence();
      CHECK(mismatch(host_bytes(stream, size), expected) == "");
      auto out = make_view<grid_view<float, 2, Kokkos::LayoutRight, space>>("out", grid);
      // A read-only stream View is accepted for decompression.
      const Kokkos::View<const Byte*, space> const_stream = stream;
      CHECK(codec.decompress(const_stream, out) == size);
      CHECK(mismatch(bits_of<std::uint32_t>(out), input) == "");
    };
    check_with(std::byte{});
    check_with(char{});
    check_with(static_cast<unsigned char>(0));
  });
}

TEST_CASE("view api: non-contiguous Views are rejected with std::invalid_argument") {
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    Kokkos::View<float**, Kokkos::LayoutRight, space> wide("wide", 100, 80);
    Kokkos::View<double***, Kokkos::LayoutLeft, space> cube("cube", 20, 20, 20);
    auto stream = device_bytes<space>({}, 1 << 20);

    // A matrix without its last column, one column of it, and a LayoutLeft cube cut short along
    // its (fastest) first axis.
    const auto cut = Kokkos::subview(wide, Kokkos::ALL, std::make_pair(0, 79));
    const auto column = Kokkos::subview(wide, Kokkos::ALL, 3);
    const auto box = Kokkos::subview(cube, std::make_pair(0, 19), Kokkos::ALL, Kokkos::ALL);
    CHECK_THROWS_AS(ndzip::grid_of(cut), std::invalid_argument);
    CHECK_THROWS_AS(ndzip::grid_of(column), std::invalid_argument);
    CHECK_THROWS_AS(ndzip::grid_of(box), std::invalid_argument);
    CHECK_THROWS_AS(ndzip::compress(exec, cut, stream), std::invalid_argument);
    CHECK_THROWS_AS(ndzip::compress(exec, column, stream), std::invalid_argument);
    CHECK_THROWS_AS(ndzip::compress(exec, box, stream), std::invalid_argument);
    CHECK_THROWS_AS(ndzip::compressed_size_bound(cut), std::invalid_argument);

    ndzip::compressor<float, 2, Exec> codec2(exec, ndzip::extent<2>(100, 79));
    CHECK_THROWS_AS(codec2.compress(cut, stream), std::invalid_argument);
    CHECK_THROWS_AS(codec2.decompress(stream, cut), std::invalid_argument);
    ndzip::compressor<float, 1, Exec> codec1(exec, ndzip::extent<1>(100));
    CHECK_THROWS_AS(codec1.compress(column, stream), std::invalid_argument);
    CHECK_THROWS_AS(codec1.decompress(stream, column), std::invalid_argument);

    // A strided stream View.
    Kokkos::View<unsigned char**, Kokkos::LayoutRight, space> bytes2d("bytes2d", 1 << 16, 2);
    const auto strided = Kokkos::subview(bytes2d, Kokkos::ALL, 0);
    Kokkos::View<float**, Kokkos::LayoutRight, space> small("small", 100, 79);
    CHECK_THROWS_AS(codec2.compress(small, strided), std::invalid_argument);
    CHECK_THROWS_AS(codec2.decompress(strided, small), std::invalid_argument);

    // A contiguous subview (whole leading rows) is fine.
    const auto rows = Kokkos::subview(wide, std::make_pair(10, 20), Kokkos::ALL);
    CHECK(ndzip::grid_of(rows) == ndzip::extent<2>(10, 80));
    CHECK_NOTHROW(ndzip::compress(exec, rows, stream));
  });
}

TEST_CASE_TEMPLATE("view api: values Views with other extents are rejected", C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const auto grid = bordered_grid<D>();
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    using view = grid_view<T, D, Kokkos::LayoutRight, space>;
    ndzip::compressor<T, D, Exec> codec(exec, grid);
    auto stream = device_bytes<space>({}, codec.size_bound());
    const auto good = make_view<view>("good", grid);
    const std::size_t size = codec.compress(good, stream);
    exec.fence();
    for (int axis = 0; axis < D; ++axis)
      for (int delta : {-1, +1}) {
        auto e = grid;
        e[axis] += delta;
        INFO("values extents " << ndzip::to_string(e) << " for a " << ndzip::to_string(grid)
                               << " compressor");
        const auto wrong = make_view<view>("wrong", e);
        CHECK_THROWS_AS(codec.compress(wrong, stream), std::invalid_argument);
        CHECK_THROWS_AS(codec.decompress(stream, wrong), std::invalid_argument);
      }
    // The compressor is still usable afterwards.
    auto out = make_view<view>("out", grid);
    CHECK(codec.decompress(stream, out) == size);
  });
}

TEST_CASE_TEMPLATE("view api: a reused compressor gives identical results", C, NDZIP_ALL_CONFIGS) {
  constexpr int D = C::dims;
  using T = typename C::value_type;
  const auto grid = bordered_grid<D>();
  const auto a = generate_for<C>("smooth", C::is_double ? 40 : 14, grid);
  const auto b = generate_for<C>("specials", 0, grid);
  const auto c = generate_for<C>("zeros", 0, grid);
  const auto expected_a = model_stream<C>(a, grid);
  const auto expected_b = model_stream<C>(b, grid);
  const auto expected_c = model_stream<C>(c, grid);
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    ndzip::compressor<T, D, Exec> codec(exec, grid);
    for (int round = 0; round < 3; ++round) {
      CAPTURE(round);
      // Alternating inputs of very different sizes must not leave anything behind.
      CHECK(mismatch(compress_with(codec, a), expected_a) == "");
      CHECK(mismatch(compress_with(codec, c), expected_c) == "");
      CHECK(mismatch(compress_with(codec, b), expected_b) == "");
      CHECK(mismatch(decompress_with(codec, expected_a), a) == "");
      CHECK(mismatch(decompress_with(codec, expected_c), c) == "");
      CHECK(mismatch(decompress_with(codec, expected_b), b) == "");
    }
    // A stream View longer than the stream: only the stream is consumed.
    std::size_t consumed = 0;
    CHECK(mismatch(decompress_with(codec, expected_b, &consumed, 4096), b) == "");
    CHECK(consumed == expected_b.size());
  });
}

TEST_CASE("view api: stream Views that start inside a larger buffer") {
  const ndzip::extent<3> grid(17, 33, 16);
  using C = f64_3d;
  const auto input = generate_for<C>("smooth", 24, grid);
  const auto expected = model_stream<C>(input, grid);
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    const auto values =
        Kokkos::create_mirror_view_and_copy(space{}, host_view_of<double, 3>(input, grid));
    ndzip::compressor<double, 3, Exec> codec(exec, grid);
    auto buffer = device_bytes<space>({}, codec.size_bound() + 64);
    // At a word-aligned offset (e.g. after a container header) the stream is the same.
    const auto at16 = Kokkos::subview(buffer, std::make_pair(std::size_t{16}, buffer.size()));
    const std::size_t size = codec.compress(values, at16);
    exec.fence();
    CHECK(mismatch(host_bytes(at16, size), expected) == "");
    auto out = make_view<grid_view<double, 3, Kokkos::LayoutRight, space>>("out", grid);
    CHECK(codec.decompress(at16, out) == size);
    CHECK(mismatch(bits_of<std::uint64_t>(out), input) == "");
    // A stream that is not aligned to the word size is refused as misuse, not miscoded.
    const auto at3 = Kokkos::subview(buffer, std::make_pair(std::size_t{3}, buffer.size()));
    CHECK_THROWS_AS(codec.compress(values, at3), std::invalid_argument);
    CHECK_THROWS_AS(codec.decompress(at3, out), std::invalid_argument);
  });
}

TEST_CASE("api: backend selection and grids the format cannot represent") {
  const auto backends = ndzip::enabled_backends();
  REQUIRE_FALSE(backends.empty());
  CHECK(ndzip::default_backend() == backends.front());
  CHECK_THROWS_AS(ndzip::with_backend("no-such-backend", [](auto) {}), std::invalid_argument);
  for (const auto& name : backends) {
    bool called = false;
    ndzip::with_backend(name, [&](auto exec) {
      called = true;
      CHECK(exec.concurrency() >= 1);
    });
    CHECK(called);
  }

  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    // The offset table addresses at most 2^32-1 words of worst-case block area:
    // 1016800 float hypercubes (4224 words each) fit, one more does not.
    CHECK_THROWS_AS(
        (ndzip::compressor<float, 1, Exec>(exec, ndzip::extent<1>(std::size_t{1016801} * 4096))),
        std::invalid_argument);
    // 1032444 double hypercubes (4160 words each) fit, one more does not.
    CHECK_THROWS_AS(
        (ndzip::compressor<double, 2, Exec>(exec, ndzip::extent<2>(std::size_t{1032445} * 64, 64))),
        std::invalid_argument);
    // Byte sizes that overflow std::size_t.
    CHECK_THROWS_AS((ndzip::compressor<float, 3, Exec>(
                        exec, ndzip::extent<3>(std::size_t{1} << 30, std::size_t{1} << 30,
                                               std::size_t{1} << 30))),
                    std::invalid_argument);
    CHECK_THROWS_AS(
        (ndzip::compressor<double, 2, Exec>(exec, ndzip::extent<2>(~std::size_t{0}, 3))),
        std::invalid_argument);
  });
}
