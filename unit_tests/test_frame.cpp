// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The frame (ndzip/frame_format.hpp, ndzip/frame.hpp): Views to frames and back on every
// backend, what inspect_frame reports, every check of a damaged frame, Views that do not match
// the frame, writers' misuse, values that overlap the frame, and that the library writes the very
// frames the command-line tool wrote before the frame moved into the library (format version 1
// unchanged).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "codec_support.hpp"
#include "frame_support.hpp"

using namespace ndzip_test;

namespace {

using frame_view_at =
    Kokkos::View<std::byte*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// A View of the C-order grid `grid` in the backend's memory holding `input`.
template <class T, int D, class Exec, class Bits>
auto values_on(const Exec&, const std::vector<Bits>& input, const ndzip::extent<D>& grid) {
  return Kokkos::create_mirror_view_and_copy(typename Exec::memory_space{},
                                             host_view_of<T, D>(input, grid));
}

std::vector<unsigned char> stream_of(const frame_bytes& frame) {
  std::vector<unsigned char> stream;
  for (std::size_t i = ndzip::frame_header_bytes; i < frame.size(); ++i)
    stream.push_back(std::to_integer<unsigned char>(frame[i]));
  return stream;
}

void put_u64(frame_bytes& frame, std::size_t offset, std::uint64_t v) {
  for (std::size_t i = 0; i < 8; ++i) frame.at(offset + i) = static_cast<std::byte>(v >> (8 * i));
}

// Rewrites the checksum of an edited frame, as a writer with a bug would.
void reseal(frame_bytes& frame) {
  put_u64(frame, 40, ndzip::frame_checksum(frame.data(), frame.size()));
}

// A smooth 2-D float array of 70x90 (one hypercube and a border) and its frame.
struct sample {
  ndzip::extent<2> grid{70, 90};
  std::vector<std::uint32_t> input = generate_for<f32_2d>("smooth", 8, grid);
  grid_view<float, 2> values = host_view_of<float, 2>(input, grid);
  frame_bytes frame = frame_of(Kokkos::DefaultHostExecutionSpace{}, values);
};

}  // namespace

TEST_CASE_TEMPLATE("frame: View -> frame -> View round trip on every backend", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = bordered_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto expected_stream = model_stream<C>(input, grid);

  for_each_backend([&](const std::string&, auto exec) {
    using space = typename decltype(exec)::memory_space;
    const auto values = values_on<T>(exec, input, grid);
    const frame_bytes frame = frame_of(exec, values);
    CHECK(frame.size() == ndzip::frame_header_bytes + expected_stream.size());
    CHECK(mismatch(stream_of(frame), expected_stream) == "");  // the raw stream, unchanged
    CHECK_NOTHROW(ndzip::verify_frame_checksum(frame.data(), frame.size()));

    auto out = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("out", grid);
    ndzip::decompress_frame(exec, view_of(frame), out);
    CHECK(mismatch(bits_of<Bits>(out), input) == "");

    // A frame at an address that leaves its stream unaligned for T goes through a copy, in
    // both directions, with the same bytes.
    host_frame_view shifted("shifted", ndzip::frame_size_bound(values) + 1);
    const auto unaligned = Kokkos::subview(shifted, std::make_pair(std::size_t{1}, shifted.size()));
    const std::size_t size = ndzip::compress_frame(exec, values, unaligned);
    REQUIRE(size == frame.size());
    CHECK(frame_bytes(unaligned.data(), unaligned.data() + size) == frame);
    auto out2 = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("out2", grid);
    ndzip::decompress_frame(exec, const_frame_view(unaligned.data(), size), out2);
    CHECK(mismatch(bits_of<Bits>(out2), input) == "");

    // A LayoutLeft View of reversed extents is the same C-order grid.
    if constexpr (D > 1) {
      ndzip::extent<D> reversed;
      for (int a = 0; a < D; ++a) reversed[a] = grid[D - 1 - a];
      auto left = make_view<grid_view<T, D, Kokkos::LayoutLeft, space>>("left", reversed);
      ndzip::decompress_frame(exec, view_of(frame), left);
      CHECK(mismatch(bits_of<Bits>(left), input) == "");
    }
  });
}

TEST_CASE_TEMPLATE("frame: high-ratio frames record their mode (version 2) on every backend", C,
                   ndzip_test::f32_3d, ndzip_test::f64_2d) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = bordered_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  frame_bytes first;
  for_each_backend([&](const std::string&, auto exec) {
    using space = typename decltype(exec)::memory_space;
    const auto values = values_on<T>(exec, input, grid);
    host_frame_view frame("frame", ndzip::frame_size_bound(values, ndzip::codec_mode::high_ratio));
    const std::size_t size =
        ndzip::compress_frame(exec, values, frame, ndzip::codec_mode::high_ratio);
    const frame_bytes bytes(frame.data(), frame.data() + size);
    if (first.empty()) first = bytes;
    CHECK(bytes == first);  // one stream on every backend
    CHECK(bytes[4] == std::byte{2});
    CHECK(bytes[7] == std::byte{1});
    const auto info = ndzip::inspect_frame(bytes.data(), bytes.size());
    CHECK(info.mode == ndzip::codec_mode::high_ratio);
    CHECK(size < ndzip::frame_header_bytes + model_stream<C>(input, grid).size());
    auto out = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("out", grid);
    ndzip::decompress_frame(exec, view_of(bytes), out);
    CHECK(mismatch(bits_of<Bits>(out), input) == "");
    // The checksum covers the version and mode bytes: a frame relabelled as version 1 (the
    // ndzip mode) is refused before its stream is decoded as the wrong format.
    frame_bytes as_v1 = bytes;
    as_v1[4] = std::byte{1};
    as_v1[7] = std::byte{0};
    CHECK_THROWS_AS(ndzip::verify_frame_checksum(as_v1.data(), as_v1.size()), ndzip::frame_error);
  });
  // A stream length no high-ratio stream of the array can have is refused from the header alone
  // (a reader allocates nothing of the array's size for it): 4096x4096 floats hold 4096
  // hypercubes, whose block table alone is 32 KiB.
  const std::vector<std::byte> tiny(100);
  const ndzip::extent<2> large(4096, 4096);
  REQUIRE(ndzip::high_ratio_smallest_stream_bytes<float>(large) > 32768);
  CHECK_THROWS_AS(ndzip::encode_frame_header(ndzip::element_type::float32, 2, {4096, 4096, 0},
                                             tiny.data(), tiny.size(),
                                             ndzip::codec_mode::high_ratio),
                  std::invalid_argument);
}

TEST_CASE("frame: inspect_frame reports type, extents and sizes without decoding") {
  const ndzip::extent<3> grid(33, 18, 20);
  const auto input = generate_for<f64_3d>("smooth", 24, grid);
  const frame_bytes frame =
      frame_of(Kokkos::DefaultHostExecutionSpace{}, host_view_of<double, 3>(input, grid));

  const ndzip::frame_info info = ndzip::inspect_frame(frame.data(), frame.size());
  CHECK(info.type == ndzip::element_type::float64);
  CHECK(info.type == ndzip::element_type_of<double>());
  CHECK(info.dimensions == 3);
  CHECK(info.extents == std::array<std::uint64_t, 3>{33, 18, 20});
  CHECK(info.stream_bytes == frame.size() - ndzip::frame_header_bytes);
  CHECK(info.stream_bytes == model_stream<f64_3d>(input, grid).size());
  CHECK(info.frame_bytes() == frame.size());
  CHECK(info.checksum == ndzip::frame_checksum(frame.data(), frame.size()));

  // The header alone says the same, and how much follows it.
  const ndzip::frame_info head = ndzip::read_frame_header(frame.data(), ndzip::frame_header_bytes);
  CHECK(head.extents == info.extents);
  CHECK(head.frame_bytes() == frame.size());
  CHECK_NOTHROW(ndzip::check_frame_size(head, frame.size()));

  const ndzip::extent<1> line(5);
  const std::vector<std::uint32_t> five = {1, 2, 3, 4, 5};
  const frame_bytes small =
      frame_of(Kokkos::DefaultHostExecutionSpace{}, host_view_of<float, 1>(five, line));
  const ndzip::frame_info s = ndzip::inspect_frame(small.data(), small.size());
  CHECK(s.type == ndzip::element_type::float32);
  CHECK(s.dimensions == 1);
  CHECK(s.extents == std::array<std::uint64_t, 3>{5, 0, 0});
  CHECK(s.stream_bytes == 20);  // no hypercube: the values themselves
}

TEST_CASE("frame: damaged frames are refused, before decoding, saying what is wrong") {
  const sample base{};
  const std::size_t n = base.frame.size();
  auto edited = [&](std::size_t offset, std::initializer_list<unsigned> bytes) {
    frame_bytes f = base.frame;
    std::size_t at = offset;
    for (const unsigned b : bytes) f.at(at++) = static_cast<std::byte>(b);
    return f;
  };
  frame_bytes longer = base.frame;
  longer.push_back(std::byte{0});
  frame_bytes shorter(base.frame.begin(), base.frame.end() - 1);
  frame_bytes impossible_length = base.frame;
  put_u64(impossible_length, 32, 100);  // a float 70x90 stream has 9332 bytes at least

  struct damage {
    const char* what;
    frame_bytes frame;
    const char* message;
  };
  const std::vector<damage> cases = {
      {"bad magic", edited(0, {'X'}), "not a valid ndzip frame: it does not start with \"NDZK\""},
      {"unknown version", edited(4, {4}),
       "unsupported frame version 4 (this library reads versions 1 to 3)"},
      {"unknown codec mode", edited(4, {2, 1, 2, 2}),
       "unknown codec mode 2 (0 = ndzip, 1 = high_ratio)"},
      {"version 0", edited(4, {0}), "unsupported frame version 0"},
      {"type code 0", edited(5, {0}), "unknown element type code 0 (1 = float, 2 = double)"},
      {"type code 3", edited(5, {3}), "unknown element type code 3"},
      {"0 dimensions", edited(6, {0}), "bad dimension count 0 (must be 1, 2 or 3)"},
      {"4 dimensions", edited(6, {4}), "bad dimension count 4"},
      {"reserved byte", edited(7, {1}), "reserved byte 7 is 1, not 0"},
      {"zero extent", edited(16, {0}), "extent N1 is 0"},
      {"stray extent", edited(24, {5}), "extent N2 is 5 in a 2-D frame (must be 0)"},
      {"huge extents", edited(8, {255, 255, 255, 255, 255, 255, 255, 127}), "too large"},
      {"impossible stream length", impossible_length,
       "inconsistent frame: a float 70x90 array compresses to 9332 to"},
      {"trailing byte", longer, "1 bytes of trailing data after the stream of"},
      {"truncated stream", shorter, "truncated: the header announces a stream of"},
      {"flipped stream byte", edited(n / 2, {~std::to_integer<unsigned>(base.frame[n / 2]) & 0xff}),
       "checksum mismatch: the header records XXH3-64 0x"},
      {"flipped checksum byte", edited(47, {~std::to_integer<unsigned>(base.frame[47]) & 0xff}),
       "checksum mismatch"},
      {"extents swapped (90x70, the same stream length)", edited(8, {90, 0, 0, 0, 0, 0, 0, 0, 70}),
       "checksum mismatch"},
  };
  for (const damage& d : cases) {
    INFO(d.what);
    const std::string message =
        frame_error_of([&] { ndzip::verify_frame_checksum(d.frame.data(), d.frame.size()); });
    CHECK(message.find(d.message) != std::string::npos);
    CHECK(message.rfind("ndzip: ", 0) == 0);
    // decompress_frame checks the same, before it looks at the View; a frame claiming version 4
    // is read as the chunked frame it claims to be, whose reader refuses it.
    auto out = make_view<grid_view<float, 2>>("out", base.grid);
    const std::string read = frame_error_of([&] {
      ndzip::decompress_frame(Kokkos::DefaultHostExecutionSpace{}, view_of(d.frame), out);
    });
    if (d.frame.at(4) == std::byte{ndzip::frame_version_chunked})
      CHECK(read.rfind("ndzip: not a valid chunked ndzip frame: ", 0) == 0);
    else
      CHECK(read == message);
  }

  SUBCASE("a header cut short") {
    for (std::size_t size : {std::size_t{0}, std::size_t{3}, std::size_t{20}, std::size_t{47}}) {
      INFO("size " << size);
      const std::string message =
          frame_error_of([&] { ndzip::inspect_frame(base.frame.data(), size); });
      CHECK(message == "ndzip: not a valid ndzip frame: truncated header (" + std::to_string(size) +
                           " of 48 bytes)");
    }
    CHECK(frame_error_of([&] { ndzip::read_frame_header(nullptr, 0); }).find("(0 of 48") !=
          std::string::npos);
    CHECK(frame_error_of([&] { ndzip::frame_checksum(base.frame.data(), 47); }) != "");
    // What there is of the magic decides: two wrong bytes are no frame, not a short one.
    const frame_bytes no_frame = {std::byte{'N'}, std::byte{'X'}};
    CHECK(frame_error_of([&] {
            ndzip::read_frame_header(no_frame.data(), no_frame.size());
          }).find("does not start with") != std::string::npos);
  }

  SUBCASE("the header alone bounds what a reader reads") {
    const ndzip::frame_info head = ndzip::read_frame_header(base.frame.data(), 48);
    CHECK(frame_error_of([&] {
            ndzip::check_frame_size(head, n + 5);
          }).find("5 bytes of trailing data") != std::string::npos);
    CHECK(frame_error_of([&] { ndzip::check_frame_size(head, 48); }).find("but only 0 follow it") !=
          std::string::npos);
  }

  SUBCASE("a resealed frame whose stream contradicts its header") {
    // A stream four bytes longer than its offset table says: the decoder consumes less than
    // the header announces.
    frame_bytes padded = base.frame;
    padded.insert(padded.end(), 4, std::byte{0});
    put_u64(padded, 32, n - ndzip::frame_header_bytes + 4);
    reseal(padded);
    CHECK_NOTHROW(ndzip::verify_frame_checksum(padded.data(), padded.size()));
    auto out = make_view<grid_view<float, 2>>("out", base.grid);
    CHECK(frame_error_of([&] {
            ndzip::decompress_frame(Kokkos::DefaultHostExecutionSpace{}, view_of(padded), out);
          }).find("inconsistent frame: the stream of a float 70x90 array ends after") !=
          std::string::npos);

    // A damaged offset table: the decoder's own error.
    frame_bytes damaged = base.frame;
    put_u64(damaged, ndzip::frame_header_bytes, 0xffffffffffffffff);
    reseal(damaged);
    CHECK_THROWS_AS(
        ndzip::decompress_frame(Kokkos::DefaultHostExecutionSpace{}, view_of(damaged), out),
        ndzip::stream_error);
  }
}

// docs/FORMAT.md, "The frame, versions 1 to 3": which versions exist, what byte 7 holds in
// each, what a reader accepts and refuses, with which message.
TEST_CASE("frame: versions 1 to 3 and byte 7, as docs/FORMAT.md describes them") {
  using host = Kokkos::DefaultHostExecutionSpace;
  const sample base{};
  host_frame_view hr("hr", ndzip::frame_size_bound(base.values, ndzip::codec_mode::high_ratio));
  const std::size_t hr_size =
      ndzip::compress_frame(host{}, base.values, hr, ndzip::codec_mode::high_ratio);
  const frame_bytes high_ratio(hr.data(), hr.data() + hr_size);
  REQUIRE(base.frame[4] == std::byte{1});
  REQUIRE(base.frame[7] == std::byte{0});
  REQUIRE(high_ratio[4] == std::byte{2});
  REQUIRE(high_ratio[7] == std::byte{1});

  // The header of `frame` with bytes 4 and 7 replaced: read_frame_header's message, "" if none.
  const auto header_error = [](const frame_bytes& frame, unsigned version, unsigned byte7) {
    frame_bytes header(frame.begin(), frame.begin() + ndzip::frame_header_bytes);
    header[4] = static_cast<std::byte>(version);
    header[7] = static_cast<std::byte>(byte7);
    return frame_error_of([&] { ndzip::read_frame_header(header.data(), header.size()); });
  };
  for (unsigned version = 0; version < 256; ++version) {
    for (const unsigned byte7 : {0u, 1u, 2u, 255u}) {
      INFO("version " << version << ", byte 7 = " << byte7);
      // A high-ratio stream's length for mode 1, an ndzip stream's for the others.
      const frame_bytes& frame = version == 2 && byte7 == 1 ? high_ratio : base.frame;
      const std::string message = header_error(frame, version, byte7);
      if (version < 1 || version > 3)
        CHECK(message == "ndzip: not a valid ndzip frame: unsupported frame version " +
                             std::to_string(version) + " (this library reads versions 1 to 3)");
      else if (version == 1 && byte7 != 0)
        CHECK(message == "ndzip: not a valid ndzip frame: reserved byte 7 is " +
                             std::to_string(byte7) + ", not 0");
      else if (version == 2 && byte7 > 1)
        CHECK(message == "ndzip: not a valid ndzip frame: unknown codec mode " +
                             std::to_string(byte7) + " (0 = ndzip, 1 = high_ratio)");
      else if (version == 3 && (byte7 & 15) > 1)  // the mode in the low nibble
        CHECK(message == "ndzip: not a valid ndzip frame: unknown codec mode " +
                             std::to_string(byte7 & 15) + " (0 = ndzip, 1 = high_ratio)");
      else if (version == 3)  // a coded rank of 0 (folded frames: "frame: folded arrays")
        CHECK(message ==
              "ndzip: not a valid ndzip frame: a 2-D array coded as 0-D (version 3 records an "
              "array folded to fewer dimensions, at least 1)");
      else
        CHECK(message == "");
    }
  }
  // The order of the checks: the version before the type, the dimensions before byte 7.
  frame_bytes both = base.frame;
  both[4] = std::byte{4};
  both[5] = std::byte{9};
  CHECK(frame_error_of([&] { ndzip::read_frame_header(both.data(), both.size()); })
            .find("unsupported frame version 4") != std::string::npos);
  both = base.frame;
  both[6] = std::byte{0};
  both[7] = std::byte{1};
  CHECK(frame_error_of([&] { ndzip::read_frame_header(both.data(), both.size()); })
            .find("bad dimension count 0") != std::string::npos);

  SUBCASE("version 2 with mode 0 holds a raw ndzip stream, read as version 1") {
    frame_bytes v2 = base.frame;  // what no writer of this library writes, but a reader reads
    v2[4] = std::byte{2};
    // The checksum covers the version byte: relabelled without resealing, refused.
    CHECK(frame_error_of([&] { ndzip::verify_frame_checksum(v2.data(), v2.size()); })
              .find("checksum mismatch") != std::string::npos);
    reseal(v2);
    const ndzip::frame_info info = ndzip::inspect_frame(v2.data(), v2.size());
    CHECK(info.mode == ndzip::codec_mode::ndzip);
    CHECK_NOTHROW(ndzip::verify_frame_checksum(v2.data(), v2.size()));
    auto out = make_view<grid_view<float, 2>>("out", base.grid);
    ndzip::decompress_frame(host{}, view_of(v2), out);
    CHECK(mismatch(bits_of<std::uint32_t>(out), base.input) == "");
  }

  SUBCASE("a high-ratio frame relabelled as version 1 is refused, resealed or not") {
    frame_bytes v1 = high_ratio;
    v1[4] = std::byte{1};  // byte 7 still 1: not a reserved 0
    CHECK(frame_error_of([&] { ndzip::inspect_frame(v1.data(), v1.size()); })
              .find("reserved byte 7 is 1, not 0") != std::string::npos);
  }

  SUBCASE("the stream lengths of the high-ratio mode: its smallest stream to the bound + 16") {
    const std::uint64_t smallest = ndzip::high_ratio_smallest_stream_bytes<float>(base.grid);
    const std::uint64_t largest = ndzip::high_ratio_size_bound<float>(base.grid);
    REQUIRE(largest == ndzip::compressed_size_bound<float>(base.grid) + 16);
    const auto with_length = [&](std::uint64_t length) {
      frame_bytes header(high_ratio.begin(), high_ratio.begin() + ndzip::frame_header_bytes);
      put_u64(header, 32, length);
      return frame_error_of([&] { ndzip::read_frame_header(header.data(), header.size()); });
    };
    const std::string range = "inconsistent frame: a float 70x90 array compresses to " +
                              std::to_string(smallest) + " to " + std::to_string(largest) +
                              " bytes, but the stream has ";
    CHECK(with_length(smallest) == "");
    CHECK(with_length(largest) == "");
    CHECK(with_length(smallest - 1) == "ndzip: " + range + std::to_string(smallest - 1));
    CHECK(with_length(largest + 1) == "ndzip: " + range + std::to_string(largest + 1));
  }
}

TEST_CASE("frame: decoding into a View of other extents or another type is refused") {
  const sample base{};
  using host = Kokkos::DefaultHostExecutionSpace;

  // The raw stream alone cannot tell: decoded as 90x70 it "succeeds" with shuffled values.
  const auto stream = device_bytes<Kokkos::HostSpace>(stream_of(base.frame));
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> swapped("swapped", 90, 70);
  CHECK_NOTHROW(ndzip::decompress(host{}, stream, swapped));

  // The frame can.
  const std::string message =
      frame_error_of([&] { ndzip::decompress_frame(host{}, view_of(base.frame), swapped); });
  CHECK(message ==
        "ndzip: the frame holds a float 70x90 array (extents slowest first), but View "
        "\"swapped\" is a float 90x70 array");
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> wide("wide", 70, 90);
  CHECK(frame_error_of([&] {
          ndzip::decompress_frame(host{}, view_of(base.frame), wide);
        }).find("is a double 70x90 array") != std::string::npos);
  Kokkos::View<float*, Kokkos::HostSpace> flat("flat", 70 * 90);
  CHECK(frame_error_of([&] {
          ndzip::decompress_frame(host{}, view_of(base.frame), flat);
        }).find("is a float 6300 array") != std::string::npos);
  Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace> deep("deep", 1, 70, 90);
  CHECK(frame_error_of([&] {
          ndzip::decompress_frame(host{}, view_of(base.frame), deep);
        }).find("is a float 1x70x90 array") != std::string::npos);
}

TEST_CASE("frame: writers cannot write what readers refuse") {
  const sample base{};
  const std::byte* stream = base.frame.data() + ndzip::frame_header_bytes;
  const std::size_t stream_bytes = base.frame.size() - ndzip::frame_header_bytes;
  using extents = std::array<std::uint64_t, 3>;
  const auto f32 = ndzip::element_type::float32;

  const auto header = ndzip::encode_frame_header(f32, 2, {70, 90, 0}, stream, stream_bytes);
  CHECK(frame_bytes(header.begin(), header.end()) ==
        frame_bytes(base.frame.begin(), base.frame.begin() + ndzip::frame_header_bytes));

  CHECK_THROWS_AS(ndzip::encode_frame_header(f32, 0, extents{}, stream, stream_bytes),
                  std::invalid_argument);
  CHECK_THROWS_AS(ndzip::encode_frame_header(f32, 4, extents{70, 90, 1}, stream, stream_bytes),
                  std::invalid_argument);
  CHECK_THROWS_AS(ndzip::encode_frame_header(f32, 2, extents{70, 0, 0}, stream, stream_bytes),
                  std::invalid_argument);
  CHECK_THROWS_AS(ndzip::encode_frame_header(f32, 2, extents{70, 90, 3}, stream, stream_bytes),
                  std::invalid_argument);
  CHECK_THROWS_AS(ndzip::encode_frame_header(static_cast<ndzip::element_type>(3), 2,
                                             extents{70, 90, 0}, stream, stream_bytes),
                  std::invalid_argument);
  CHECK_THROWS_AS(ndzip::encode_frame_header(f32, 2, extents{70, 90, 0}, stream, 8),
                  std::invalid_argument);

  using host = Kokkos::DefaultHostExecutionSpace;
  host_frame_view tiny("tiny", 47);
  CHECK_THROWS_AS(ndzip::compress_frame(host{}, base.values, tiny), ndzip::capacity_error);
  host_frame_view small("small", base.frame.size() - 1);
  CHECK_THROWS_AS(ndzip::compress_frame(host{}, base.values, small), ndzip::capacity_error);
  const auto unaligned_small = Kokkos::subview(small, std::make_pair(std::size_t{1}, small.size()));
  CHECK_THROWS_AS(ndzip::compress_frame(host{}, base.values, unaligned_small),
                  ndzip::capacity_error);
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> empty("empty", 0, 90);
  host_frame_view room("room", 1024);
  CHECK_THROWS_AS(ndzip::compress_frame(host{}, empty, room), std::invalid_argument);
}

TEST_CASE_TEMPLATE(
    "frame: values overlapping the frame, header included, are refused before "
    "anything is written",
    C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = bordered_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const std::size_t values_bytes = grid.size() * sizeof(T);
  const std::size_t header = ndzip::frame_header_bytes;

  for_each_backend([&](const std::string&, auto exec) {
    using space = typename decltype(exec)::memory_space;
    // The frame lies in host memory; values there too only where the backend can use them.
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, space>::accessible) {
      const frame_bytes frame = frame_of(exec, values_on<T>(exec, input, grid));
      const std::size_t bound = header + ndzip::compressed_size_bound<T>(grid);
      // One buffer for the frame and the values, at byte offsets that overlap in the header
      // (which the codec's own check of the stream cannot see) or, with the frame unaligned
      // (its stream then goes through a copy), in the stream.
      Kokkos::View<Bits*, space> buffer("buffer", (bound + values_bytes) / sizeof(T) + 64);
      std::byte* const base = reinterpret_cast<std::byte*>(buffer.data());
      struct placement {
        const char* what;
        std::size_t frame_at, values_at;
      };
      const placement overlapping[] = {
          {"values ending in the frame's magic", values_bytes - 8, 0},
          {"values ending one word before the frame's stream", values_bytes - header + sizeof(T),
           0},
          {"values starting in the frame's header", 0, 8},
          {"values under the stream of an unaligned frame", 1, 64},
          {"values ending in the header of an unaligned frame", values_bytes - 7, 0},
      };
      for (const placement& p : overlapping) {
        INFO(std::string(p.what));
        const auto values = grid_at<T, D, space>(base + p.values_at, grid);
        const frame_view_at out(base + p.frame_at, bound);
        Kokkos::deep_copy(buffer, Bits{0x5a});
        Kokkos::deep_copy(values, values_on<T>(exec, input, grid));
        const auto before = bits_of<Bits>(buffer);
        CHECK_THROWS_WITH_AS(ndzip::compress_frame(exec, values, out),
                             doctest::Contains("the frame buffer"), std::invalid_argument);
        exec.fence();
        CHECK(mismatch(bits_of<Bits>(buffer), before) == "");

        // The frame in place, then decoded into values that overlap it.
        std::copy(frame.begin(), frame.end(), base + p.frame_at);
        const auto placed = bits_of<Bits>(buffer);
        CHECK_THROWS_WITH_AS(ndzip::decompress_frame(
                                 exec, const_frame_view(base + p.frame_at, frame.size()), values),
                             doctest::Contains("the frame buffer"), std::invalid_argument);
        exec.fence();
        CHECK(mismatch(bits_of<Bits>(buffer), placed) == "");
      }

      // Side by side is fine: the frame's whole View ends where the values begin.
      const auto values = grid_at<T, D, space>(base + bound, grid);
      Kokkos::deep_copy(values, values_on<T>(exec, input, grid));
      const frame_view_at out(base, bound);
      const std::size_t size = ndzip::compress_frame(exec, values, out);
      CHECK(frame_bytes(base, base + size) == frame);
      Kokkos::deep_copy(values, T{0});
      ndzip::decompress_frame(exec, const_frame_view(base, size), values);
      CHECK(mismatch(bits_of<Bits>(values), input) == "");
    }
  });
}

TEST_CASE("frame: the library writes the frames the tool wrote (format version 1)") {
  // Headers written by `ndzip compress` (tools/frame.cpp before the frame moved into the
  // library) for these reference vectors; the streams behind them are the vectors' own.
  struct old_frame {
    const char* vector;
    std::array<unsigned char, 48> header;
  };
  const old_frame frames[] = {
      {"const_f32_1d_8200",
       {0x4e, 0x44, 0x5a, 0x4b, 0x01, 0x01, 0x01, 0x00, 0x08, 0x20, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0, 0x04, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0xfd, 0xe6, 0x5f, 0xa6, 0x3b, 0xe7, 0x1a, 0x3a}},
      {"smooth-b40_f64_2d_10x10",
       {0x4e, 0x44, 0x5a, 0x4b, 0x01, 0x02, 0x02, 0x00, 0x0a, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x03, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x97, 0x2d, 0xa6, 0xbd, 0x31, 0x1c, 0x1a, 0x6d}},
      {"smooth-b14_f32_3d_16x16x16",
       {0x4e, 0x44, 0x5a, 0x4b, 0x01, 0x01, 0x03, 0x00, 0x10, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd8, 0x33, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x54, 0xb2, 0xa9, 0xe1, 0x8f, 0x99, 0x86, 0x42}},
      {"negzeros_f64_3d_16x16x33",
       {0x4e, 0x44, 0x5a, 0x4b, 0x01, 0x02, 0x03, 0x00, 0x10, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x21, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0x0c, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0xc4, 0xec, 0x61, 0x21, 0x33, 0x1b, 0xa0, 0xc2}},
  };

  for (const old_frame& old : frames) {
    INFO(old.vector);
    const vector_spec spec = parse_vector_name(old.vector);
    std::string stream_sha256;
    for (const auto& v : reference_vectors())
      if (std::string(v.name) == old.vector) stream_sha256 = v.stream_sha256;
    REQUIRE(!stream_sha256.empty());
    const frame_bytes expected_header(reinterpret_cast<const std::byte*>(old.header.data()),
                                      reinterpret_cast<const std::byte*>(old.header.data()) + 48);
    auto check = [&](auto bits_tag, auto dims) {
      using Bits = decltype(bits_tag);
      using T = std::conditional_t<sizeof(Bits) == 4, float, double>;
      constexpr int D = decltype(dims)::value;
      const auto grid = make_extent<D>(spec.extents);
      const auto input = generate_bits<Bits>(spec);
      for_each_backend([&](const std::string&, auto exec) {
        const frame_bytes frame = frame_of(exec, values_on<T>(exec, input, grid));
        CHECK(frame_bytes(frame.begin(), frame.begin() + 48) == expected_header);

        // The old frame (its header and the vector's stream) reads back to the input.
        frame_bytes old_file = expected_header;
        old_file.insert(old_file.end(), frame.begin() + 48, frame.end());
        CHECK(sha256_hex(stream_of(old_file)) == stream_sha256);
        using space = typename decltype(exec)::memory_space;
        auto out = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("out", grid);
        ndzip::decompress_frame(exec, view_of(old_file), out);
        CHECK(mismatch(bits_of<Bits>(out), input) == "");
      });
    };
    auto with_dims = [&](auto bits_tag) {
      if (spec.dims == 1) check(bits_tag, std::integral_constant<int, 1>{});
      if (spec.dims == 2) check(bits_tag, std::integral_constant<int, 2>{});
      if (spec.dims == 3) check(bits_tag, std::integral_constant<int, 3>{});
    };
    if (spec.is_double)
      with_dims(std::uint64_t{});
    else
      with_dims(std::uint32_t{});
  }
}

TEST_CASE("frame: a grid no stream holds is planned as a chunked frame, which decompress_frame "
          "reads") {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  // 2^33 floats: its stream's offset table would need more than 32 bits. Only extents are read,
  // so the View points at nothing.
  const Kokkos::View<float***, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> huge(
      nullptr, 2048, 2048, 2048);
  CHECK_THROWS_AS(ndzip::compressed_size_bound(huge), std::invalid_argument);
  CHECK(ndzip::frame_size_bound(huge) == ndzip::chunked_frame_size_bound(huge));
  CHECK(ndzip::frame_size_bound(huge) > huge.size() * sizeof(float));

  // A chunked frame of a small array reads back through decompress_frame.
  const ndzip::extent<2> grid(130, 67);
  const auto input = generate_for<f32_2d>("smooth", 8, grid);
  const auto values = host_view_of<float, 2>(input, grid);
  host_frame_view frame("frame", ndzip::chunked_frame_size_bound(values, 64));
  const std::size_t size = ndzip::compress_chunked_frame(Exec{}, values, frame, 64);
  Kokkos::View<float**, Kokkos::HostSpace> out("out", 130, 67);
  ndzip::decompress_frame(Exec{}, const_frame_view(frame.data(), size), out);
  CHECK(mismatch(bits_of<std::uint32_t>(out), input) == "");
}
