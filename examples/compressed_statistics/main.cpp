// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Statistics of a compressed 3-D field computed straight from its stream: the minimum and
// maximum, the mean and a histogram of an N^3 float field held as an ndzip::compressed_array,
// each kernel decoding the field a hypercube at a time in team scratch, with no decompressed
// copy. Then the same statistics of the field decompressed into a View, by plain Kokkos
// kernels, which must agree: minimum, maximum and histogram exactly, the mean within the
// rounding of a sum in another order. Exit status 1 if they do not.
// Usage: ndzip-compressed-statistics [N]  (default 128)

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <ndzip/compressed_array.hpp>
#include <ndzip/ndzip.hpp>

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;
using field_type = ndzip::compressed_array<float, 3, exec_space>;
using index_type = field_type::index_type;
using min_max = Kokkos::MinMaxScalar<float>;
constexpr int bins = 16;
using histogram = Kokkos::View<std::uint64_t[bins], exec_space::memory_space>;

struct statistics {
  min_max range;
  double sum, magnitude;  // of the values and of their absolute values
  Kokkos::View<std::uint64_t[bins], Kokkos::HostSpace> counts{"counts"};
};

// The bin of `v` in [low, high], bins of equal width (high itself in the last).
KOKKOS_INLINE_FUNCTION int bin_of(float v, float low, float high) {
  const int b = high > low ? static_cast<int>((v - low) / (high - low) * bins) : 0;
  return b < 0 ? 0 : b >= bins ? bins - 1 : b;
}

// From the compressed field: one kernel per statistic, each decoding the stream.
statistics compressed_statistics(const exec_space& exec, const field_type& field) {
  statistics s;
  field.reduce(
      exec,
      KOKKOS_LAMBDA(const index_type&, float v, min_max& partial) {
        if (v < partial.min_val) partial.min_val = v;
        if (v > partial.max_val) partial.max_val = v;
      },
      Kokkos::MinMax<float>(s.range));
  field.reduce(
      exec, KOKKOS_LAMBDA(const index_type&, float v, double& partial) { partial += v; },
      Kokkos::Sum<double>(s.sum));
  field.reduce(
      exec,
      KOKKOS_LAMBDA(const index_type&, float v, double& partial) { partial += std::fabs(v); },
      Kokkos::Sum<double>(s.magnitude));
  const histogram counts("histogram");
  const float low = s.range.min_val, high = s.range.max_val;
  field.for_each_element(exec, KOKKOS_LAMBDA(const index_type&, float v) {
    Kokkos::atomic_increment(&counts(bin_of(v, low, high)));
  });
  Kokkos::deep_copy(exec, s.counts, counts);
  exec.fence();
  return s;
}

// From the decompressed field, by plain Kokkos kernels over the View.
statistics view_statistics(const exec_space& exec, const Kokkos::View<float***>& values) {
  statistics s;
  const auto all = Kokkos::RangePolicy<exec_space>(exec, 0, values.size());
  const float* v = values.data();
  Kokkos::parallel_reduce(
      all,
      KOKKOS_LAMBDA(std::size_t i, min_max& partial) {
        if (v[i] < partial.min_val) partial.min_val = v[i];
        if (v[i] > partial.max_val) partial.max_val = v[i];
      },
      Kokkos::MinMax<float>(s.range));
  Kokkos::parallel_reduce(
      all, KOKKOS_LAMBDA(std::size_t i, double& partial) { partial += v[i]; }, s.sum);
  Kokkos::parallel_reduce(
      all, KOKKOS_LAMBDA(std::size_t i, double& partial) { partial += std::fabs(v[i]); },
      s.magnitude);
  const histogram counts("histogram");
  const float low = s.range.min_val, high = s.range.max_val;
  Kokkos::parallel_for(
      all, KOKKOS_LAMBDA(std::size_t i) {
        Kokkos::atomic_increment(&counts(bin_of(v[i], low, high)));
      });
  Kokkos::deep_copy(exec, s.counts, counts);
  exec.fence();
  return s;
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const int n = argc > 1 ? std::atoi(argv[1]) : 128;
  if (n < 1) {
    std::fprintf(stderr, "usage: %s [N], N >= 1\n", argv[0]);
    return 2;
  }
  const exec_space exec;
  Kokkos::View<float***> values("values", n, n, n);
  Kokkos::parallel_for(
      "fill", Kokkos::MDRangePolicy<exec_space, Kokkos::Rank<3>>(exec, {0, 0, 0}, {n, n, n}),
      KOKKOS_LAMBDA(int z, int y, int x) {
        values(z, y, x) = static_cast<float>(std::sin(0.07 * x) * std::cos(0.05 * y) + 0.01 * z);
      });

  const field_type field(exec, values);  // compressed; `values` could be released here
  const statistics from_stream = compressed_statistics(exec, field);

  Kokkos::View<float***> restored("restored", n, n, n);
  ndzip::decompress(exec, field.stream(), restored);
  const statistics from_view = view_statistics(exec, restored);

  const double count = static_cast<double>(values.size());
  // Two sums of the same values in different orders differ by at most 2 (count - 1) u sum |v|
  // (u = epsilon / 2, the unit roundoff of double).
  const double tolerance = count * std::numeric_limits<double>::epsilon() * from_view.magnitude;
  bool agree = from_stream.range.min_val == from_view.range.min_val &&
               from_stream.range.max_val == from_view.range.max_val &&
               std::fabs(from_stream.sum - from_view.sum) <= tolerance;
  for (int b = 0; b < bins; ++b) agree = agree && from_stream.counts(b) == from_view.counts(b);

  std::printf("%d^3 floats on %s, %zu -> %zu bytes held (%.2fx smaller)\n", n, exec_space::name(),
              values.size() * sizeof(float), field.stream_bytes(),
              static_cast<double>(values.size() * sizeof(float)) / field.stream_bytes());
  std::printf("from the stream:        min %.7g  max %.7g  mean %.9g\n", from_stream.range.min_val,
              from_stream.range.max_val, from_stream.sum / count);
  std::printf("from the decompression: min %.7g  max %.7g  mean %.9g\n", from_view.range.min_val,
              from_view.range.max_val, from_view.sum / count);
  std::printf("histogram (%d bins from min to max):", bins);
  for (int b = 0; b < bins; ++b)
    std::printf(" %llu", static_cast<unsigned long long>(from_stream.counts(b)));
  std::printf("\n%s\n", agree ? "statistics agree"
                              : "MISMATCH between the stream's and the decompression's statistics");
  return agree ? 0 : 1;
}
