// ndzip-bench: throughput of the codec next to Kokkos::deep_copy of the same bytes on the same
// backend. Data is kept in the backend's memory (device-resident); allocation and host-device
// copies are outside the timed region. Every round trip is verified bit for bit, and every
// backend's stream is compared byte for byte with the first backend's.
//
//   ndzip-bench --manifest FILE [-b BACKEND]...    datasets listed as `file;float|double;dims`
//   ndzip-bench --synthetic [-b BACKEND]... [--scale K]
//
// The synthetic set is a smooth field with noise in the low mantissa bits (8 bits for float,
// 24 for double) in the shapes 3-D float 512^3, 2-D float 8192^2, 1-D float 2^27, 1-D double
// 2^27 and 3-D double 256^3; --scale K divides the slowest extent by K (for small machines).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <type_traits>
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

struct row_label {
  std::string name;
  std::string backend;
};

// The first backend's stream of the current input, which every other backend must reproduce.
struct reference_stream {
  bool present = false;
  std::vector<std::byte> bytes;
};

// Measures and verifies one input (already in the backend's memory) and prints its row.
// Returns the number of failures (round trip not bit-exact, or a stream different from the
// reference backend's).
template <class T, int Dims, class ExecSpace, class View>
int measure_input(const ExecSpace& exec, const row_label& label, const ndzip::extent<Dims>& grid,
                  const View& values, reference_stream& reference) {
  using memory_space = typename ExecSpace::memory_space;
  const std::size_t n = grid.size();
  Kokkos::View<T*, memory_space> restored(Kokkos::view_alloc(Kokkos::WithoutInitializing, "restored"), n);
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

  const auto used = Kokkos::subview(stream, std::make_pair(std::size_t{0}, size));
  const auto host_stream = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, used);
  std::vector<std::byte> bytes(host_stream.data(), host_stream.data() + size);
  std::string same = "ref";
  if (reference.present) {
    same = bytes == reference.bytes ? "yes" : "NO";
  } else {
    reference.present = true;
    reference.bytes = std::move(bytes);
  }

  const double input_bytes = double(n) * sizeof(T);
  const double ratio = double(size) / input_bytes;
  const double c = input_bytes / 1e9 / compress.median_s, d = input_bytes / 1e9 / decompress.median_s;
  const double copy_gbps = input_bytes / 1e9 / copy.median_s;
  // A codec moves about (1 + ratio) bytes per input byte; deep_copy moves 2.
  const double ceiling = 2 * copy_gbps / (1 + ratio);
  std::string dims;
  for (int a = 0; a < Dims; ++a) dims += (a ? "x" : "") + std::to_string(grid[a]);
  const bool verified = mismatches == 0;
  std::printf("%-22s %-7s %-6s %-14s %7.4f %9.2f %6.1f%% %9.2f %6.1f%% %9.2f %5d %-8s %s\n",
              label.name.c_str(), label.backend.c_str(), sizeof(T) == 4 ? "float" : "double",
              dims.c_str(), ratio, c, 100 * c / ceiling, d, 100 * d / ceiling, copy_gbps,
              compress.runs, verified ? "yes" : "NO", same.c_str());
  std::fflush(stdout);
  return (verified ? 0 : 1) + (same == "NO" ? 1 : 0);
}

// Calls f(T{}, std::integral_constant<int, Dims>{}, extent) for a type and extents known at run time.
template <class F>
void with_shape(bool is_double, const std::vector<std::size_t>& e, F&& f) {
  auto with_type = [&](auto tag) {
    if (e.size() == 1) f(tag, std::integral_constant<int, 1>{}, ndzip::extent<1>(e[0]));
    if (e.size() == 2) f(tag, std::integral_constant<int, 2>{}, ndzip::extent<2>(e[0], e[1]));
    if (e.size() == 3) f(tag, std::integral_constant<int, 3>{}, ndzip::extent<3>(e[0], e[1], e[2]));
  };
  if (is_double)
    with_type(double{});
  else
    with_type(float{});
}

struct dataset {
  std::string name;
  std::string path;
  bool is_double;
  std::vector<std::size_t> extents;
};

// Reads a manifest in the ndzip benchmark form: `file;float|double;dims slowest first`, paths
// relative to the manifest.
std::vector<dataset> read_manifest(const std::string& manifest) {
  std::ifstream in(manifest);
  if (!in) throw std::runtime_error("cannot read manifest '" + manifest + "'");
  const auto slash = manifest.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : manifest.substr(0, slash);
  std::vector<dataset> sets;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream fields(line);
    std::string file, type, dims;
    std::getline(fields, file, ';');
    std::getline(fields, type, ';');
    std::getline(fields, dims, ';');
    dataset d{file, dir + "/" + file, type == "double", {}};
    std::stringstream extents(dims);
    for (std::size_t x; extents >> x;) d.extents.push_back(x);
    if ((type != "float" && type != "double") || d.extents.empty() || d.extents.size() > 3)
      throw std::runtime_error(manifest + ":" + std::to_string(number) + ": expected " +
                               "`file;float|double;N0 [N1 [N2]]`, got `" + line + "`");
    sets.push_back(std::move(d));
  }
  return sets;
}

template <class T>
std::vector<T> read_values(const dataset& d, std::size_t count) {
  std::ifstream in(d.path, std::ios::binary);
  std::vector<T> values(count);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(T)));
  if (!in || in.peek() != std::char_traits<char>::eof())
    throw std::runtime_error("'" + d.path + "' does not hold exactly " + std::to_string(count) +
                             " values of its type");
  return values;
}

int run_manifest(const std::string& manifest, const std::vector<std::string>& backends) {
  int failures = 0;
  for (const auto& d : read_manifest(manifest)) {
    reference_stream reference;
    with_shape(d.is_double, d.extents, [&](auto tag, auto dims, const auto& grid) {
      using T = decltype(tag);
      const auto host = read_values<T>(d, grid.size());
      for (const auto& b : backends)
        ndzip::with_backend(b, [&](auto exec) {
          using memory_space = typename decltype(exec)::memory_space;
          const Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host_view(
              host.data(), host.size());
          const auto values = Kokkos::create_mirror_view_and_copy(memory_space{}, host_view);
          failures += measure_input<T, decltype(dims)::value>(exec, {d.name, b}, grid, values,
                                                             reference);
        });
    });
  }
  return failures;
}

int run_synthetic(const std::vector<std::string>& backends, std::size_t scale) {
  int failures = 0;
  for (const auto& s : synthetic_shapes) {
    auto e = s.extents;
    e[0] = std::max<std::size_t>(1, e[0] / scale);
    reference_stream reference;
    with_shape(s.is_double, e, [&](auto tag, auto dims, const auto& grid) {
      using T = decltype(tag);
      for (const auto& b : backends)
        ndzip::with_backend(b, [&](auto exec) {
          using ExecSpace = decltype(exec);
          Kokkos::View<T*, typename ExecSpace::memory_space> values(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, "values"), grid.size());
          fill_synthetic<T, decltype(dims)::value>(exec, values, grid);
          failures += measure_input<T, decltype(dims)::value>(exec, {"synthetic", b}, grid,
                                                             values, reference);
        });
    });
  }
  return failures;
}

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: ndzip-bench --manifest FILE [-b BACKEND]...\n"
               "       ndzip-bench --synthetic [-b BACKEND]... [--scale K]\n"
               "  --manifest FILE  datasets as `file;float|double;dims slowest first` lines\n"
               "  --synthetic      large smooth fields with noisy low mantissa bits\n"
               "  --scale K        divide the synthetic fields' slowest extent by K\n"
               "  -b BACKEND       backend (repeatable; default: the default backend). The\n"
               "                   first one's streams are the reference the others must match\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> backends;
  std::string manifest;
  bool synthetic = false;
  std::size_t scale = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--synthetic") {
      synthetic = true;
    } else if (arg == "-b" && has_value) {
      backends.push_back(argv[++i]);
    } else if (arg == "--manifest" && has_value) {
      manifest = argv[++i];
    } else if (arg == "--scale" && has_value) {
      scale = std::max<std::size_t>(1, std::strtoull(argv[++i], nullptr, 10));
    } else if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (synthetic == !manifest.empty()) {
    usage(stderr);
    return 2;
  }
  Kokkos::ScopeGuard kokkos;
  if (backends.empty()) backends = {ndzip::default_backend()};
  std::printf("ndzip-bench: GB/s of uncompressed bytes, data resident in the backend's memory, "
              "median of >= 5 runs lasting >= 1 s;\n%% = share of the ceiling 2*deep_copy/(1+ratio) "
              "(bytes a codec must move vs. what deep_copy moves); same = stream identical to %s's\n",
              backends.front().c_str());
  std::printf("%-22s %-7s %-6s %-14s %7s %9s %7s %9s %7s %9s %5s %-8s %s\n", "input", "backend",
              "type", "extents", "ratio", "compress", "", "decomp", "", "deep_copy", "runs",
              "verified", "same");
  int failures = 0;
  try {
    failures = synthetic ? run_synthetic(backends, scale) : run_manifest(manifest, backends);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ndzip-bench: %s\n", e.what());
    return 1;
  }
  if (failures != 0) std::fprintf(stderr, "ndzip-bench: %d failed checks\n", failures);
  return failures == 0 ? 0 : 1;
}
