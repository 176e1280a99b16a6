// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip-fused-bench: a sum over a compressed field computed while decoding it
// (ndzip::compressed_array::reduce: each hypercube decoded in team scratch and summed there)
// against decompressing it into a View and summing that (Kokkos::parallel_reduce over the
// View), in the same run, on one backend, for each synthetic field (perf_tests/bench_inputs.hpp).
// Prints per field the median times of: the validation (making the compressed_array from the
// stream), the fused sum, the decompression, the sum over the View, and the two steps back to
// back; and the ratio of the fused sum to the two steps. Every sum is verified: the two sums
// within their rounding bound of each other, and a position-weighted checksum of the values'
// bits, taken both ways, equal (exit status 1 otherwise). The fused sum's allocations are
// counted through Kokkos' allocation callback: none may be of the field's size.
//
//   OMP_NUM_THREADS=1 ndzip-fused-bench -b serial

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <ndzip/compressed_array.hpp>
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
  double min_seconds = 1.0;
  std::size_t scale = 1;  // every extent divided by it (short runs: the smoke test)
};

// Bytes Kokkos allocates while `counting` is set (its allocation callback).
std::atomic<bool> counting{false};
std::atomic<std::uint64_t> counted_bytes{0};
void count_allocation(Kokkos_Profiling_SpaceHandle, const char*, const void*,
                      std::uint64_t bytes) {
  if (counting) counted_bytes += bytes;
}

template <class F>
std::uint64_t bytes_allocated_by(F&& f) {
  counted_bytes = 0;
  counting = true;
  f();
  counting = false;
  return counted_bytes;
}

// The fused sum's functor: the value, in double.
struct sum_of_values {
  template <class Index, class T>
  KOKKOS_INLINE_FUNCTION void operator()(const Index&, T value, double& partial) const {
    partial += static_cast<double>(value);
  }
};

// The sum of (bits + 1) * (2 * offset + 1) mod 2^64 over the elements: exact in any order, and
// changed by a wrong value or a value at a wrong place.
template <class T>
KOKKOS_INLINE_FUNCTION std::uint64_t placed_bits(T value, std::size_t offset) {
  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t> bits;
  std::memcpy(&bits, &value, sizeof bits);
  return (std::uint64_t{bits} + 1) * (2 * offset + 1);
}
template <int Dims>
struct placed_bits_checksum {
  ndzip::extent<Dims> grid;
  template <class Index, class T>
  KOKKOS_INLINE_FUNCTION void operator()(const Index& index, T value,
                                         std::uint64_t& partial) const {
    std::size_t offset = 0;
    for (int a = 0; a < Dims; ++a) offset = offset * grid[a] + index[a];
    partial += placed_bits(value, offset);
  }
};

// Over the decompressed View: the sum, the sum of magnitudes, the checksum.
template <class T>
struct view_sum {
  const T* values;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, double& partial) const {
    partial += static_cast<double>(values[i]);
  }
};
template <class T>
struct view_magnitude {
  const T* values;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, double& partial) const {
    partial += std::fabs(static_cast<double>(values[i]));
  }
};
template <class T>
struct view_checksum {
  const T* values;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, std::uint64_t& partial) const {
    partial += placed_bits(values[i], i);
  }
};

struct row {
  std::string field;
  double validate_s, fused_s, decompress_s, sum_s, two_step_s;
  std::uint64_t fused_allocated;
};

template <class T, int Dims, class Exec>
void run_field(const Exec& exec, const options& opts, const ndzip::extent<Dims>& grid,
               std::vector<row>& rows) {
  using space = typename Exec::memory_space;
  using data_type = std::conditional_t<Dims == 1, T*, std::conditional_t<Dims == 2, T**, T***>>;
  using grid_view = Kokkos::View<data_type, Kokkos::LayoutRight, space>;
  using array_type = ndzip::compressed_array<T, Dims, Exec>;
  const auto make = [&](const std::string& label) {
    return grid_view(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), grid[0],
                     Dims > 1 ? grid[1] : KOKKOS_INVALID_INDEX,
                     Dims > 2 ? grid[2] : KOKKOS_INVALID_INDEX);
  };
  const std::string field = std::string(sizeof(T) == 4 ? "float " : "double ") +
                            ndzip::to_string(grid);

  ndzip::compressor<T, Dims, Exec> codec(exec, grid);
  Kokkos::View<std::byte*, space> stream;
  {
    const grid_view values = make("values");
    ndzip::perf::inputs::fill_synthetic<T, Dims>(exec, values, grid);
    Kokkos::View<std::byte*, space> bound("stream", codec.size_bound());
    const std::size_t bytes = codec.compress(values, bound);
    exec.fence();
    stream = Kokkos::subview(bound, std::make_pair(std::size_t{0}, bytes));
  }  // the values are released: what is left of the field is its stream

  row r{field, 0, 0, 0, 0, 0, 0};
  r.validate_s = ndzip::perf::measure([&] { const array_type made(exec, stream, grid); }, 5,
                                      opts.min_seconds)
                     .median_s;
  const array_type array(exec, stream, grid);
  double fused = 0;
  r.fused_s = ndzip::perf::measure(
                  [&] { array.reduce(exec, sum_of_values{}, Kokkos::Sum<double>(fused)); }, 5,
                  opts.min_seconds)
                  .median_s;
  r.fused_allocated = bytes_allocated_by(
      [&] { array.reduce(exec, sum_of_values{}, Kokkos::Sum<double>(fused)); });

  const grid_view decompressed = make("decompressed");
  const auto all =
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::size_t>>(exec, 0, grid.size());
  double two_step = 0;
  const auto sum_view = [&] {
    Kokkos::parallel_reduce("ndzip-fused-bench::sum", all, view_sum<T>{decompressed.data()},
                            two_step);
  };
  r.decompress_s = ndzip::perf::measure([&] { codec.decompress(stream, decompressed); }, 5,
                                        opts.min_seconds)
                       .median_s;
  r.sum_s = ndzip::perf::measure(sum_view, 5, opts.min_seconds).median_s;
  r.two_step_s = ndzip::perf::measure(
                     [&] {
                       codec.decompress(stream, decompressed);
                       sum_view();
                     },
                     5, opts.min_seconds)
                     .median_s;

  // Both sums are within (n - 1) u sum |x| of the exact one (u = epsilon / 2).
  double magnitude = 0;
  Kokkos::parallel_reduce("ndzip-fused-bench::magnitude", all,
                          view_magnitude<T>{decompressed.data()}, magnitude);
  const double bound =
      static_cast<double>(grid.size()) * std::numeric_limits<double>::epsilon() * magnitude;
  std::uint64_t fused_checksum = 0, view_checksum_value = 0;
  array.reduce(exec, placed_bits_checksum<Dims>{grid},
               Kokkos::Sum<std::uint64_t>(fused_checksum));
  Kokkos::parallel_reduce("ndzip-fused-bench::checksum", all,
                          view_checksum<T>{decompressed.data()}, view_checksum_value);
  if (!(std::fabs(fused - two_step) <= bound) || fused_checksum != view_checksum_value)
    throw std::runtime_error("ndzip-fused-bench: " + field + ": the fused sum " +
                             std::to_string(fused) + " (checksum " +
                             std::to_string(fused_checksum) + ") disagrees with the sum of the "
                             "decompressed field " + std::to_string(two_step) + " (checksum " +
                             std::to_string(view_checksum_value) + ")");
  if (r.fused_allocated >= grid.size() * sizeof(T))
    throw std::runtime_error("ndzip-fused-bench: " + field + ": the fused sum allocated " +
                             std::to_string(r.fused_allocated) + " bytes");
  std::printf("%s: stream %zu bytes (%.2fx smaller), sums agree (%.17g)\n", field.c_str(),
              stream.size(), static_cast<double>(grid.size() * sizeof(T)) / stream.size(), fused);
  rows.push_back(r);
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
  CLI::App app("ndzip-fused-bench: a sum while decoding against decompressing, then summing");
  options opts;
  app.add_option("-b,--backend", opts.backend, "backend (ndzip::enabled_backends())");
  app.add_option("--min-seconds", opts.min_seconds, "least time each measurement repeats for");
  app.add_option("--scale", opts.scale, "divide the fields' extents by this (1-D: its cube)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{4096}));
  CLI11_PARSE(app, argc, argv);
  Kokkos::ScopeGuard kokkos(argc, argv);
  Kokkos::Tools::Experimental::set_allocate_data_callback(count_allocation);
  std::vector<row> rows;
  try {
    // The count sees allocations at all (a Kokkos without the tools interface would not).
    if (bytes_allocated_by([] { const Kokkos::View<char*> probe("probe", 4096); }) < 4096)
      throw std::runtime_error("ndzip-fused-bench: Kokkos reports no allocations to count");
    ndzip::with_backend(opts.backend, [&](auto exec) { run_all(exec, opts, rows); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::printf("%-22s %9s %9s %11s %9s %9s %8s %12s\n", "field", "validate", "fused",
              "decompress", "sum", "two-step", "ratio", "fused alloc");
  for (const row& r : rows)
    std::printf("%-22s %9.5f %9.5f %11.5f %9.5f %9.5f %8.3f %10llu B\n", r.field.c_str(),
                r.validate_s, r.fused_s, r.decompress_s, r.sum_s, r.two_step_s,
                r.fused_s / r.two_step_s, static_cast<unsigned long long>(r.fused_allocated));
  std::printf("seconds, medians; ratio: fused / two-step (decompress, then sum)\n");
  return 0;
}
