// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Region decoding of raw streams (ndzip::compressor::decompress_region, core/region_decoder.hpp):
// boxes at every kind of position (corners, one element, the whole grid, inside one hypercube,
// across hypercubes and the border, in the border alone) equal the same box cut from a full
// decode, in both modes, every type and rank, on every backend and on the emulated 32- and
// 64-lane groups; likewise from frames of every version (folded arrays, chunked frames with
// boxes across slabs, folded slabs), a damaged slab refusing only the boxes that touch it; the border position of every border element inverts border_element; boxes
// outside the grid or empty are refused; a damaged block is found where the box reads it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/emulated/lane_ops.hpp"
#include "codec_support.hpp"
#include "core/ndzip_engine.hpp"
#include "frame_support.hpp"
#include "core/region_decoder.hpp"

using namespace ndzip_test;

namespace {

template <int D>
using box_start = std::array<std::size_t, D>;

// A box of the grid: its start and extents.
template <int D>
struct test_box {
  box_start<D> start;
  ndzip::extent<D> count;
};

// The bits of `box` cut out of the full grid's bits.
template <int D, class Bits>
std::vector<Bits> cut(const std::vector<Bits>& full, const ndzip::extent<D>& grid,
                      const test_box<D>& box) {
  std::vector<Bits> out;
  out.reserve(box.count.size());
  std::size_t c[3] = {0, 0, 0};
  const std::size_t n = box.count.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t rest = i, at = 0;
    for (int a = D - 1; a >= 0; --a) {
      c[a] = box.start[a] + rest % box.count[a];
      rest /= box.count[a];
    }
    for (int a = 0; a < D; ++a) at = at * grid[a] + c[a];
    out.push_back(full[at]);
  }
  return out;
}

// Boxes at every kind of position of `grid`, for hypercubes of side `side`.
template <int D>
std::vector<test_box<D>> boxes_of(const ndzip::extent<D>& grid, std::size_t side) {
  std::vector<test_box<D>> boxes;
  const auto make = [&](auto start_of, auto count_of) {
    test_box<D> b;
    for (int a = 0; a < D; ++a) {
      b.start[a] = start_of(a);
      b.count[a] = count_of(a);
    }
    boxes.push_back(b);
  };
  make([](int) { return std::size_t{0}; }, [&](int a) { return grid[a]; });  // all of it
  make([](int) { return std::size_t{0}; }, [](int) { return std::size_t{1}; });  // first element
  make([&](int a) { return grid[a] - 1; }, [](int) { return std::size_t{1}; });  // last element
  // Inside one hypercube (where the grid has one along the axis), and across the first two.
  make([&](int a) { return grid[a] >= side ? std::size_t{1} : std::size_t{0}; },
       [&](int a) { return grid[a] >= side ? side - 2 : grid[a]; });
  make([&](int a) { return grid[a] >= 2 * side ? side / 2 : std::size_t{0}; },
       [&](int a) { return grid[a] >= 2 * side ? side : grid[a]; });
  // From inside the hypercubes into the border, and the border alone along every axis.
  make([&](int a) { return grid[a] / 2; }, [&](int a) { return grid[a] - grid[a] / 2; });
  make([&](int a) { return grid[a] / side * side; },
       [&](int a) { return grid[a] - grid[a] / side * side; });
  // One slice across the slowest axis, and one across the fastest.
  make([&](int a) { return a == 0 ? grid[0] / 3 : std::size_t{0}; },
       [&](int a) { return a == 0 ? std::size_t{1} : grid[a]; });
  make([&](int a) { return a == D - 1 ? grid[a] / 3 : std::size_t{0}; },
       [&](int a) { return a == D - 1 ? std::size_t{1} : grid[a]; });
  // Random boxes.
  std::mt19937_64 random(D * 977 + side);
  for (int r = 0; r < 6; ++r) {
    std::size_t starts[3], counts[3];
    for (int a = 0; a < D; ++a) {
      starts[a] = random() % grid[a];
      counts[a] = 1 + random() % (grid[a] - starts[a]);
    }
    make([&](int a) { return starts[a]; }, [&](int a) { return counts[a]; });
  }
  return boxes;
}

template <int D>
std::string text_of(const test_box<D>& b) {
  std::string s;
  for (int a = 0; a < D; ++a)
    s += (a ? "," : "") + std::to_string(b.start[a]) + "+" + std::to_string(b.count[a]);
  return s;
}

// Every box of the grid decoded by `codec` from `stream` against the full decode `full`.
template <class T, int D, class Codec, class Stream, class Bits>
void check_boxes(Codec& codec, const Stream& stream, std::size_t stream_bytes,
                 const std::vector<Bits>& full) {
  using space = typename Codec::memory_space;
  const auto grid = codec.grid();
  for (const auto& box : boxes_of<D>(grid, ndzip::hypercube_side(D))) {
    CAPTURE(text_of(box));
    auto out = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("region", box.count);
    CHECK(codec.decompress_region(stream, box.start, out) == stream_bytes);
    CHECK(mismatch(bits_of<Bits>(out), cut(full, grid, box)) == "");
  }
}

}  // namespace

TEST_CASE_TEMPLATE("region: every box equals the same box of a full decode, both modes, every "
                   "backend",
                   C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  for (const auto& grid : {bordered_grid<D>(), cross_backend_shapes<D>()[2]}) {
    CAPTURE(ndzip::to_string(grid));
    const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
    for_each_backend([&](const std::string&, auto exec) {
      using Exec = decltype(exec);
      using space = typename Exec::memory_space;
      const auto values =
          Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
      for (const auto mode : {ndzip::codec_mode::ndzip, ndzip::codec_mode::high_ratio}) {
        CAPTURE(ndzip::codec_mode_name(mode));
        ndzip::compressor<T, D, Exec> codec(exec, grid, mode);
        Kokkos::View<std::byte*, space> stream("stream", codec.size_bound());
        const std::size_t bytes = codec.compress(values, stream);
        exec.fence();
        check_boxes<T, D>(codec, stream, bytes, input);
        // Twice on one compressor: its region buffer is reused (and grown) across calls.
        check_boxes<T, D>(codec, stream, bytes, input);
      }
    });
  }
}

TEST_CASE_TEMPLATE("region: the emulated 32- and 64-lane groups decode every box as the host "
                   "does",
                   C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const auto grid = cross_backend_shapes<D>()[2];
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto values = host_view_of<T, D>(input, grid);
  ndzip::compressor<T, D, Exec> codec(Exec{}, grid);
  Kokkos::View<std::byte*, Kokkos::HostSpace> stream("stream", codec.size_bound());
  const std::size_t bytes = codec.compress(values, stream);
  const auto run = [&](auto& engine) {
    for (const auto& box : boxes_of<D>(grid, ndzip::hypercube_side(D))) {
      CAPTURE(text_of(box));
      std::vector<Bits> out(box.count.size());
      ndzip::core::region_box<D> b;
      for (int a = 0; a < D; ++a) b.start[a] = box.start[a];
      b.count = box.count;
      CHECK(engine.decompress_region(stream.data(), bytes, b, reinterpret_cast<T*>(out.data())) ==
            bytes);
      CHECK(mismatch(out, cut(input, grid, box)) == "");
    }
  };
  ndzip::core::ndzip_engine<T, D, Exec, ndzip::backend::emulated_lane_ops<32>> warps(Exec{}, grid);
  run(warps);
  ndzip::core::ndzip_engine<T, D, Exec, ndzip::backend::emulated_lane_ops<64>> wavefronts(Exec{},
                                                                                          grid);
  run(wavefronts);
}

TEST_CASE_TEMPLATE("region: border_position inverts border_element for every border element", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  for (const auto& grid : cross_backend_shapes<D>()) {
    CAPTURE(ndzip::to_string(grid));
    const ndzip::stream_layout<T, D> layout(grid);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < layout.border_size; ++i) {
      std::size_t at = ndzip::core::border_element(layout, i), c[D];
      for (int a = D - 1; a >= 0; --a) {
        c[a] = at % grid[a];
        at /= grid[a];
      }
      wrong += ndzip::core::border_position(layout, c) != i;
    }
    CHECK(wrong == 0);
    // An element inside a hypercube has no border position.
    if (layout.hypercube_count > 0) {
      std::size_t c[D] = {};
      CHECK(ndzip::core::border_position(layout, c) == layout.border_size);
    }
  }
}

TEST_CASE("region: boxes outside the grid or empty are refused by name, before anything is read") {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const ndzip::extent<3> grid(40, 50, 37);
  const auto input = generate_for<f32_3d>("smooth", 8, grid);
  ndzip::compressor<float, 3, Exec> codec(Exec{}, grid);
  Kokkos::View<std::byte*, Kokkos::HostSpace> stream("stream", codec.size_bound());
  codec.compress(host_view_of<float, 3>(input, grid), stream);
  Kokkos::View<float***, Kokkos::HostSpace> out("out", 4, 4, 4);
  const auto message = [&](const box_start<3>& start, const auto& view) {
    try {
      codec.decompress_region(stream, start, view);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message({0, 0, 34}, out) == "ndzip: the region [0:4, 0:4, 34:38] does not lie inside the "
                                    "40x50x37 grid (slowest first)");
  CHECK(message({40, 0, 0}, out).find("does not lie inside") != std::string::npos);
  // A start so large that start + count wraps around.
  CHECK(message({0, ~std::size_t{0} - 1, 0}, out).find("does not lie inside") != std::string::npos);
  Kokkos::View<float***, Kokkos::HostSpace> empty("empty", 4, 0, 4);
  CHECK(message({0, 0, 0}, empty) == "ndzip: the region [0:4, 0:0, 0:4] is empty; a region holds "
                                     "one element at least");
  CHECK(message({0, 0, 0}, out) == "no error");
}

TEST_CASE("region: a damaged block is found where the box decodes it, and only there") {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const ndzip::extent<2> grid(128, 128);  // 2 x 2 hypercubes of 64 x 64, no border
  const auto input = generate_for<f32_2d>("smooth", 8, grid);
  ndzip::compressor<float, 2, Exec> codec(Exec{}, grid);
  Kokkos::View<std::byte*, Kokkos::HostSpace> stream("stream", codec.size_bound());
  const std::size_t bytes = codec.compress(host_view_of<float, 2>(input, grid), stream);
  // Hypercube 3's block ends at the last entry; an entry 1 of 2^31 makes block 1 longer than
  // any block can be, and block 2 start after its end.
  const auto table = reinterpret_cast<std::uint32_t*>(stream.data());
  const std::uint32_t intact = table[1];
  table[1] = 1u << 31;
  Kokkos::View<float**, Kokkos::HostSpace> out("out", 10, 10);
  // Hypercube 0 (rows and columns 0-63) reads entries 0 and the last alone: intact.
  CHECK(codec.decompress_region(stream, {5, 5}, out) == bytes);
  CHECK(mismatch(bits_of<std::uint32_t>(out),
                 cut<2>(input, grid, test_box<2>{{5, 5}, ndzip::extent<2>(10, 10)})) == "");
  // Hypercube 1 (rows 0-63, columns 64-127) reads the damaged entry.
  CHECK_THROWS_AS(codec.decompress_region(stream, {5, 70}, out), ndzip::stream_error);
  CHECK_THROWS_AS(codec.decompress_region(stream, {70, 5}, out), ndzip::stream_error);
  // A stream shorter than the last entry announces is refused whatever the box.
  const Kokkos::View<std::byte*, Kokkos::HostSpace> truncated(stream.data(), bytes - 4);
  table[1] = intact;
  CHECK_THROWS_AS(codec.decompress_region(truncated, {5, 5}, out), ndzip::stream_error);
}


TEST_CASE_TEMPLATE("region: every box of a frame of any version equals the same box of a full "
                   "decode",
                   C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  // Grids coded in their own rank, and (D > 1) thin ones that frames fold.
  std::vector<ndzip::extent<D>> grids = {bordered_grid<D>()};
  if constexpr (D == 2) grids.push_back(ndzip::extent<2>(300, 9));
  if constexpr (D == 3) grids.push_back(ndzip::extent<3>(40, 7, 30));
  for (const auto& grid : grids) {
    CAPTURE(ndzip::to_string(grid));
    const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
    for_each_backend([&](const std::string&, auto exec) {
      using space = typename decltype(exec)::memory_space;
      const auto values =
          Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
      for (const auto mode : {ndzip::codec_mode::ndzip, ndzip::codec_mode::high_ratio}) {
        CAPTURE(ndzip::codec_mode_name(mode));
        // A version 1-3 frame; chunked ones of one row a slab, of a few rows, of all of them.
        const std::vector<std::pair<bool, std::uint64_t>> kinds = {
            {false, 0}, {true, D == 1 ? 1000 : 1}, {true, 5}, {true, 0}};
        for (const auto& kind : kinds) {
          const bool chunked = kind.first;
          const std::uint64_t rows = kind.second;
          CAPTURE(chunked);
          CAPTURE(rows);
          const frame_bytes frame =
              chunked ? chunked_frame_of(exec, values, rows, mode) : frame_of(exec, values, mode);
          for (const auto& box : boxes_of<D>(grid, ndzip::hypercube_side(D))) {
            CAPTURE(text_of(box));
            auto out = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("region", box.count);
            ndzip::decompress_frame_region(exec, const_frame_view(frame.data(), frame.size()),
                                           box.start, out);
            CHECK(mismatch(bits_of<Bits>(out), cut(input, grid, box)) == "");
          }
        }
      }
    });
  }
}

TEST_CASE("region: a chunked frame's damaged slab refuses the boxes that touch it, by name, and "
          "no other") {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const ndzip::extent<2> grid(200, 70);
  const auto input = generate_for<f32_2d>("smooth", 8, grid);
  const auto values = host_view_of<float, 2>(input, grid);
  frame_bytes frame = chunked_frame_of(Exec{}, values, 64);
  const auto layout = ndzip::inspect_chunked_frame(frame.data(), frame.size());
  REQUIRE(layout.offsets.size() == 4);
  // A byte inside slab 1's stream (rows 64-127).
  frame.at(layout.offsets[1] + ndzip::slab_head_bytes + 100) ^= std::byte{1};
  Kokkos::View<float**, Kokkos::HostSpace> out("out", 10, 70);
  const const_frame_view view(frame.data(), frame.size());
  ndzip::decompress_frame_region(Exec{}, view, {20, 0}, out);
  CHECK(mismatch(bits_of<std::uint32_t>(out),
                 cut<2>(input, grid, test_box<2>{{20, 0}, ndzip::extent<2>(10, 70)})) == "");
  ndzip::decompress_frame_region(Exec{}, view, {150, 0}, out);
  CHECK(mismatch(bits_of<std::uint32_t>(out),
                 cut<2>(input, grid, test_box<2>{{150, 0}, ndzip::extent<2>(10, 70)})) == "");
  // Rows 60-69 cross into slab 1.
  CHECK(frame_error_of([&] { ndzip::decompress_frame_region(Exec{}, view, {60, 0}, out); })
            .find("slab 1") != std::string::npos);
}

TEST_CASE("region: a frame refuses a View of another type or rank, and boxes outside its array") {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const ndzip::extent<2> grid(100, 70);
  const auto input = generate_for<f32_2d>("smooth", 8, grid);
  for (const bool chunked : {false, true}) {
    CAPTURE(chunked);
    const auto values = host_view_of<float, 2>(input, grid);
    const frame_bytes frame =
        chunked ? chunked_frame_of(Exec{}, values, 0) : frame_of(Exec{}, values);
    const const_frame_view view(frame.data(), frame.size());
    Kokkos::View<double**, Kokkos::HostSpace> doubles("doubles", 2, 2);
    CHECK(frame_error_of([&] { ndzip::decompress_frame_region(Exec{}, view, {0, 0}, doubles); })
              .find("holds a 2-D float array") != std::string::npos);
    Kokkos::View<float**, Kokkos::HostSpace> out("out", 2, 2);
    CHECK_THROWS_WITH_AS(ndzip::decompress_frame_region(Exec{}, view, {99, 0}, out),
                         "ndzip: the region [99:101, 0:2] does not lie inside the frame's 100x70 "
                         "array (slowest first)",
                         std::invalid_argument);
  }
}
