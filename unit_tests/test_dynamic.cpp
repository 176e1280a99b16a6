// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The run-time layer (ndzip/dynamic.hpp): array_shape's checks and text, visit_shape's types,
// and dynamic_compressor on every backend against ndzip::compressor and the View API's frames:
// the same bytes from host buffers, backend buffers and misaligned ones; every refusal (sizes,
// overlap, a frame of another shape or mode, damage, an unknown backend) before anything is
// written; the input callback; one object shared by threads; a compressor on a native stream.

#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "codec_support.hpp"
#include "ndzip/dynamic.hpp"

using namespace ndzip_test;

namespace {

template <class Cfg>
ndzip::array_shape shape_of(const ndzip::extent<Cfg::dims>& grid) {
  return ndzip::array_shape(Cfg::is_double ? ndzip::element_type::float64
                                           : ndzip::element_type::float32,
                            grid);
}

// Bytes of a host vector, as the dynamic API takes them.
template <class Bits>
std::vector<unsigned char> bytes_of(const std::vector<Bits>& words) {
  std::vector<unsigned char> bytes(words.size() * sizeof(Bits));
  std::memcpy(bytes.data(), words.data(), bytes.size());
  return bytes;
}

}  // namespace

TEST_CASE("dynamic: array_shape checks its rank, type, axes and sizes") {
  using ndzip::array_shape;
  using ndzip::element_type;
  const array_shape shape(element_type::float64, {20, 30, 40});
  CHECK(shape.rank() == 3);
  CHECK(shape.type() == element_type::float64);
  CHECK(shape.extent(2) == 40);
  CHECK(shape.extents() == std::array<std::uint64_t, 3>{20, 30, 40});
  CHECK(shape.element_count() == 24000);
  CHECK(shape.byte_size() == 192000);
  CHECK(shape.to_string() == "double 20x30x40");
  CHECK(shape.extents_string() == "20x30x40");
  CHECK(shape.with_type(element_type::float32).byte_size() == 96000);
  CHECK(shape.with_extent(0, 2).to_string() == "double 2x30x40");
  CHECK(shape != shape.with_extent(1, 31));
  CHECK(array_shape(element_type::float32, {7}).extents() ==
        std::array<std::uint64_t, 3>{7, 0, 0});
  CHECK(array_shape().to_string() == "float 0");
  CHECK(array_shape(element_type::float32, {0, 5}).element_count() == 0);

  CHECK_THROWS_AS(array_shape(element_type::float32, {}), std::invalid_argument);
  CHECK_THROWS_AS(array_shape(element_type::float32, {1, 2, 3, 4}), std::invalid_argument);
  CHECK_THROWS_AS(array_shape(static_cast<element_type>(3), {1}), std::invalid_argument);
  CHECK_THROWS_AS(shape.extent(3), std::out_of_range);
  CHECK_THROWS_AS(shape.extent(-1), std::out_of_range);
  CHECK_THROWS_AS(shape.with_extent(3, 1), std::out_of_range);
  const std::uint64_t big = std::uint64_t{1} << 32;
  const array_shape huge(element_type::float32, {big, big, 2});
  CHECK_THROWS_WITH_AS(huge.element_count(), doctest::Contains("too large to address"),
                       std::overflow_error);
  CHECK_THROWS_AS(array_shape(element_type::float64, {big, big / 2}).byte_size(),
                  std::overflow_error);
  // Sizes that fit: the product's last step is checked, not only the extents.
  CHECK(array_shape(element_type::float32, {big, big / 2 - 1}).element_count() ==
        big * (big / 2 - 1));

  ndzip::frame_info frame;
  frame.type = element_type::float32;
  frame.dimensions = 2;
  frame.extents = {3, 4, 0};
  CHECK(array_shape::of(frame) == array_shape(element_type::float32, {3, 4}));

  CHECK(ndzip::parse_element_type("float") == element_type::float32);
  CHECK(ndzip::parse_element_type("double") == element_type::float64);
  CHECK_FALSE(ndzip::parse_element_type("float32").has_value());
  CHECK(std::string(ndzip::element_type_name(element_type::float64)) == "double");
  CHECK(ndzip::element_size(element_type::float64) == 8);
}

TEST_CASE("dynamic: visit_shape hands over the element type and the extents") {
  const auto seen = [](const ndzip::array_shape& shape) {
    return ndzip::visit_shape(shape, [](auto tag, const auto& grid) {
      using T = typename decltype(tag)::type;
      constexpr int dims = std::decay_t<decltype(grid)>::dimensions;
      std::string text = std::is_same_v<T, double> ? "double" : "float";
      text += " " + std::to_string(dims) + "-D " + ndzip::to_string(grid);
      return text;
    });
  };
  CHECK(seen(ndzip::array_shape(ndzip::element_type::float32, {9})) == "float 1-D 9");
  CHECK(seen(ndzip::array_shape(ndzip::element_type::float64, {5, 6})) == "double 2-D 5x6");
  CHECK(seen(ndzip::array_shape(ndzip::element_type::float32, {1, 2, 3})) == "float 3-D 1x2x3");
}

TEST_CASE("dynamic: size bounds and the shortest stream, without a compressor") {
  const ndzip::extent<2> grid(130, 67);
  const ndzip::array_shape shape(ndzip::element_type::float32, grid);
  CHECK(ndzip::compressed_size_bound(shape) == ndzip::compressed_size_bound<float>(grid));
  CHECK(ndzip::compressed_size_bound(shape, ndzip::codec_mode::high_ratio) ==
        ndzip::compressed_size_bound<float>(grid) + ndzip::high_ratio_header_bytes);
  const std::size_t smallest = ndzip::stream_layout<float, 2>(grid).smallest_stream_bytes();
  CHECK_NOTHROW(ndzip::check_stream_size(shape, smallest));
  CHECK_THROWS_WITH_AS(ndzip::check_stream_size(shape, smallest - 1),
                       doctest::Contains("shorter than the smallest stream of a 130x67 grid"),
                       ndzip::stream_error);
  CHECK_THROWS_AS(ndzip::check_stream_size(shape, 20, ndzip::codec_mode::high_ratio),
                  ndzip::stream_error);
  // A grid the format cannot hold: the codec's reason.
  const ndzip::array_shape too_big(ndzip::element_type::float64, {std::uint64_t{1} << 40, 1 << 20});
  CHECK_THROWS_AS(ndzip::check_grid_representable(too_big), std::invalid_argument);
  CHECK_THROWS_AS(ndzip::compressed_size_bound(too_big), std::invalid_argument);
}

TEST_CASE_TEMPLATE("dynamic: every backend writes compressor's stream and the View API's frame",
                   Cfg, NDZIP_ALL_CONFIGS) {
  using T = typename Cfg::value_type;
  constexpr int D = Cfg::dims;
  const auto grid = bordered_grid<D>();
  const auto input = generate_for<Cfg>("smooth", 8, grid);
  const auto input_bytes = bytes_of(input);
  const ndzip::array_shape shape = shape_of<Cfg>(grid);
  const auto want = compress_on<T, D>(Kokkos::DefaultHostExecutionSpace(), input, grid);

  for_each_backend([&](const std::string& name, auto exec) {
    using space = typename decltype(exec)::memory_space;
    ndzip::dynamic_compressor codec(name, shape);
    CHECK(codec.backend() == name);
    CHECK(codec.shape() == shape);
    CHECK(codec.size_bound() == ndzip::compressed_size_bound<T>(grid));

    // Host buffers, aligned and one byte off.
    for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      INFO("offset " << offset);
      std::vector<unsigned char> values(input_bytes.size() + offset);
      std::memcpy(values.data() + offset, input_bytes.data(), input_bytes.size());
      std::vector<unsigned char> stream(codec.size_bound() + offset, 0xa5);
      const std::size_t size = codec.compress(values.data() + offset, stream.data() + offset,
                                              codec.size_bound());
      const std::vector<unsigned char> got(stream.begin() + offset,
                                           stream.begin() + offset + size);
      CHECK(mismatch(got, want) == "");
      std::vector<unsigned char> decoded(input_bytes.size() + offset, 0x5a);
      CHECK(codec.decompress(stream.data() + offset, size, decoded.data() + offset) == size);
      CHECK(mismatch(std::vector<unsigned char>(decoded.begin() + offset, decoded.end()),
                     input_bytes) == "");
    }

    // Buffers in the backend's memory.
    const auto values = device_bytes<space>(input_bytes, 0);
    auto stream = device_bytes<space>({}, codec.size_bound(), 0xa5);
    const std::size_t size = codec.compress(values.data(), stream.data(), stream.size(),
                                            ndzip::buffer_location::backend);
    CHECK(mismatch(host_bytes(stream, size), want) == "");
    auto decoded = device_bytes<space>({}, input_bytes.size(), 0x5a);
    CHECK(codec.decompress(stream.data(), size, decoded.data(), ndzip::buffer_location::backend) ==
          size);
    CHECK(mismatch(host_bytes(decoded, input_bytes.size()), input_bytes) == "");

    // The frame is the View API's, byte for byte.
    const auto view = Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
    Kokkos::View<std::byte*, Kokkos::HostSpace> frame_want("frame", ndzip::frame_size_bound(view));
    const std::size_t frame_size = ndzip::compress_frame(exec, view, frame_want);
    std::vector<std::byte> frame(codec.frame_size_bound());
    frame.resize(codec.compress_frame(input_bytes.data(), frame.data(), frame.size()));
    REQUIRE(frame.size() == frame_size);
    CHECK(std::equal(frame.begin(), frame.end(), frame_want.data()));
    std::vector<unsigned char> from_frame(input_bytes.size(), 0x5a);
    codec.decompress_frame(frame.data(), frame.size(), from_frame.data());
    CHECK(mismatch(from_frame, input_bytes) == "");
  });
}

TEST_CASE("dynamic: a compressor on the caller's native stream (GPU backends only)") {
  const ndzip::extent<3> grid(40, 33, 70);
  const auto input = generate_for<f32_3d>("smooth", 8, grid);
  const auto input_bytes = bytes_of(input);
  const ndzip::array_shape shape = shape_of<f32_3d>(grid);
  const auto want = compress_on<float, 3>(Kokkos::DefaultHostExecutionSpace(), input, grid);
  for_each_backend([&](const std::string& name, auto exec) {
    using space = typename decltype(exec)::memory_space;
    INFO(name);
    std::optional<ndzip::native_stream> stream;
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same_v<decltype(exec), Kokkos::Cuda>)
      stream = ndzip::native_stream{reinterpret_cast<std::uintptr_t>(exec.cuda_stream())};
#endif
#ifdef KOKKOS_ENABLE_HIP
    if constexpr (std::is_same_v<decltype(exec), ndzip::detail::hip_space>)
      stream = ndzip::native_stream{reinterpret_cast<std::uintptr_t>(exec.hip_stream())};
#endif
    if (!stream) {
      CHECK_THROWS_WITH_AS(ndzip::dynamic_compressor(name, shape, ndzip::codec_mode::ndzip,
                                                     ndzip::native_stream{}),
                           doctest::Contains("runs on no native stream"), std::invalid_argument);
      return;
    }
    ndzip::dynamic_compressor codec(name, shape, ndzip::codec_mode::ndzip, *stream);
    const auto values = device_bytes<space>(input_bytes, 0);
    auto bytes = device_bytes<space>({}, codec.size_bound(), 0xa5);
    const std::size_t size =
        codec.compress(values.data(), bytes.data(), bytes.size(), ndzip::buffer_location::backend);
    CHECK(mismatch(host_bytes(bytes, size), want) == "");
    auto decoded = device_bytes<space>({}, input_bytes.size(), 0x5a);
    CHECK(codec.decompress(bytes.data(), size, decoded.data(), ndzip::buffer_location::backend) ==
          size);
    CHECK(mismatch(host_bytes(decoded, input_bytes.size()), input_bytes) == "");
  });
}

TEST_CASE("dynamic: high-ratio streams and frames round trip on every backend") {
  const ndzip::extent<3> grid(33, 18, 20);
  const auto input = generate_for<f32_3d>("smooth", 8, grid);
  const auto input_bytes = bytes_of(input);
  const auto shape = shape_of<f32_3d>(grid);
  for_each_backend([&](const std::string& name, auto) {
    ndzip::dynamic_compressor codec(name, shape, ndzip::codec_mode::high_ratio);
    std::vector<std::byte> frame(codec.frame_size_bound());
    frame.resize(codec.compress_frame(input_bytes.data(), frame.data(), frame.size()));
    CHECK(ndzip::inspect_frame(frame.data(), frame.size()).mode == ndzip::codec_mode::high_ratio);
    std::vector<unsigned char> decoded(input_bytes.size());
    codec.decompress_frame(frame.data(), frame.size(), decoded.data());
    CHECK(mismatch(decoded, input_bytes) == "");
    // A compressor of the other mode refuses the frame.
    ndzip::dynamic_compressor plain(name, shape);
    CHECK_THROWS_WITH_AS(plain.decompress_frame(frame.data(), frame.size(), decoded.data()),
                         doctest::Contains("the frame holds a stream of the high_ratio mode, but "
                                           "the compressor is for the ndzip mode"),
                         ndzip::frame_error);
  });
}

TEST_CASE("dynamic: refusals come before anything is written") {
  const ndzip::extent<2> grid(130, 67);
  const auto input = generate_for<f32_2d>("random", 0, grid);  // incompressible
  auto input_bytes = bytes_of(input);
  const auto shape = shape_of<f32_2d>(grid);

  const std::string known = "this build has: " + ndzip::enabled_backends()[0];
  CHECK_THROWS_WITH_AS(ndzip::dynamic_compressor("no-such-backend", shape),
                       doctest::Contains(known.c_str()), std::invalid_argument);
  for_each_backend([&](const std::string& name, auto) {
    ndzip::dynamic_compressor codec(name, shape);
    // Too small for this stream: capacity_error, and not a byte of the output touched.
    // (One byte off, the stream goes through staging on every backend.)
    for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      std::vector<unsigned char> small(input_bytes.size() / 2, 0xa5);
      CHECK_THROWS_AS(
          codec.compress(input_bytes.data(), small.data() + offset, small.size() - offset),
          ndzip::capacity_error);
      CHECK(std::all_of(small.begin(), small.end(), [](unsigned char b) { return b == 0xa5; }));
    }
    std::vector<std::byte> frame(40);
    CHECK_THROWS_AS(codec.compress_frame(input_bytes.data(), frame.data(), frame.size()),
                    ndzip::capacity_error);

    // Overlapping values and stream or frame.
    std::vector<unsigned char> shared(input_bytes.size() + codec.frame_size_bound());
    CHECK_THROWS_WITH_AS(codec.compress(shared.data(), shared.data() + 8, codec.size_bound()),
                         doctest::Contains("overlap"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(codec.compress_frame(shared.data(), shared.data() + 8,
                                              codec.frame_size_bound()),
                         doctest::Contains("overlap"), std::invalid_argument);

    // Frames that do not hold this compressor's array, or are damaged.
    std::vector<std::byte> good(codec.frame_size_bound());
    good.resize(codec.compress_frame(input_bytes.data(), good.data(), good.size()));
    ndzip::dynamic_compressor other(name, shape.with_extent(0, 131));
    std::vector<unsigned char> out(shape.with_extent(0, 131).byte_size());
    CHECK_THROWS_WITH_AS(other.decompress_frame(good.data(), good.size(), out.data()),
                         doctest::Contains("holds a float 130x67 array"), ndzip::frame_error);
    auto damaged = good;
    damaged[damaged.size() / 2] ^= std::byte{1};
    CHECK_THROWS_WITH_AS(codec.decompress_frame(damaged.data(), damaged.size(), out.data()),
                         doctest::Contains("checksum mismatch"), ndzip::frame_error);
    CHECK_THROWS_AS(codec.decompress_frame(good.data(), good.size() - 1, out.data()),
                    ndzip::frame_error);
    // A bare stream cut short.
    std::vector<unsigned char> stream(codec.size_bound());
    const std::size_t size = codec.compress(input_bytes.data(), stream.data(), stream.size());
    CHECK_THROWS_AS(codec.decompress(stream.data(), size / 2, out.data()), ndzip::stream_error);
  });
}

TEST_CASE("dynamic: the input callback comes once the input is no longer read") {
  const ndzip::extent<1> grid(10000);
  const auto input = generate_for<f64_1d>("smooth", 8, grid);
  const auto input_bytes = bytes_of(input);
  for_each_backend([&](const std::string& name, auto) {
    ndzip::dynamic_compressor codec(name, shape_of<f64_1d>(grid));
    // The callback clears the input: the stream must not depend on it having been read after.
    auto values = input_bytes;
    int calls = 0;
    std::vector<unsigned char> stream(codec.size_bound());
    const std::size_t size =
        codec.compress(values.data(), stream.data(), stream.size(), ndzip::buffer_location::host,
                       [&] {
                         ++calls;
                         std::fill(values.begin(), values.end(), 0);
                       });
    CHECK(calls == 1);
    std::vector<unsigned char> decoded(input_bytes.size());
    calls = 0;
    CHECK(codec.decompress(stream.data(), size, decoded.data(), ndzip::buffer_location::host,
                           [&] {
                             ++calls;
                             std::fill(stream.begin(), stream.end(), 0);
                           }) == size);
    CHECK(calls == 1);
    CHECK(mismatch(decoded, input_bytes) == "");
  });
}

TEST_CASE("dynamic: one compressor shared by threads") {
  // Serial: usable from any thread with every Kokkos version (Kokkos 3's OpenMP is not).
  const auto names = ndzip::enabled_backends();
  if (std::find(names.begin(), names.end(), "serial") == names.end()) return;
  const ndzip::extent<2> grid(256, 200);
  const auto input = generate_for<f32_2d>("smooth", 8, grid);
  const auto input_bytes = bytes_of(input);
  ndzip::dynamic_compressor codec("serial", shape_of<f32_2d>(grid));
  std::vector<unsigned char> want(codec.size_bound());
  want.resize(codec.compress(input_bytes.data(), want.data(), want.size()));
  std::vector<int> good(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        std::vector<unsigned char> stream(codec.size_bound());
        stream.resize(codec.compress(input_bytes.data(), stream.data(), stream.size()));
        std::vector<unsigned char> decoded(input_bytes.size());
        codec.decompress(stream.data(), stream.size(), decoded.data());
        good[t] += stream == want && decoded == input_bytes;
      }
    });
  for (auto& thread : threads) thread.join();
  CHECK(good == std::vector<int>(4, 5));
}
