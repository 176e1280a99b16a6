// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The chunked frame (ndzip/chunked_frame_format.hpp, ndzip/chunked_frame.hpp; docs/FORMAT.md
// "The chunked frame, version 4"): Views to chunked frames and back on every backend, at slab
// sizes from one row to the whole array, each slab's stream the model's stream of its rows;
// every check of a damaged frame, naming the slab; writers' misuse; and the slab sizes planned
// for grids one stream cannot hold, without allocating them.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "codec_support.hpp"
#include "frame_support.hpp"

using namespace ndzip_test;

namespace {

std::uint64_t get_u64(const frame_bytes& frame, std::size_t offset) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i)
    v |= std::uint64_t{std::to_integer<std::uint8_t>(frame.at(offset + i))} << (8 * i);
  return v;
}

// The rows a slab of one layer of hypercubes holds, for D dimensions.
template <int D>
std::uint64_t hypercube_rows() {
  return ndzip::hypercube_side(D);
}

}  // namespace

TEST_CASE_TEMPLATE("chunked frame: View -> slabs -> View on every backend, each slab the model's "
                   "stream",
                   C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = bordered_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  std::size_t row = 1;
  for (int a = 1; a < D; ++a) row *= grid[a];
  const std::uint64_t n0 = grid[0];
  // One row, one layer of hypercubes, a layer and a row, most of the array, all of it, default.
  const std::vector<std::uint64_t> slab_rows = {1, hypercube_rows<D>(), hypercube_rows<D>() + 1,
                                                n0 - 1, n0, 0};
  for_each_backend([&](const std::string&, auto exec) {
    using space = typename decltype(exec)::memory_space;
    const auto values = Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
    for (const std::uint64_t rows : slab_rows) {
      if (rows > n0) continue;
      CAPTURE(rows);
      const frame_bytes frame = chunked_frame_of(exec, values, rows);
      const ndzip::chunked_frame_info info =
          ndzip::read_chunked_header(frame.data(), frame.size());
      const std::uint64_t r = rows == 0 ? n0 : rows;  // the default takes all of a small array
      CHECK(info.slab_rows == r);
      CHECK(info.slab_count == (n0 + r - 1) / r);
      const auto offsets = ndzip::read_chunked_index(info, frame.data(), frame.size());
      REQUIRE(offsets.size() == info.slab_count);
      for (std::uint64_t s = 0; s < info.slab_count; ++s) {
        const auto head = ndzip::read_slab_head(info, s, frame.data() + offsets[s],
                                                frame.size() - offsets[s]);
        if (head.coded_dimensions != D) continue;  // folded: decoded below
        // The slab's rows as their own array: the model encoder's stream, byte for byte.
        const std::size_t first = static_cast<std::size_t>(info.first_row(s)) * row;
        ndzip::extent<D> slab_grid = grid;
        slab_grid[0] = static_cast<std::size_t>(info.slab_extents(s)[0]);
        const std::vector<Bits> slab(input.begin() + first,
                                     input.begin() + first + slab_grid.size());
        const auto expected = model_stream<C>(slab, slab_grid);
        const auto* stream = frame.data() + offsets[s] + ndzip::slab_head_bytes;
        std::vector<unsigned char> got;
        for (std::uint64_t i = 0; i < head.stream_bytes; ++i)
          got.push_back(std::to_integer<unsigned char>(stream[i]));
        CHECK(mismatch(got, expected) == "");
      }
      auto out = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("out", grid);
      ndzip::decompress_chunked_frame(exec, view_of(frame), out);
      CHECK(mismatch(bits_of<Bits>(out), input) == "");
    }
  });
}

TEST_CASE_TEMPLATE("chunked frame: high-ratio slabs round trip", C, ndzip_test::f32_3d,
                   ndzip_test::f64_2d) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = bordered_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto values = host_view_of<T, D>(input, grid);
  const Kokkos::DefaultHostExecutionSpace exec;
  const frame_bytes frame =
      chunked_frame_of(exec, values, hypercube_rows<D>(), ndzip::codec_mode::high_ratio);
  const auto info = ndzip::read_chunked_header(frame.data(), frame.size());
  const auto offsets = ndzip::read_chunked_index(info, frame.data(), frame.size());
  CHECK(ndzip::read_slab_head(info, 0, frame.data() + offsets[0], ndzip::slab_head_bytes).mode ==
        ndzip::codec_mode::high_ratio);
  auto out = make_view<grid_view<T, D>>("out", grid);
  ndzip::decompress_chunked_frame(exec, view_of(frame), out);
  CHECK(mismatch(bits_of<Bits>(out), input) == "");
}

TEST_CASE("chunked frame: damaged frames are refused before decoding, naming the slab") {
  const ndzip::extent<2> grid{130, 67};
  const auto input = generate_for<f32_2d>("smooth", 8, grid);
  const auto values = host_view_of<float, 2>(input, grid);
  const Kokkos::DefaultHostExecutionSpace exec;
  const frame_bytes good = chunked_frame_of(exec, values, 64);  // slabs of 64, 64 and 2 rows
  const auto info = ndzip::read_chunked_header(good.data(), good.size());
  REQUIRE(info.slab_count == 3);
  const auto offsets = ndzip::read_chunked_index(info, good.data(), good.size());
  auto out = make_view<grid_view<float, 2>>("out", grid);
  const auto refused = [&](const frame_bytes& bad) {
    return frame_error_of([&] { ndzip::decompress_chunked_frame(exec, view_of(bad), out); });
  };
  const auto with_byte = [&](std::size_t at, std::byte x) {
    frame_bytes bad = good;
    bad.at(at) ^= x;
    return bad;
  };
  CHECK(refused(good) == "");

  CHECK(refused(with_byte(0, std::byte{1})).find("NDZK") != std::string::npos);
  CHECK(refused(with_byte(4, std::byte{6})).find("frame version 2, not 4") != std::string::npos);
  CHECK(refused(with_byte(20, std::byte{1})).find("header checksum") != std::string::npos);
  CHECK(refused(with_byte(49, std::byte{1})).find("reserved") != std::string::npos);
  CHECK(refused(frame_bytes(good.begin(), good.begin() + 40)).find("truncated header") !=
        std::string::npos);
  // The slabs: a head, a stream byte, the index, the trailer.
  CHECK(refused(with_byte(offsets[1], std::byte{1})).find("slab 1: its head does not start") !=
        std::string::npos);
  CHECK(refused(with_byte(offsets[1] + 9, std::byte{1})).find("slab 1: its head says it is") !=
        std::string::npos);
  CHECK(refused(with_byte(offsets[2] + 40, std::byte{4})).find("slab 2: checksum mismatch") !=
        std::string::npos);
  const std::size_t index = good.size() - ndzip::chunked_trailer_bytes - 8 * 3;
  CHECK(refused(with_byte(index + 8, std::byte{8})).find("index checksum") != std::string::npos);
  CHECK(refused(with_byte(good.size() - 20, std::byte{1})).find("index checksum") !=
        std::string::npos);
  // Cut short, or followed by bytes: the trailer is not where the frame ends.
  CHECK(refused(frame_bytes(good.begin(), good.end() - 8)).find("trailer") != std::string::npos);
  frame_bytes longer = good;
  longer.resize(good.size() + 8);
  CHECK(refused(longer).find("trailer") != std::string::npos);
  // Slabs swapped (each intact, the index rewritten to match): slab 0's place holds slab 1.
  {
    const std::size_t a = offsets[0], b = offsets[1], c = offsets[2];
    frame_bytes swapped(good.begin(), good.begin() + a);
    swapped.insert(swapped.end(), good.begin() + b, good.begin() + c);
    swapped.insert(swapped.end(), good.begin() + a, good.begin() + b);
    swapped.insert(swapped.end(), good.begin() + c, good.begin() + index);
    const std::vector<std::uint64_t> moved = {a, a + (c - b), c};
    const auto end = ndzip::encode_chunked_end(moved, index);
    swapped.insert(swapped.end(), end.begin(), end.end());
    CHECK(refused(swapped).find("slab 0: its head says it is slab 1") != std::string::npos);
  }
  // An index that gives a slab more room than its record takes.
  {
    std::vector<std::uint64_t> moved(offsets.begin(), offsets.end());
    moved[2] += 8;
    frame_bytes bad(good.begin(), good.begin() + index);
    const auto end = ndzip::encode_chunked_end(moved, index);
    bad.insert(bad.end(), end.begin(), end.end());
    CHECK(refused(bad).find("slab 1: its head and stream take") != std::string::npos);
  }
  // A stream length its grid cannot have, resealed by a buggy writer: refused by its head.
  {
    frame_bytes bad = good;
    const std::uint64_t length = get_u64(bad, offsets[0] + 16);
    for (std::size_t i = 0; i < 8; ++i)
      bad[offsets[0] + 16 + i] = static_cast<std::byte>((length * 1000) >> (8 * i));
    CHECK(refused(bad).find("slab 0: inconsistent frame") != std::string::npos);
  }
  // What inspect_chunked_frame reports, and headers announcing more than the bytes can hold:
  // refused without allocating for them.
  {
    const auto layout = ndzip::inspect_chunked_frame(good.data(), good.size());
    CHECK(layout.frame.extents == std::array<std::uint64_t, 3>{130, 67, 0});
    CHECK(layout.slabs.size() == 3);
    CHECK(layout.slabs[2].stream_bytes + ndzip::slab_head_bytes <= layout.slabs[2].record_bytes());
    const auto f32 = ndzip::element_type::float32;
    const auto many = ndzip::encode_chunked_header(f32, 1, {std::uint64_t{1} << 32, 0, 0}, 1);
    frame_bytes forged(many.begin(), many.end());
    forged.resize(4096);
    CHECK(frame_error_of([&] { ndzip::inspect_chunked_frame(forged.data(), forged.size()); })
              .find("truncated: 4294967296 slabs take") != std::string::npos);
    // One slab of 2^40 floats in a few hundred bytes: its head's stream length cannot be.
    const auto huge =
        ndzip::encode_chunked_header(f32, 1, {std::uint64_t{1} << 40, 0, 0}, std::uint64_t{1} << 40);
    frame_bytes one(huge.begin(), huge.end());
    const std::size_t slab_at = one.size();
    one.resize(slab_at + ndzip::slab_head_bytes + 64);
    const char nzsl[] = "NZSL";
    for (int i = 0; i < 4; ++i) one[slab_at + i] = static_cast<std::byte>(nzsl[i]);
    one[slab_at + 16] = std::byte{64};  // a stream of 64 bytes
    const auto end = ndzip::encode_chunked_end({slab_at}, one.size());
    one.insert(one.end(), end.begin(), end.end());
    CHECK(frame_error_of([&] { ndzip::inspect_chunked_frame(one.data(), one.size()); })
              .find("slab 0:") != std::string::npos);
  }
  // Readers of versions 1 to 3 refuse version 4 by name.
  CHECK(frame_error_of([&] { ndzip::inspect_frame(good.data(), good.size()); })
            .find("unsupported frame version 4") != std::string::npos);
  // Decoding into a View of other extents.
  auto other = make_view<grid_view<float, 2>>("other", ndzip::extent<2>{129, 67});
  CHECK(frame_error_of([&] { ndzip::decompress_chunked_frame(exec, view_of(good), other); })
            .find("float 130x67") != std::string::npos);
}

TEST_CASE("chunked frame: writers' misuse is refused before anything is written") {
  const ndzip::extent<1> grid{10000};
  const auto input = generate_for<f32_1d>("smooth", 8, grid);
  const auto values = host_view_of<float, 1>(input, grid);
  const Kokkos::DefaultHostExecutionSpace exec;
  host_frame_view frame("frame", ndzip::chunked_frame_size_bound(values, 100));
  CHECK_THROWS_AS(ndzip::compress_chunked_frame(exec, values, frame, 10001),
                  std::invalid_argument);
  host_frame_view small("small", 200);
  CHECK_THROWS_AS(ndzip::compress_chunked_frame(exec, values, small, 100), ndzip::capacity_error);
  CHECK_THROWS_AS(ndzip::encode_chunked_header(ndzip::element_type::float32, 1, {10, 0, 0}, 3 + 8),
                  std::invalid_argument);
}

TEST_CASE("chunked frame: a grid one stream cannot hold is planned in slabs, nothing allocated") {
  // 2^42 floats (16 TiB): no raw stream can hold them (32-bit word offsets), slabs of one row
  // of 256 MiB can.
  const std::array<std::uint64_t, 3> huge = {65536, 65536, 1024};
  const auto f32 = ndzip::element_type::float32;
  CHECK_THROWS_AS(ndzip::compressed_size_bound<float>(ndzip::extent<3>(65536, 65536, 1024)),
                  std::invalid_argument);
  const std::uint64_t rows = ndzip::default_slab_rows(f32, 3, huge);
  CHECK(rows == 1);
  const std::uint64_t bound = ndzip::chunked_frame_bound(f32, 3, huge, rows);
  CHECK(bound > (std::uint64_t{1} << 44));  // above the values' 16 TiB
  CHECK(bound < (std::uint64_t{1} << 44) + (std::uint64_t{1} << 41));
  // A moderate grid: slabs of about 64 MiB, so a 1 GiB float array takes 16.
  const std::array<std::uint64_t, 3> gib = {1024, 512, 512};
  CHECK(ndzip::default_slab_rows(f32, 3, gib) == 64);
  // A small array is one slab.
  CHECK(ndzip::default_slab_rows(f32, 2, {130, 67, 0}) == 130);
  // Rows of 1.2 MB: 55 make 64 MiB, whole layers of 16 hypercube rows 48.
  CHECK(ndzip::default_slab_rows(f32, 3, {1000, 300, 1000}) == 48);
  CHECK(ndzip::default_slab_rows(f32, 1, {std::uint64_t{1} << 30, 0, 0}) == std::uint64_t{1} << 24);
}

TEST_CASE_TEMPLATE("chunked frame: slabs of whole hypercube layers cost their heads alone", C,
                   ndzip_test::f32_3d, ndzip_test::f64_2d) {
  // Slabs that hold whole layers of hypercubes code the same hypercubes and border as the one
  // stream of the array: the frame is larger by a slab head, a stream header and padding per
  // slab, within 0.5 % here with slabs of a few hundred KiB (64 MiB slabs lose less still).
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const ndzip::extent<D> grid = [] {
    if constexpr (D == 3)
      return ndzip::extent<3>(64, 67, 70);
    else
      return ndzip::extent<2>(512, 300);
  }();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto values = host_view_of<T, D>(input, grid);
  const Kokkos::DefaultHostExecutionSpace exec;
  host_frame_view whole("whole", ndzip::frame_size_bound(values));
  const std::size_t one_stream = ndzip::compress_frame(exec, values, whole);
  const std::uint64_t rows = 2 * hypercube_rows<D>();
  const frame_bytes slabbed = chunked_frame_of(exec, values, rows);
  CAPTURE(one_stream);
  CAPTURE(slabbed.size());
  CHECK(slabbed.size() > one_stream);
  CHECK(static_cast<double>(slabbed.size()) <= 1.005 * static_cast<double>(one_stream));
}
