// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Folding (ndzip/folding.hpp): the rule on the chunk shapes Zarr, h5py and xarray pick, the
// version 3 frame a folded array gets (its stream the raw stream of the folded grid, its
// header read back), frames of either coding read by every reader of the array's View or
// dynamic_compressor, what a reader refuses, the size bounds, and the chunk shape suggested
// where no folding helps.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec_support.hpp"
#include "frame_support.hpp"
#include "ndzip/dynamic.hpp"
#include "ndzip/folding.hpp"

using namespace ndzip_test;

namespace {

ndzip::array_shape f32(std::initializer_list<std::uint64_t> extents) {
  return ndzip::array_shape(ndzip::element_type::float32, extents);
}

}  // namespace

TEST_CASE("folding: the rule on the chunk shapes users get by default") {
  struct expected {
    ndzip::array_shape chunk;
    std::string coded;
  };
  const expected cases[] = {
      // xarray's Zarr chunks of ocean_levitus_temp: no hypercube as it is, 57344 of 81000 in
      // (450, 180), 77824 as one row.
      {f32({5, 90, 180}), "float 81000"},
      // h5py's chunks=True of the same array: 0 as it is; 4096 in (69, 90) and in (6210): a tie
      // keeps the higher rank.
      {f32({3, 23, 90}), "float 69x90"},
      // At least 3/4 in hypercubes: as it is, even where a folding would hold more.
      {f32({16, 16, 20}), "float 16x16x20"},
      {f32({130, 67}), "float 130x67"},
      // 149x149 (73.8 % as it is), 20480 of 22201 as one row.
      {f32({149, 149}), "float 22201"},
      // Hypercubes only in the 1-D folding.
      {f32({1, 1, 5000}), "float 5000"},
      {f32({10, 1000}), "float 10000"},
      // No folding has a hypercube: as it is.
      {f32({2, 3, 5}), "float 2x3x5"},
      {f32({33, 18, 20}), "float 33x18x20"},  // 8192 as it is and as one row: a tie
      // Rank 1 is never folded.
      {f32({4095}), "float 4095"},
      {ndzip::array_shape(ndzip::element_type::float64, {5, 90, 180}), "double 81000"},
      {f32({5, 30, 64}), "float 150x64"},  // 8192 in (150, 64) and in (9600): a tie
  };
  for (const expected& c : cases) {
    INFO(c.chunk.to_string());
    CHECK(ndzip::coded_shape(c.chunk, ndzip::folding::automatic).to_string() == c.coded);
    CHECK(ndzip::coded_shape(c.chunk, ndzip::folding::none) == c.chunk);
  }
  CHECK(ndzip::elements_in_hypercubes(f32({5, 90, 180})) == 0);
  CHECK(ndzip::elements_in_hypercubes(f32({450, 180})) == 448 * 128);
  CHECK(ndzip::folded_shape(f32({5, 90, 180}), 1).to_string() == "float 81000");
  CHECK_THROWS_AS(ndzip::folded_shape(f32({5, 90}), 3), std::invalid_argument);
  CHECK_THROWS_AS(ndzip::folded_shape(f32({5, 90}), 0), std::invalid_argument);
  CHECK(ndzip::parse_folding("automatic") == ndzip::folding::automatic);
  CHECK(ndzip::parse_folding("none") == ndzip::folding::none);
  CHECK_FALSE(ndzip::parse_folding("auto"));
}

TEST_CASE("folding: the chunk shape suggested where no folding leaves half in hypercubes") {
  // h5py's chunks=True for arrays below a hypercube's worth of elements per chunk.
  CHECK(ndzip::suggested_chunk_shape(f32({2915})).to_string() == "float 4096");
  CHECK(ndzip::suggested_chunk_shape(f32({38, 38})).to_string() == "float 64x64");
  CHECK(ndzip::suggested_chunk_shape(f32({5, 9, 12})).to_string() == "float 16x16x16");
  CHECK(ndzip::suggested_chunk_shape(f32({100, 1000})).to_string() == "float 128x1024");
  // The array's extents cap the suggestion: taken whole where not above the side, rounded
  // down where rounding up would pass them.
  CHECK(ndzip::suggested_chunk_shape(f32({38, 38}), f32({149, 149})).to_string() ==
        "float 64x64");
  // An array of 4000 values has no chunk with a hypercube: the whole array.
  CHECK(ndzip::suggested_chunk_shape(f32({38, 38}), f32({40, 100})).to_string() ==
        "float 40x100");
  // (40, 64) rounded holds no hypercube either (2560 values): grown along the fastest axis.
  CHECK(ndzip::suggested_chunk_shape(f32({38, 38}), f32({40, 1000})).to_string() ==
        "float 38x108");
  CHECK(ndzip::suggested_chunk_shape(f32({3, 20}), f32({3, 5000})).to_string() ==
        "float 3x1366");  // 3 rows: grown along the fastest axis to 4096 elements
  CHECK(ndzip::suggested_chunk_shape(f32({100}), f32({2915})).to_string() == "float 2915");
  // Not a structured binding: doctest's INFO captures its operands in a lambda, which nvcc
  // (CUDA 11.8, C++17) refuses for structured bindings.
  for (const auto& chunk_and_array :
       {std::pair{f32({38, 38}), f32({149, 149})}, std::pair{f32({3, 20}), f32({3, 5000})},
        std::pair{f32({5, 5, 5}), f32({5, 5, 5000})}}) {
    const ndzip::array_shape& chunk = chunk_and_array.first;
    const ndzip::array_shape& array = chunk_and_array.second;
    INFO(chunk.to_string() << " of " << array.to_string());
    const ndzip::array_shape suggested = ndzip::suggested_chunk_shape(chunk, array);
    const ndzip::array_shape coded = ndzip::coded_shape(suggested, ndzip::folding::automatic);
    CHECK(2 * ndzip::elements_in_hypercubes(coded) >= coded.element_count());
  }
  CHECK_THROWS_AS(ndzip::suggested_chunk_shape(f32({38, 38}), f32({38})), std::invalid_argument);
}

TEST_CASE_TEMPLATE("folding: a folded array's frame is version 3 around the folded grid's stream",
                   C, f32_2d, f32_3d, f64_2d, f64_3d) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  // Shapes the rule folds: float 10x1000 to 10000; 5x30x64 to 150x64.
  const ndzip::extent<D> grid = [] {
    if constexpr (D == 2)
      return ndzip::extent<2>(10, 1000);
    else
      return ndzip::extent<3>(5, 30, 64);
  }();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const ndzip::array_shape shape(ndzip::element_type_of<T>(), grid);
  const ndzip::array_shape coded = ndzip::coded_shape(shape, ndzip::folding::automatic);
  REQUIRE(coded.rank() < D);
  using host = Kokkos::DefaultHostExecutionSpace;

  for (const ndzip::codec_mode mode : {ndzip::codec_mode::ndzip, ndzip::codec_mode::high_ratio}) {
    INFO("mode " << std::string(ndzip::codec_mode_name(mode)));
    // The stream of the folded grid, as compress writes it for a View of that shape.
    std::vector<unsigned char> coded_stream;
    ndzip::visit_shape(coded, [&](auto, const auto& coded_grid) {
      constexpr int R = std::decay_t<decltype(coded_grid)>::dimensions;
      ndzip::compressor<T, R, host> codec(host{}, coded_grid, mode);
      coded_stream = compress_with(codec, input);
    });
    frame_bytes first;
    for_each_backend([&](const std::string& name, auto exec) {
      using space = typename decltype(exec)::memory_space;
      const auto values = Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
      const frame_bytes frame = frame_of(exec, values, mode, ndzip::folding::automatic);
      if (first.empty()) first = frame;
      CHECK(frame == first);  // every backend writes the same frame
      CHECK(frame[4] == std::byte{3});
      CHECK(std::to_integer<unsigned>(frame[7]) ==
            (static_cast<unsigned>(mode) | static_cast<unsigned>(coded.rank()) << 4));
      const ndzip::frame_info info = ndzip::inspect_frame(frame.data(), frame.size());
      CHECK(info.dimensions == D);
      CHECK(info.coded_dimensions == coded.rank());
      CHECK(info.mode == mode);
      CHECK(ndzip::coded_shape_of(info) == coded);
      CHECK(info.extents == shape.extents());  // the array's extents, not the coded grid's
      CHECK(mismatch(std::vector<unsigned char>(
                         reinterpret_cast<const unsigned char*>(frame.data()) + 48,
                         reinterpret_cast<const unsigned char*>(frame.data()) + frame.size()),
                     coded_stream) == "");
      CHECK_NOTHROW(ndzip::verify_frame_checksum(frame.data(), frame.size()));

      // Decoded into the array's View, LayoutRight and LayoutLeft alike.
      auto out = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("out", grid);
      ndzip::decompress_frame(exec, const_frame_view(frame.data(), frame.size()), out);
      CHECK(mismatch(bits_of<Bits>(out), input) == "");
      ndzip::extent<D> reversed;
      for (int a = 0; a < D; ++a) reversed[a] = grid[D - 1 - a];
      auto left = make_view<grid_view<T, D, Kokkos::LayoutLeft, space>>("left", reversed);
      ndzip::decompress_frame(exec, const_frame_view(frame.data(), frame.size()), left);
      CHECK(mismatch(bits_of<Bits>(left), input) == "");

      // folding::none: the frame of before (version 1 or 2), read by the same readers.
      const frame_bytes plain = frame_of(exec, values, mode, ndzip::folding::none);
      CHECK(plain[4] == static_cast<std::byte>(mode == ndzip::codec_mode::ndzip ? 1 : 2));
      CHECK(ndzip::inspect_frame(plain.data(), plain.size()).coded_dimensions == D);
      ndzip::decompress_frame(exec, const_frame_view(plain.data(), plain.size()), out);
      CHECK(mismatch(bits_of<Bits>(out), input) == "");
      // Here folding pays: the folded grid has hypercubes, the grid as it is none (2-D) or few.
      // The high-ratio mode codes the border in 1-D hypercubes already: no worse.
      if (mode == ndzip::codec_mode::ndzip)
        CHECK(frame.size() < plain.size());
      else
        CHECK(frame.size() <= plain.size());

      // dynamic_compressor writes the same frames, and one object reads both codings.
      ndzip::dynamic_compressor codec(name, shape, mode);
      CHECK(codec.frame_coded_shape() == coded);
      std::vector<std::byte> dynamic_frame(codec.frame_size_bound());
      dynamic_frame.resize(
          codec.compress_frame(input.data(), dynamic_frame.data(), dynamic_frame.size()));
      CHECK(dynamic_frame == frame);
      std::vector<Bits> decoded(input.size());
      for (const frame_bytes* f : {&frame, &plain}) {
        std::fill(decoded.begin(), decoded.end(), Bits{0});
        codec.decompress_frame(f->data(), f->size(), decoded.data());
        CHECK(mismatch(decoded, input) == "");
      }
      ndzip::dynamic_compressor unfolded(name, shape, mode, ndzip::folding::none);
      CHECK(unfolded.frame_coded_shape() == shape);
      std::vector<std::byte> unfolded_frame(unfolded.frame_size_bound());
      unfolded_frame.resize(
          unfolded.compress_frame(input.data(), unfolded_frame.data(), unfolded_frame.size()));
      CHECK(unfolded_frame == plain);
      // The bare stream is always the stream of the array as given.
      std::vector<std::byte> bare(codec.size_bound());
      bare.resize(codec.compress(input.data(), bare.data(), bare.size()));
      CHECK(std::equal(bare.begin(), bare.end(), plain.begin() + 48, plain.end()));
    });
  }
}

TEST_CASE("folding: the size bounds cover the folded grid's stream") {
  // Incompressible values: the folded grid (hypercubes: heads and every plane) needs more
  // than the grid as it is (all border, raw). The bounds must cover the larger.
  const ndzip::extent<2> grid(10, 1000);
  const auto input = generate_for<f32_2d>("random", 0, grid);
  const auto values = host_view_of<float, 2>(input, grid);
  const ndzip::array_shape shape(ndzip::element_type::float32, grid);
  const std::size_t as_given = ndzip::compressed_size_bound<float>(grid);
  const std::size_t folded = ndzip::compressed_size_bound<float>(ndzip::extent<1>(10000));
  REQUIRE(folded > as_given);
  CHECK(ndzip::frame_size_bound(values) == 48 + folded);
  const frame_bytes frame = frame_of(Kokkos::DefaultHostExecutionSpace{}, values,
                                     ndzip::codec_mode::ndzip, ndzip::folding::automatic);
  CHECK(frame.size() > 48 + as_given);  // what a bound of the unfolded grid would not hold
  CHECK(frame.size() <= ndzip::frame_size_bound(values));
  ndzip::dynamic_compressor codec(ndzip::enabled_backends().front(), shape);
  CHECK(codec.frame_size_bound() == 48 + folded);
  CHECK(codec.size_bound() == as_given);
}

TEST_CASE("folding: what a reader of version 3 refuses") {
  const ndzip::extent<2> grid(10, 1000);
  const auto input = generate_for<f32_2d>("smooth", 8, grid);
  const frame_bytes frame =
      frame_of(Kokkos::DefaultHostExecutionSpace{}, host_view_of<float, 2>(input, grid),
               ndzip::codec_mode::ndzip, ndzip::folding::automatic);
  REQUIRE(frame[4] == std::byte{3});
  REQUIRE(frame[7] == std::byte{0x10});
  const frame_bytes header(frame.begin(), frame.begin() + 48);
  const auto edited = [&](std::size_t at, unsigned value) {
    frame_bytes h = header;
    h[at] = static_cast<std::byte>(value);
    return frame_error_of([&] { ndzip::read_frame_header(h.data(), h.size()); });
  };
  CHECK(edited(7, 0x20) ==
        "ndzip: not a valid ndzip frame: a 2-D array coded as 2-D (version 3 records an array "
        "folded to fewer dimensions, at least 1)");
  CHECK(edited(7, 0x00).find("coded as 0-D") != std::string::npos);
  CHECK(edited(7, 0x12) ==
        "ndzip: not a valid ndzip frame: unknown codec mode 2 (0 = ndzip, 1 = high_ratio)");
  // The stream length is checked against the folded grid's range, not the array's: the
  // 10x1000 grid (all border) has one stream length, 40000 bytes.
  const ndzip::extent<1> folded(10000);
  const std::uint64_t smallest = ndzip::smallest_stream_bytes<float>(folded, ndzip::codec_mode::ndzip);
  const std::uint64_t largest = ndzip::compressed_size_bound<float>(folded);
  REQUIRE(smallest < 40000);
  REQUIRE(largest > 40000);
  const auto with_length = [&](std::uint64_t length) {
    frame_bytes h = header;
    for (int i = 0; i < 8; ++i) h[32 + i] = static_cast<std::byte>(length >> (8 * i));
    return frame_error_of([&] { ndzip::read_frame_header(h.data(), h.size()); });
  };
  CHECK(with_length(smallest) == "");
  CHECK(with_length(largest) == "");
  CHECK(with_length(largest + 4) ==
        "ndzip: inconsistent frame: a float 10x1000 array (coded as 10000) compresses to " +
            std::to_string(smallest) + " to " + std::to_string(largest) +
            " bytes, but the stream has " + std::to_string(largest + 4));
  // Writers refuse a coded rank readers refuse.
  const std::byte* stream = frame.data() + 48;
  CHECK_THROWS_AS(ndzip::encode_frame_header(ndzip::element_type::float32, 2, {10, 1000, 0},
                                             stream, frame.size() - 48, ndzip::codec_mode::ndzip,
                                             3),
                  std::invalid_argument);
  // Relabelled as unfolded, refused: here by the length (the 10x1000 grid's stream is 40000
  // bytes); a length both grids can have, by the checksum, which covers byte 7.
  frame_bytes relabelled = frame;
  relabelled[4] = std::byte{1};
  relabelled[7] = std::byte{0};
  CHECK_THROWS_WITH_AS(ndzip::verify_frame_checksum(relabelled.data(), relabelled.size()),
                       doctest::Contains("a float 10x1000 array compresses to 40000 to 40000"),
                       ndzip::frame_error);
  const ndzip::extent<3> cube(5, 30, 64);
  const auto smooth = generate_for<f32_3d>("smooth", 8, cube);
  frame_bytes folded3 =
      frame_of(Kokkos::DefaultHostExecutionSpace{}, host_view_of<float, 3>(smooth, cube),
               ndzip::codec_mode::ndzip, ndzip::folding::automatic);
  REQUIRE(folded3[7] == std::byte{0x20});
  folded3[7] = std::byte{0x10};  // 3-D folded to 1-D: 9600, with as many hypercubes
  CHECK_THROWS_WITH_AS(ndzip::verify_frame_checksum(folded3.data(), folded3.size()),
                       doctest::Contains("checksum mismatch"), ndzip::frame_error);
}
