// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip-demo: the main job on an embedded default input. Generates a smooth 3-D float field
// (64 MiB by default), compresses and decompresses it on every enabled backend (the default
// one first), verifies the round trip bit for bit, and prints ratio and throughput next to a
// single-thread memcpy of the same buffer measured in the same run.

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <ndzip/ndzip.hpp>

#include "positive_decimal.hpp"
#include "timing.hpp"

namespace {

struct options {
  std::size_t side = 256;  // 256^3 floats = 64 MiB
  std::vector<std::string> backends;
};

using ndzip_perf::positive_decimal;

// A smooth field with a little structure on every scale, like a simulation variable.
void fill_field(float* field, std::size_t side) {
  for (std::size_t z = 0; z < side; ++z)
    for (std::size_t y = 0; y < side; ++y)
      for (std::size_t x = 0; x < side; ++x) {
        const double u = double(x) / side, v = double(y) / side, w = double(z) / side;
        field[(z * side + y) * side + x] = static_cast<float>(
            std::sin(6.0 * u + 2.0 * w) * std::cos(4.0 * v) + 0.5 * std::exp(-8.0 * (u - 0.4) * (u - 0.4)) +
            0.25 * w * v);
      }
}

template <class ExecSpace>
int run_backend(const ExecSpace& exec, const std::string& name,
                const Kokkos::View<const float***, Kokkos::HostSpace>& host_field) {
  using memory_space = typename ExecSpace::memory_space;
  const auto field = Kokkos::create_mirror_view_and_copy(memory_space{}, host_field);
  const auto grid = ndzip::grid_of(field);
  ndzip::compressor<float, 3, ExecSpace> codec(exec, grid);
  Kokkos::View<std::byte*, memory_space> stream("stream", codec.size_bound());
  Kokkos::View<float***, memory_space> restored("restored", grid[0], grid[1], grid[2]);

  std::size_t stream_size = 0;
  const auto compress = ndzip::perf::measure([&] {
    stream_size = codec.compress(field, stream);
    exec.fence();
  });
  const auto decompress = ndzip::perf::measure([&] {
    codec.decompress(Kokkos::subview(stream, std::make_pair(std::size_t{0}, stream_size)), restored);
  });

  const auto restored_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, restored);
  const std::size_t bytes = host_field.size() * sizeof(float);
  const bool identical = std::memcmp(restored_host.data(), host_field.data(), bytes) == 0;
  const double gb = bytes / 1e9;
  std::printf("%-8s %7d %8.4f %15.3f %17.3f %9s\n", name.c_str(), ExecSpace().concurrency(),
              double(stream_size) / bytes, gb / compress.median_s, gb / decompress.median_s,
              identical ? "yes" : "NO");
  if (!identical) std::fprintf(stderr, "ndzip-demo: %s: round trip is NOT bit-exact\n", name.c_str());
  return identical ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  CLI::App app("ndzip-demo: ratio and throughput of ndzip on every backend, next to memcpy",
               "ndzip-demo");
  app.get_formatter()->column_width(24);  // one line per option within 100 columns
  app.add_option("--side", opt.side, "edge length of the cubic float field (256: 64 MiB)")
      ->type_name("N")
      ->transform(positive_decimal)
      ->capture_default_str();
  // One value per -b, so that a stray word is an error rather than a backend.
  app.add_option("-b", opt.backends,
                 "backend to run, repeatable (default: all enabled, the default one first)")
      ->type_name("BACKEND")
      ->allow_extra_args(false);
  app.footer(
      "Throughput is uncompressed bytes per second, data resident in the backend's memory,\n"
      "median of >= 5 runs lasting >= 1 s; OpenMP uses OMP_NUM_THREADS.\n"
      "Exit status 1 if a round trip is not bit-exact or a backend fails, 2 for a usage error.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // 2 for a usage error, as before CLI11, whose own codes differ by error.
    return app.exit(e) == 0 ? 0 : 2;
  }

  Kokkos::ScopeGuard kokkos;
  if (opt.backends.empty()) opt.backends = ndzip::enabled_backends();
  int failures = 0;
  {
    const std::size_t n = opt.side;
    Kokkos::View<float***, Kokkos::HostSpace> field("field", n, n, n);
    fill_field(field.data(), n);
    const std::size_t bytes = field.size() * sizeof(float);

    std::vector<char> copy(bytes);
    const auto memcpy_time = ndzip::perf::measure([&] { std::memcpy(copy.data(), field.data(), bytes); });

    std::printf("ndzip-demo: smooth 3-D float field %zux%zux%zu (%.1f MiB), default backend %s\n", n,
                n, n, bytes / 1048576.0, ndzip::default_backend().c_str());
    std::printf("memcpy of the same buffer (1 thread): %.3f GB/s\n", bytes / 1e9 / memcpy_time.median_s);
    std::printf("%-8s %7s %8s %15s %17s %9s\n", "backend", "concur.", "ratio", "compress GB/s",
                "decompress GB/s", "verified");
    for (const auto& name : opt.backends) {
      try {
        ndzip::with_backend(name, [&](auto exec) { failures += run_backend(exec, name, field); });
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ndzip-demo: %s\n", e.what());
        ++failures;
      }
    }
    std::printf("ratio = compressed bytes / input bytes; GB/s of uncompressed data, median of "
                ">= 5 runs (>= 1 s)\n");
  }
  return failures == 0 ? 0 : 1;
}
