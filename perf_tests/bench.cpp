// ndzip-bench: throughput of the codec next to Kokkos::deep_copy of the same bytes on the same
// backend. Data is kept in the backend's memory (device-resident); allocation and host-device
// copies are outside the timed region. Every round trip is verified bit for bit, and every
// backend's stream is compared byte for byte with the first backend's.
//
// Peer codecs (zstd, LZ4, Blosc, fpzip, zfp) run single-threaded on the host beside ndzip, on the
// same data. See usage() for the modes and options.
//
// The synthetic set is a smooth field with noise in the low mantissa bits (8 bits for float,
// 24 for double) in the shapes 3-D float 512^3, 2-D float 8192^2, 1-D float 2^27, 1-D double
// 2^27 and 3-D double 256^3; --scale K divides the slowest extent by K (for small machines).

#include <algorithm>
#include <cstdio>
#include <memory>
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

#include "bench_report.hpp"
#include "peers.hpp"
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

// The first backend's stream of the current input, which every other backend must reproduce.
struct reference_stream {
  bool present = false;
  std::vector<std::byte> bytes;
};

struct input_label {
  std::string mode;     // dataset, synthetic or sweep
  std::string dataset;  // file name or "synthetic"
};

// Measures and verifies ndzip on one input already in the backend's memory.
// With `with_copies`, each timed run also copies its input from the host and its output back
// (the values and the stream for compression, the stream and the values for decompression).
template <class T, int Dims, class ExecSpace, class View, class HostView>
ndzip::perf::result_row measure_ndzip(const ExecSpace& exec, const std::string& backend,
                                      const input_label& label, const ndzip::extent<Dims>& grid,
                                      const View& values, const HostView& host_values,
                                      bool with_copies, reference_stream& reference) {
  using memory_space = typename ExecSpace::memory_space;
  const std::size_t n = grid.size();
  Kokkos::View<T*, memory_space> restored(Kokkos::view_alloc(Kokkos::WithoutInitializing, "restored"), n);
  ndzip::compressor<T, Dims, ExecSpace> codec(exec, grid);
  Kokkos::View<std::byte*, memory_space> stream(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream"),
                                                codec.size_bound());
  exec.fence();

  const auto host_stream_buffer = Kokkos::create_mirror_view(stream);
  const auto host_restored = Kokkos::create_mirror_view(restored);
  // Copies between the host and the backend's memory when timing them (no-ops for host memory).
  const auto copy_in = [&](const auto& to, const auto& from, std::size_t n) {
    if (with_copies)
      Kokkos::deep_copy(exec, Kokkos::subview(to, std::make_pair(std::size_t{0}, n)),
                        Kokkos::subview(from, std::make_pair(std::size_t{0}, n)));
  };
  std::size_t size = 0;
  const auto compress = ndzip::perf::measure([&] {
    copy_in(values, host_values, n);
    size = codec.compress_raw(values.data(), stream.data(), stream.size());
    copy_in(host_stream_buffer, stream, size);
    exec.fence();
  });
  const auto decompress = ndzip::perf::measure([&] {
    copy_in(stream, host_stream_buffer, size);
    codec.decompress_raw(stream.data(), size, restored.data());
    copy_in(host_restored, restored, n);
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

  ndzip::perf::result_row row{label.mode, label.dataset, sizeof(T) == 4 ? "float" : "double",
                              ndzip::to_string(grid), backend, "ndzip", ExecSpace().concurrency()};
  row.bytes = double(n) * sizeof(T);
  row.compressed_bytes = double(size);
  row.compress_s = compress.median_s;
  row.decompress_s = decompress.median_s;
  row.deep_copy_s = copy.median_s;
  row.compress_spread = compress.spread();
  row.decompress_spread = decompress.spread();
  row.timing = with_copies ? "with-copies" : "resident";
  row.verified = mismatches == 0;
  row.same_stream = same;
  return row;
}

// Runs every peer codec on host data, single-threaded, against a one-thread memcpy of the same
// buffer as the copy figure.
template <int Dims>
void measure_peers(ndzip::perf::report& report, const input_label& label,
                   const ndzip::perf::peer_input& in, const ndzip::extent<Dims>& grid,
                   const std::vector<std::unique_ptr<ndzip::perf::peer_codec>>& peers) {
  if (peers.empty()) return;
  std::vector<char> restored(in.bytes);
  const auto copy = ndzip::perf::measure([&] { std::memcpy(restored.data(), in.data, in.bytes); });
  for (const auto& peer : peers) {
    try {
      std::vector<std::byte> stream;
      const auto compress = ndzip::perf::measure([&] { peer->compress(in, stream); });
      const auto decompress =
          ndzip::perf::measure([&] { peer->decompress(in, stream, restored.data()); });
      ndzip::perf::result_row row{label.mode, label.dataset, in.is_double ? "double" : "float",
                                  ndzip::to_string(grid), "host", peer->name(), 1};
      row.bytes = double(in.bytes);
      row.compressed_bytes = double(stream.size());
      row.compress_s = compress.median_s;
      row.decompress_s = decompress.median_s;
      row.deep_copy_s = copy.median_s;
      row.compress_spread = compress.spread();
      row.decompress_spread = decompress.spread();
      row.verified = std::memcmp(restored.data(), in.data, in.bytes) == 0;
      row.same_stream = "-";
      report.add(std::move(row));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ndzip-bench: %s on %s: %s (row skipped)\n", peer->name().c_str(),
                   label.dataset.c_str(), e.what());
    }
  }
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

struct options {
  std::vector<std::string> backends;
  std::string manifest;
  bool synthetic = false;
  bool sweep = false;
  int peers = -1;  // -1: only with --manifest; 0: never (--no-peers); 1: always (--peers)
  std::size_t scale = 1;
  std::size_t max_mib = 256;
  std::string csv, json;
  bool append = false;
  bool with_copies = false;
};

// Runs ndzip on every backend and then the peers on host values of one input.
template <class T, int Dims>
void run_input(ndzip::perf::report& report, const options& opt, const input_label& label,
               const ndzip::extent<Dims>& grid, const T* host_values,
               const std::vector<std::unique_ptr<ndzip::perf::peer_codec>>& peers) {
  reference_stream reference;
  for (const auto& b : opt.backends)
    ndzip::with_backend(b, [&](auto exec) {
      using memory_space = typename decltype(exec)::memory_space;
      const Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host_view(
          host_values, grid.size());
      // A writable copy in the backend's memory (--with-copies refills it in every run).
      Kokkos::View<T*, memory_space> values(Kokkos::view_alloc(Kokkos::WithoutInitializing, "values"),
                                            grid.size());
      Kokkos::deep_copy(values, host_view);
      report.add(measure_ndzip<T, Dims>(exec, b, label, grid, values, host_view, opt.with_copies,
                                        reference));
    });
  std::vector<std::size_t> extents(grid.dimensions);
  for (int a = 0; a < Dims; ++a) extents[a] = grid[a];
  measure_peers(report, label, {host_values, grid.size() * sizeof(T), sizeof(T) == 8, extents},
                grid, peers);
}

// Generates a synthetic field on the host (with the generator the backends use) and runs it.
template <class T, int Dims>
void run_synthetic_input(ndzip::perf::report& report, const options& opt, const input_label& label,
                         const ndzip::extent<Dims>& grid,
                         const std::vector<std::unique_ptr<ndzip::perf::peer_codec>>& peers) {
  Kokkos::View<T*, Kokkos::HostSpace> host(Kokkos::view_alloc(Kokkos::WithoutInitializing, "synthetic"),
                                           grid.size());
  fill_synthetic<T, Dims>(Kokkos::DefaultHostExecutionSpace(), host, grid);
  Kokkos::DefaultHostExecutionSpace().fence();
  run_input<T, Dims>(report, opt, label, grid, host.data(), peers);
}

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: ndzip-bench (--manifest FILE | --synthetic | --sweep) [-b BACKEND]...\n"
               "                   [--peers | --no-peers] [--scale K] [--max-mib M]\n"
               "                   [--csv FILE [--append]] [--json FILE] [--with-copies]\n"
               "  --manifest FILE  datasets as `file;float|double;dims slowest first` lines, paths\n"
               "                   relative to the manifest; adds aggregate rows (total bytes /\n"
               "                   total time) per backend and codec\n"
               "  --synthetic      smooth fields with noisy low mantissa bits: float 512^3, 8192^2,\n"
               "                   2^27, double 2^27, 256^3 (--scale K divides the slowest extent)\n"
               "  --sweep          3-D float synthetic fields of 1, 4, 16, ... MiB up to --max-mib\n"
               "                   (default 256); run with several OMP_NUM_THREADS for thread scaling\n"
               "  -b BACKEND       backend (repeatable; default: the default backend). The first\n"
               "                   one's streams are the reference the others must reproduce\n"
               "  --peers          run the CPU peer codecs (zstd, lz4, blosc, fpzip, zfp) on every\n"
               "                   input (default: with --manifest only); --no-peers: never\n"
               "  --csv FILE       write all rows as CSV (--append: add to an existing file)\n"
               "  --json FILE      write all rows as JSON\n"
               "  --with-copies    time host-to-device copies of the input and device-to-host\n"
               "                   copies of the output too (default: device-resident data)\n"
               "Exit status 1 if any round trip is not bit-exact or any backend's stream differs.\n");
}

options parse(int argc, char** argv) {
  options opt;
  int modes = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    auto number = [&]() -> std::size_t {
      const std::string v = value();
      char* end = nullptr;
      const auto n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n == 0)
        throw std::invalid_argument(arg + " needs a positive number, got '" + v + "'");
      return n;
    };
    if (arg == "--manifest") {
      opt.manifest = value();
      ++modes;
    } else if (arg == "--synthetic") {
      opt.synthetic = true;
      ++modes;
    } else if (arg == "--sweep") {
      opt.sweep = true;
      ++modes;
    } else if (arg == "-b") {
      opt.backends.push_back(value());
    } else if (arg == "--no-peers") {
      opt.peers = 0;
    } else if (arg == "--peers") {
      opt.peers = 1;
    } else if (arg == "--scale") {
      opt.scale = number();
    } else if (arg == "--max-mib") {
      opt.max_mib = number();
    } else if (arg == "--csv") {
      opt.csv = value();
    } else if (arg == "--append") {
      opt.append = true;
    } else if (arg == "--with-copies") {
      opt.with_copies = true;
    } else if (arg == "--json") {
      opt.json = value();
    } else if (arg == "-h" || arg == "--help") {
      usage(stdout);
      std::exit(0);
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "'");
    }
  }
  if (modes != 1) throw std::invalid_argument("give exactly one of --manifest, --synthetic, --sweep");
  return opt;
}

void run(ndzip::perf::report& report, const options& opt) {
  std::vector<std::string> skipped;
  std::vector<std::unique_ptr<ndzip::perf::peer_codec>> peers;
  if (opt.peers == 1 || (opt.peers == -1 && !opt.manifest.empty()))
    peers = ndzip::perf::available_peers(skipped);
  for (const auto& s : skipped) std::fprintf(stderr, "ndzip-bench: peer skipped: %s\n", s.c_str());

  if (!opt.manifest.empty()) {
    for (const auto& d : read_manifest(opt.manifest))
      with_shape(d.is_double, d.extents, [&](auto tag, auto dims, const auto& grid) {
        using T = decltype(tag);
        const auto host = read_values<T>(d, grid.size());
        run_input<T, decltype(dims)::value>(report, opt, {"dataset", d.name}, grid, host.data(),
                                            peers);
      });
    report.add_aggregates();
  } else if (opt.synthetic) {
    for (const auto& s : synthetic_shapes) {
      auto e = s.extents;
      e[0] = std::max<std::size_t>(1, e[0] / opt.scale);
      with_shape(s.is_double, e, [&](auto tag, auto dims, const auto& grid) {
        run_synthetic_input<decltype(tag), decltype(dims)::value>(report, opt, {"synthetic", "synthetic"},
                                                                  grid, peers);
      });
    }
  } else {
    // 3-D float cubes of 1, 4, 16, ... MiB: 64 x 64 x 64 is 1 MiB.
    for (std::size_t mib = 1; mib <= opt.max_mib; mib *= 4) {
      const ndzip::extent<3> grid(64 * mib, std::size_t{64}, std::size_t{64});
      run_synthetic_input<float, 3>(report, opt, {"sweep", "synthetic-" + std::to_string(mib) + "MiB"},
                                    grid, peers);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  try {
    opt = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ndzip-bench: %s\n", e.what());
    usage(stderr);
    return 2;
  }
  Kokkos::ScopeGuard kokkos;
  if (opt.backends.empty()) opt.backends = {ndzip::default_backend()};
  ndzip::perf::report report(
      "ndzip-bench: GB/s of uncompressed bytes, data resident in the backend's memory, median of "
      ">= 5 runs lasting >= 1 s (spread = (slowest - fastest) / median, compress/decompress); "
      "% = share of the ceiling 2*deep_copy/(1+ratio); peers run "
      "single-threaded on the host beside a one-thread memcpy; same = stream identical to " +
      opt.backends.front() + "'s");
  report.print_header();
  try {
    run(report, opt);
    if (!opt.csv.empty()) report.write_csv(opt.csv, opt.append);
    if (!opt.json.empty()) report.write_json(opt.json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ndzip-bench: %s\n", e.what());
    return 1;
  }
  int failures = 0;
  for (const auto& r : report.rows()) failures += !r.verified || r.same_stream == "NO";
  if (failures != 0) std::fprintf(stderr, "ndzip-bench: %d rows failed verification\n", failures);
  return failures == 0 ? 0 : 1;
}
