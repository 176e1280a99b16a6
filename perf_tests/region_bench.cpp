// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip-region-bench: the time of decoding part of a field against decoding all of it, in the
// same run, on one backend. For each synthetic field (perf_tests/bench_inputs.hpp) it times the
// full decode of its raw stream, then boxes of about 1 % of its elements and single slices
// (across the slowest axis, and across the fastest), each at several positions, from the raw
// stream (ndzip::compressor::decompress_region), a version 1 frame and a chunked frame
// (ndzip::decompress_frame_region, which checks the frame's or the touched slabs' checksums
// first). Every region is checked against the same box of the field. Prints one row per
// measurement: the median time over positions of each position's median, and its ratio to the
// full decode of the raw stream.
//
//   ndzip-region-bench -b serial --csv docs/bench/region-host-serial-20261202.csv

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <ndzip/ndzip.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_inputs.hpp"
#include "timing.hpp"

namespace {

struct options {
  std::string backend = "serial";
  std::string csv;
  int positions = 5;
  double min_seconds = 0.3;
  std::size_t scale = 1;  // every extent divided by it (short runs: the smoke test)
};

struct row {
  std::string field, source, region, box;
  double seconds, full_seconds;
};

template <int Dims>
using start_of = std::array<std::size_t, Dims>;

// The boxes of one kind at `positions` places spread over the grid, deterministically.
template <int Dims>
std::vector<start_of<Dims>> placements(const ndzip::extent<Dims>& grid,
                                       const ndzip::extent<Dims>& count, int positions) {
  std::vector<start_of<Dims>> starts;
  for (int p = 0; p < positions; ++p) {
    start_of<Dims> s{};
    for (int a = 0; a < Dims; ++a) {
      const std::size_t room = grid[a] - count[a];
      // Positions at odd fractions, so that they fall at every offset within a hypercube.
      s[a] = room == 0 ? 0
                       : static_cast<std::size_t>((2 * p + 1) * (a + 3) * 0.0617 * room) %
                             (room + 1);
    }
    starts.push_back(s);
  }
  return starts;
}

// The kinds of region of a grid: about 1 % of its elements, one slice across the slowest axis,
// one across the fastest (2-D and 3-D).
template <int Dims>
std::vector<std::pair<std::string, ndzip::extent<Dims>>> region_kinds(
    const ndzip::extent<Dims>& grid) {
  std::vector<std::pair<std::string, ndzip::extent<Dims>>> kinds;
  ndzip::extent<Dims> box;
  const double side = std::pow(0.01, 1.0 / Dims);
  for (int a = 0; a < Dims; ++a)
    box[a] = std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(side * grid[a])));
  kinds.emplace_back("box 1%", box);
  if constexpr (Dims > 1) {
    ndzip::extent<Dims> slowest = grid, fastest = grid;
    slowest[0] = 1;
    fastest[Dims - 1] = 1;
    kinds.emplace_back("slice axis 0", slowest);
    kinds.emplace_back("slice axis " + std::to_string(Dims - 1), fastest);
  }
  return kinds;
}

template <class T, int Dims, class Exec>
void run_field(const Exec& exec, const options& opts, const ndzip::extent<Dims>& grid,
               std::vector<row>& rows) {
  using space = typename Exec::memory_space;
  using data_type = std::conditional_t<Dims == 1, T*, std::conditional_t<Dims == 2, T**, T***>>;
  using grid_view = Kokkos::View<data_type, Kokkos::LayoutRight, space>;
  const auto make = [](const std::string& label, const ndzip::extent<Dims>& e) {
    return grid_view(label, e[0], Dims > 1 ? e[1] : KOKKOS_INVALID_INDEX,
                     Dims > 2 ? e[2] : KOKKOS_INVALID_INDEX);
  };
  const grid_view values = make("values", grid);
  ndzip::perf::inputs::fill_synthetic<T, Dims>(exec, values, grid);
  exec.fence();
  const auto host_values = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, values);
  const std::string field = std::string(sizeof(T) == 4 ? "float " : "double ") +
                            ndzip::to_string(grid);

  ndzip::compressor<T, Dims, Exec> codec(exec, grid);
  Kokkos::View<std::byte*, space> stream("stream", codec.size_bound());
  const std::size_t stream_bytes = codec.compress(values, stream);
  exec.fence();
  const grid_view full = make("full", grid);
  const double full_s =
      ndzip::perf::measure([&] { codec.decompress(stream, full); }, 5, opts.min_seconds).median_s;
  rows.push_back({field, "raw stream", "whole array", ndzip::to_string(grid), full_s, full_s});

  Kokkos::View<std::byte*, Kokkos::HostSpace> frame("frame", ndzip::frame_size_bound(values));
  frame = Kokkos::subview(frame, std::make_pair(std::size_t{0},
                                                ndzip::compress_frame(exec, values, frame)));
  Kokkos::View<std::byte*, Kokkos::HostSpace> chunked("chunked",
                                                      ndzip::chunked_frame_size_bound(values));
  chunked = Kokkos::subview(
      chunked, std::make_pair(std::size_t{0}, ndzip::compress_chunked_frame(exec, values, chunked)));
  std::printf("%s: stream %zu bytes, frame %zu, chunked frame %zu; full decode %.4f s\n",
              field.c_str(), stream_bytes, frame.size(), chunked.size(), full_s);

  for (const auto& kind_and_count : region_kinds(grid)) {
    // Named, not structured bindings: nvcc's lambdas cannot capture those.
    const std::string& kind = kind_and_count.first;
    const ndzip::extent<Dims>& count = kind_and_count.second;
    const grid_view out = make("region", count);
    const auto host_out = Kokkos::create_mirror_view(out);
    const auto starts = placements(grid, count, opts.positions);
    const auto check = [&](const start_of<Dims>& s) {
      Kokkos::deep_copy(host_out, out);
      std::size_t c[3] = {0, 0, 0};
      for (std::size_t i = 0; i < count.size(); ++i) {
        std::size_t rest = i, at = 0;
        for (int a = Dims - 1; a >= 0; --a) {
          c[a] = s[a] + rest % count[a];
          rest /= count[a];
        }
        for (int a = 0; a < Dims; ++a) at = at * grid[a] + c[a];
        if (std::memcmp(host_out.data() + i, host_values.data() + at, sizeof(T)) != 0)
          throw std::runtime_error("ndzip-region-bench: " + field + ", " + kind +
                                   ": a region differs from the field");
      }
    };
    const auto time_source = [&](const std::string& source, auto&& decode) {
      std::vector<double> medians;
      for (const auto& s : starts) {
        medians.push_back(
            ndzip::perf::measure([&] { decode(s); }, 5, opts.min_seconds / starts.size())
                .median_s);
        check(s);
      }
      std::sort(medians.begin(), medians.end());
      rows.push_back({field, source, kind, ndzip::to_string(count), medians[medians.size() / 2],
                      full_s});
    };
    time_source("raw stream", [&](const start_of<Dims>& s) {
      codec.decompress_region(stream, s, out);
    });
    time_source("frame v1", [&](const start_of<Dims>& s) {
      ndzip::decompress_frame_region(exec, frame, s, out);
    });
    time_source("chunked frame", [&](const start_of<Dims>& s) {
      ndzip::decompress_frame_region(exec, chunked, s, out);
    });
  }
}

template <class Exec>
void run_all(const Exec& exec, const options& opts, std::vector<row>& rows) {
  ndzip::perf::inputs::for_each_synthetic_shape(opts.scale, [&](auto type, const auto& grid) {
    constexpr int Dims = std::decay_t<decltype(grid)>::dimensions;
    run_field<decltype(type), Dims>(exec, opts, grid, rows);
  });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("ndzip-region-bench: decoding part of a field against all of it");
  options opts;
  app.add_option("-b,--backend", opts.backend, "backend (ndzip::enabled_backends())");
  app.add_option("--csv", opts.csv, "also write the rows to this CSV file");
  app.add_option("--positions", opts.positions, "places of each kind of region")
      ->check(CLI::Range(1, 100));
  app.add_option("--min-seconds", opts.min_seconds, "least time each measurement repeats for");
  app.add_option("--scale", opts.scale, "divide the fields' extents by this (1-D: its cube)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  CLI11_PARSE(app, argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::vector<row> rows;
  try {
    ndzip::with_backend(opts.backend, [&](auto exec) { run_all(exec, opts, rows); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::printf("%-24s %-14s %-14s %-14s %10s %8s\n", "field", "source", "region", "box", "seconds",
              "of full");
  for (const row& r : rows)
    std::printf("%-24s %-14s %-14s %-14s %10.6f %7.2f%%\n", r.field.c_str(), r.source.c_str(),
                r.region.c_str(), r.box.c_str(), r.seconds, 100 * r.seconds / r.full_seconds);
  if (!opts.csv.empty()) {
    std::ofstream csv(opts.csv);
    csv << "backend,field,read_from,region,box,seconds,full_decode_seconds,fraction_of_full\n";
    for (const row& r : rows)
      csv << opts.backend << ',' << r.field << ',' << r.source << ',' << r.region << ',' << r.box
          << ',' << r.seconds << ',' << r.full_seconds << ',' << r.seconds / r.full_seconds
          << '\n';
    if (!csv.flush()) {
      std::fprintf(stderr, "ndzip-region-bench: could not write %s\n", opts.csv.c_str());
      return 1;
    }
  }
  return 0;
}
