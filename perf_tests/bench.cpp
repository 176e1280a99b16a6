// ndzip-bench: throughput of the codec on large synthetic fields, next to Kokkos::deep_copy of
// the same bytes on the same backend. Data is generated and kept in the backend's memory
// (device-resident); allocation and host-device copies are outside the timed region.
//
//   ndzip-bench --synthetic [-b BACKEND]... [--scale K]
//
// The synthetic set is a smooth field with noise in the low mantissa bits (8 bits for float,
// 24 for double) in the shapes 3-D float 512^3, 2-D float 8192^2, 1-D float 2^27, 1-D double
// 2^27 and 3-D double 256^3; --scale K divides the slowest extent by K (for small machines).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>
#include <ndzip/ndzip.hpp>

#include "timing.hpp"

namespace {

struct shape {
  bool is_double;
  std::vector<std::size_t> extents;  // slowest first
};

const std::vector<shape> synthetic_shapes = {
    {false, {512, 512, 512}},
    {false, {8192, 8192}},
    {false, {std::size_t{1} << 27}},
    {true, {std::size_t{1} << 27}},
    {true, {256, 256, 256}},
};

// SplitMix64 output k for a fixed seed: the noise source.
KOKKOS_INLINE_FUNCTION std::uint64_t noise(std::uint64_t k) {
  std::uint64_t z = 0x5eed + (k + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A smooth field over the unit cube plus `noise_bits` random low mantissa bits, generated on
// the backend (element k of a C-order grid with the given extents).
template <class T, int Dims, class ExecSpace, class View>
void fill_synthetic(const ExecSpace& exec, const View& values, const ndzip::extent<Dims>& grid) {
  using bits = typename ndzip::profile<T, Dims>::bits_type;
  constexpr int noise_bits = sizeof(T) == 4 ? 8 : 24;
  auto* data = reinterpret_cast<bits*>(values.data());
  Kokkos::parallel_for(
      "ndzip-bench::fill", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                               exec, 0, static_cast<std::int64_t>(grid.size())),
      KOKKOS_LAMBDA(std::int64_t k) {
        std::int64_t rest = k;
        double q = 0;
        for (int a = Dims - 1; a >= 0; --a) {
          const double u = double(rest % static_cast<std::int64_t>(grid[a])) / double(grid[a]);
          rest /= static_cast<std::int64_t>(grid[a]);
          q += (a + 1) * u + 0.5 * u * u;
        }
        const T value = static_cast<T>(1.0 + q + 0.25 * q * q);
        bits b;
        std::memcpy(&b, &value, sizeof b);
        data[k] = b ^ static_cast<bits>(noise(k) & ((bits{1} << noise_bits) - 1));
      });
}

template <class T, int Dims, class ExecSpace>
int run_shape(const ExecSpace& exec, const std::string& backend, const ndzip::extent<Dims>& grid) {
  using memory_space = typename ExecSpace::memory_space;
  const std::size_t n = grid.size();
  Kokkos::View<T*, memory_space> values(Kokkos::view_alloc(Kokkos::WithoutInitializing, "values"), n);
  Kokkos::View<T*, memory_space> restored(Kokkos::view_alloc(Kokkos::WithoutInitializing, "restored"), n);
  fill_synthetic<T, Dims>(exec, values, grid);
  ndzip::compressor<T, Dims, ExecSpace> codec(exec, grid);
  Kokkos::View<std::byte*, memory_space> stream(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream"),
                                                codec.size_bound());
  exec.fence();

  std::size_t size = 0;
  const auto compress = ndzip::perf::measure([&] {
    size = codec.compress_raw(values.data(), stream.data(), stream.size());
    exec.fence();
  });
  const auto decompress = ndzip::perf::measure([&] {
    codec.decompress_raw(stream.data(), size, restored.data());
    exec.fence();
  });
  const auto copy = ndzip::perf::measure([&] {
    Kokkos::deep_copy(exec, restored, values);
    exec.fence();
  });
  // Bit-exact check on the backend (the deep_copy above overwrote `restored`: decode again).
  codec.decompress_raw(stream.data(), size, restored.data());
  using bits = typename ndzip::profile<T, Dims>::bits_type;
  const auto* a = reinterpret_cast<const bits*>(values.data());
  const auto* b = reinterpret_cast<const bits*>(restored.data());
  std::size_t mismatches = 0;
  Kokkos::parallel_reduce(
      "ndzip-bench::verify", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                                 exec, 0, static_cast<std::int64_t>(n)),
      KOKKOS_LAMBDA(std::int64_t k, std::size_t & bad) { bad += a[k] != b[k]; }, mismatches);
  exec.fence();

  const double bytes = double(n) * sizeof(T);
  const double ratio = double(size) / bytes;
  const double c = bytes / 1e9 / compress.median_s, d = bytes / 1e9 / decompress.median_s;
  const double copy_gbps = bytes / 1e9 / copy.median_s;
  // A codec moves about (1 + ratio) bytes per input byte; deep_copy moves 2.
  const double ceiling = 2 * copy_gbps / (1 + ratio);
  std::string dims;
  for (int a = 0; a < Dims; ++a) dims += (a ? "x" : "") + std::to_string(grid[a]);
  std::printf("%-7s %-6s %-14s %7.4f %9.2f %6.1f%% %9.2f %6.1f%% %9.2f %5d %s\n", backend.c_str(),
              sizeof(T) == 4 ? "float" : "double", dims.c_str(), ratio, c, 100 * c / ceiling, d,
              100 * d / ceiling, copy_gbps, compress.runs, mismatches == 0 ? "yes" : "NO");
  return mismatches == 0 ? 0 : 1;
}

template <class ExecSpace>
int run_synthetic(const ExecSpace& exec, const std::string& backend, std::size_t scale) {
  int failures = 0;
  for (const auto& s : synthetic_shapes) {
    auto e = s.extents;
    e[0] = std::max<std::size_t>(1, e[0] / scale);
    auto run = [&](auto tag) {
      using T = decltype(tag);
      if (e.size() == 1) failures += run_shape<T, 1>(exec, backend, ndzip::extent<1>(e[0]));
      if (e.size() == 2) failures += run_shape<T, 2>(exec, backend, ndzip::extent<2>(e[0], e[1]));
      if (e.size() == 3)
        failures += run_shape<T, 3>(exec, backend, ndzip::extent<3>(e[0], e[1], e[2]));
    };
    if (s.is_double)
      run(double{});
    else
      run(float{});
  }
  return failures;
}

void usage(std::FILE* to) {
  std::fprintf(to, "usage: ndzip-bench --synthetic [-b BACKEND]... [--scale K]\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> backends;
  bool synthetic = false;
  std::size_t scale = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--synthetic") {
      synthetic = true;
    } else if ((arg == "-b" || arg == "--scale") && i + 1 < argc) {
      if (arg == "-b")
        backends.push_back(argv[++i]);
      else
        scale = std::max<std::size_t>(1, std::strtoull(argv[++i], nullptr, 10));
    } else if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (!synthetic) {
    usage(stderr);
    return 2;
  }
  Kokkos::ScopeGuard kokkos;
  if (backends.empty()) backends = {ndzip::default_backend()};
  std::printf("ndzip-bench: GB/s of uncompressed bytes, data resident in the backend's memory, "
              "median of >= 5 runs lasting >= 1 s;\n%% = share of the ceiling 2*deep_copy/(1+ratio) "
              "(bytes a codec must move vs. what deep_copy moves)\n");
  std::printf("%-7s %-6s %-14s %7s %9s %7s %9s %7s %9s %5s %s\n", "backend", "type", "extents",
              "ratio", "compress", "", "decomp", "", "deep_copy", "runs", "verified");
  int failures = 0;
  for (const auto& b : backends) {
    try {
      ndzip::with_backend(b, [&](auto exec) { failures += run_synthetic(exec, b, scale); });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ndzip-bench: %s\n", e.what());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
