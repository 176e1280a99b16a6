// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip-bench: throughput of the codec next to Kokkos::deep_copy of the same bytes on the same
// backend. Data is kept in the backend's memory (device-resident); allocation and host-device
// copies are outside the timed region. Every round trip is verified bit for bit, and every
// backend's stream is compared byte for byte with the first backend's.
//
// Peer codecs (zstd, LZ4, Blosc, fpzip, zfp) run single-threaded on the host beside ndzip, on the
// same data. See --help (parse) for the modes and options.
//
// The synthetic set is a smooth field with noise in the low mantissa bits (8 bits for float,
// 24 for double) in the shapes 3-D float 512^3, 2-D float 8192^2, 1-D float 2^27, 1-D double
// 2^27 and 3-D double 256^3; --scale K divides the slowest extent by K (for small machines).

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <ndzip/ndzip.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_inputs.hpp"
#include "bench_report.hpp"
#include "peers.hpp"
#include "positive_decimal.hpp"
#include "timing.hpp"

namespace {

using namespace ndzip::perf::inputs;

// The first backend's stream of the current input, which every other backend must reproduce.
struct reference_stream {
  bool present = false;
  std::vector<std::byte> bytes;
};

struct input_label {
  std::string mode;     // dataset, synthetic or sweep
  std::string dataset;  // file name or "synthetic"
};

// Elements whose bit patterns differ between a and b (n each, in the backend's memory).
template <class ExecSpace, class Bits>
std::size_t count_mismatches(const ExecSpace& exec, const Bits* a, const Bits* b, std::size_t n) {
  std::size_t mismatches = 0;
  Kokkos::parallel_reduce(
      "ndzip-bench::verify",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0,
                                                                      static_cast<std::int64_t>(n)),
      KOKKOS_LAMBDA(std::int64_t k, std::size_t & bad) { bad += a[k] != b[k]; }, mismatches);
  exec.fence();
  return mismatches;
}

// A row's timing columns: the medians and spreads of a codec's two directions, and the median
// of the copy measured beside them.
void set_timings(ndzip::perf::result_row& row, const ndzip::perf::timing& compress,
                 const ndzip::perf::timing& decompress, const ndzip::perf::timing& copy) {
  row.compress_s = compress.median_s;
  row.decompress_s = decompress.median_s;
  row.deep_copy_s = copy.median_s;
  row.compress_spread = compress.spread();
  row.decompress_spread = decompress.spread();
}

// Measures and verifies ndzip on one input already in the backend's memory.
// With `with_copies`, each timed run also copies its input from the host and its output back
// (the values and the stream for compression, the stream and the values for decompression).
// Codec: ndzip::compressor in its default mode (codec "ndzip") or its high-ratio mode
// ("ndzip-high-ratio").
template <class Codec, class View, class HostView>
ndzip::perf::result_row measure_ndzip(const std::string& backend, const input_label& label,
                                      Codec& codec, const View& values, const HostView& host_values,
                                      bool with_copies, reference_stream& reference) {
  using T = typename Codec::value_type;
  using ExecSpace = typename Codec::execution_space;
  constexpr int Dims = Codec::dimensions;
  using memory_space = typename ExecSpace::memory_space;
  const ExecSpace exec = codec.execution_space_instance();
  const ndzip::extent<Dims> grid = codec.grid();
  const bool high_ratio = codec.mode() == ndzip::codec_mode::high_ratio;
  const std::size_t n = grid.size();
  Kokkos::View<T*, memory_space> restored(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "restored"), n);
  Kokkos::View<std::byte*, memory_space> stream(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream"), codec.size_bound());
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
  const std::size_t mismatches =
      count_mismatches(exec, reinterpret_cast<const bits*>(values.data()),
                       reinterpret_cast<const bits*>(restored.data()), n);

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

  ndzip::perf::result_row row{label.mode,
                              label.dataset,
                              sizeof(T) == 4 ? "float" : "double",
                              ndzip::to_string(grid),
                              backend,
                              high_ratio ? "ndzip-high-ratio" : "ndzip",
                              ExecSpace().concurrency()};
  row.bytes = double(n) * sizeof(T);
  row.compressed_bytes = double(size);
  set_timings(row, compress, decompress, copy);
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
      ndzip::perf::result_row row{label.mode,
                                  label.dataset,
                                  in.is_double ? "double" : "float",
                                  ndzip::to_string(grid),
                                  "host",
                                  peer->name(),
                                  1};
      row.bytes = double(in.bytes);
      row.compressed_bytes = double(stream.size());
      set_timings(row, compress, decompress, copy);
      row.verified = std::memcmp(restored.data(), in.data, in.bytes) == 0;
      row.same_stream = "-";
      report.add(std::move(row));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ndzip-bench: %s on %s: %s (row skipped)\n", peer->name().c_str(),
                   label.dataset.c_str(), e.what());
    }
  }
}

// The shape of a manifest row or a synthetic field, for ndzip::visit_shape.
ndzip::array_shape shape_of(bool is_double, const std::vector<std::size_t>& e) {
  const std::vector<std::uint64_t> extents(e.begin(), e.end());
  return ndzip::array_shape(is_double ? ndzip::element_type::float64 : ndzip::element_type::float32,
                            static_cast<int>(extents.size()), extents.data());
}

struct options {
  std::vector<std::string> backends;
  std::string manifest;
  bool synthetic = false;
  bool sweep = false;
  bool high_ratio = false;  // --high-ratio: the high-ratio mode too
  int peers = -1;           // -1: only with --manifest; 0: never (--no-peers); 1: always (--peers)
  std::size_t scale = 1;
  std::size_t max_mib = 256;
  std::size_t ceiling_mib = 0;  // --ceiling-mib: the ceiling's copy size (0: each row's bytes)
  std::string csv, json;
  bool append = false;
  bool with_copies = false;
  bool async = false;
  bool latency = false;
};

// Runs ndzip on every backend and then the peers on host values of one input.
template <class T, int Dims>
void run_input(ndzip::perf::report& report, const options& opt, const input_label& label,
               const ndzip::extent<Dims>& grid, const T* host_values,
               const std::vector<std::unique_ptr<ndzip::perf::peer_codec>>& peers) {
  reference_stream reference, high_ratio_reference;
  for (const auto& b : opt.backends)
    ndzip::with_backend(b, [&](auto exec) {
      using memory_space = typename decltype(exec)::memory_space;
      const Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host_view(
          host_values, grid.size());
      // A writable copy in the backend's memory (--with-copies refills it in every run).
      Kokkos::View<T*, memory_space> values(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "values"), grid.size());
      Kokkos::deep_copy(values, host_view);
      ndzip::compressor<T, Dims, decltype(exec)> codec(exec, grid);
      report.add(measure_ndzip(b, label, codec, values, host_view, opt.with_copies, reference));
      if (opt.high_ratio) {
        ndzip::compressor<T, Dims, decltype(exec)> hr(exec, grid, ndzip::codec_mode::high_ratio);
        report.add(
            measure_ndzip(b, label, hr, values, host_view, opt.with_copies, high_ratio_reference));
      }
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
  Kokkos::View<T*, Kokkos::HostSpace> host(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "synthetic"), grid.size());
  fill_synthetic<T, Dims>(Kokkos::DefaultHostExecutionSpace(), host, grid);
  Kokkos::DefaultHostExecutionSpace().fence();
  run_input<T, Dims>(report, opt, label, grid, host.data(), peers);
}

// One dataset of a corpus, resident in a backend's memory with its compressor and buffers,
// behind an interface that hides its type and rank, for the back-to-back asynchronous runs.
template <class ExecSpace>
struct corpus_entry {
  virtual ~corpus_entry() = default;
  virtual std::size_t bytes() const = 0;
  // Queue a compression writing the stream size to *size (memory the backend can write).
  virtual void compress(std::uint64_t* size) = 0;
  // Queue a decompression of the stream of `size` bytes, writing its outcome to *outcome.
  virtual void decompress(std::size_t size, ndzip::decompress_outcome* outcome) = 0;
  // After the decompression completed: bit-exact?
  virtual bool restored_exactly(const ExecSpace& exec) = 0;
};

template <class T, int Dims, class ExecSpace>
struct typed_corpus_entry : corpus_entry<ExecSpace> {
  using memory_space = typename ExecSpace::memory_space;
  ndzip::compressor<T, Dims, ExecSpace> codec;
  Kokkos::View<T*, memory_space> values, restored;
  Kokkos::View<std::byte*, memory_space> stream;

  typed_corpus_entry(const ExecSpace& exec, const ndzip::extent<Dims>& grid, const T* host,
                     ndzip::codec_mode mode)
      : codec(exec, grid, mode),
        values(Kokkos::view_alloc(Kokkos::WithoutInitializing, "values"), grid.size()),
        restored(Kokkos::view_alloc(Kokkos::WithoutInitializing, "restored"), grid.size()),
        stream(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream"), codec.size_bound()) {
    Kokkos::deep_copy(values, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                  host, grid.size()));
  }
  std::size_t bytes() const override { return values.size() * sizeof(T); }
  void compress(std::uint64_t* size) override {
    codec.compress_raw_async(values.data(), stream.data(), stream.size(), size);
  }
  void decompress(std::size_t size, ndzip::decompress_outcome* outcome) override {
    codec.decompress_raw_async(stream.data(), size, restored.data(), outcome);
  }
  bool restored_exactly(const ExecSpace& exec) override {
    using bits = typename ndzip::profile<T, Dims>::bits_type;
    return count_mismatches(exec, reinterpret_cast<const bits*>(values.data()),
                            reinterpret_cast<const bits*>(restored.data()), values.size()) == 0;
  }
};

// Results (stream sizes, outcomes) that the kernels write where the host reads them after a
// fence: host-pinned memory where Kokkos names it (4.x), so that reading needs no copy, as in
// the asynchronous pattern of docs/API.md; otherwise the space's own memory, copied to the host.
template <class T, class ExecSpace>
struct result_array {
#if KOKKOS_VERSION >= 40000
  using space = std::conditional_t<
      Kokkos::SpaceAccessibility<ExecSpace, Kokkos::SharedHostPinnedSpace>::accessible,
      Kokkos::SharedHostPinnedSpace, typename ExecSpace::memory_space>;
#else
  using space = typename ExecSpace::memory_space;
#endif
  Kokkos::View<T*, space> written;
  typename Kokkos::View<T*, space>::HostMirror host;

  result_array(const std::string& name, std::size_t n)
      : written(name, n), host(Kokkos::create_mirror_view(written)) {}
  // Queues the copy to `host` on exec where one is needed; read `host` after a fence.
  void read(const ExecSpace& exec) const {
    if (host.data() != written.data()) Kokkos::deep_copy(exec, host, written);
  }
};

// The datasets of one element type and rank in one ndzip::batch_compressor, resident in a
// backend's memory, on the instance it was made for: each compression is one launch, writing
// every stream into one arena and the sizes where the host reads them; each decompression
// restores the values in place from the items the compression wrote (a pristine copy is kept to
// verify).
template <class ExecSpace>
struct corpus_batch {
  virtual ~corpus_batch() = default;
  // Queue the call, and the copy of its results to the host where one is needed.
  virtual void compress() = 0;
  virtual void decompress() = 0;
  // After both completed: the stream sizes' total, and whether every grid was restored exactly.
  virtual double compressed_bytes() const = 0;
  virtual bool restored_exactly() const = 0;
};

template <class T, int Dims, class ExecSpace>
struct typed_corpus_batch : corpus_batch<ExecSpace> {
  using memory_space = typename ExecSpace::memory_space;
  ExecSpace exec;
  ndzip::batch_compressor<T, Dims, ExecSpace> batch;
  std::vector<Kokkos::View<T*, memory_space>> values, originals;
  Kokkos::View<std::byte*, memory_space> arena;
  Kokkos::View<ndzip::batch_item<T>*, memory_space> items;
  result_array<std::uint64_t, ExecSpace> sizes;
  result_array<ndzip::decompress_outcome, ExecSpace> outcomes;

  typed_corpus_batch(const ExecSpace& instance, const std::vector<ndzip::extent<Dims>>& grids,
                     const std::vector<std::vector<T>>& hosts, ndzip::codec_mode mode)
      : exec(instance),
        batch(instance, grids, mode),
        items("items", grids.size()),
        sizes("sizes", grids.size()),
        outcomes("outcomes", grids.size()) {
    std::vector<std::size_t> offsets;
    std::size_t total = 0;
    for (std::size_t i = 0; i < grids.size(); ++i) {
      offsets.push_back(total);
      total += (batch.size_bound(i) + 7) / 8 * 8;
      const Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host(
          hosts[i].data(), hosts[i].size());
      values.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "values"), host.size());
      originals.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "original"),
                             host.size());
      Kokkos::deep_copy(values.back(), host);
      Kokkos::deep_copy(originals.back(), host);
    }
    arena = decltype(arena)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "streams"), total);
    const auto items_host = Kokkos::create_mirror_view(items);
    for (std::size_t i = 0; i < grids.size(); ++i)
      items_host(i) = {values[i].data(), arena.data() + offsets[i], 0};
    Kokkos::deep_copy(items, items_host);
  }
  void compress() override {
    batch.compress_async(items, sizes.written);
    sizes.read(exec);
  }
  void decompress() override {
    batch.decompress_async(items, outcomes.written);
    outcomes.read(exec);
  }
  double compressed_bytes() const override {
    double total = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) total += double(sizes.host(i));
    return total;
  }
  bool restored_exactly() const override {
    using bits = typename ndzip::profile<T, Dims>::bits_type;
    bool exact = true;
    for (std::size_t i = 0; i < batch.size(); ++i)
      exact =
          exact && outcomes.host(i).failure == ndzip::decompress_outcome::no_failure &&
          outcomes.host(i).stream_bytes == sizes.host(i) &&
          count_mismatches(exec, reinterpret_cast<const bits*>(originals[i].data()),
                           reinterpret_cast<const bits*>(values[i].data()), values[i].size()) == 0;
    return exact;
  }
};

// The corpus as one batch per element type and rank (the batch API's unit), batch k on
// instances[k % instances.size()].
template <class ExecSpace>
std::vector<std::unique_ptr<corpus_batch<ExecSpace>>> make_corpus_batches(
    const std::vector<ExecSpace>& instances, const std::vector<dataset>& sets,
    ndzip::codec_mode mode) {
  std::vector<std::unique_ptr<corpus_batch<ExecSpace>>> batches;
  const auto add = [&](auto tag, auto dims) {
    using T = decltype(tag);
    constexpr int Dims = decltype(dims)::value;
    std::vector<ndzip::extent<Dims>> grids;
    std::vector<std::vector<T>> hosts;
    for (const auto& d : sets)
      if (d.is_double == std::is_same_v<T, double> && d.extents.size() == std::size_t{Dims})
        ndzip::visit_shape(shape_of(d.is_double, d.extents), [&](auto, const auto& grid) {
          if constexpr (std::is_same_v<std::decay_t<decltype(grid)>, ndzip::extent<Dims>>) {
            grids.push_back(grid);
            hosts.push_back(read_values<T>(d, grid.size()));
          }
        });
    if (!grids.empty())
      batches.push_back(std::make_unique<typed_corpus_batch<T, Dims, ExecSpace>>(
          instances[batches.size() % instances.size()], grids, hosts, mode));
  };
  add(float{}, std::integral_constant<int, 1>{});
  add(float{}, std::integral_constant<int, 2>{});
  add(float{}, std::integral_constant<int, 3>{});
  add(double{}, std::integral_constant<int, 1>{});
  add(double{}, std::integral_constant<int, 2>{});
  add(double{}, std::integral_constant<int, 3>{});
  return batches;
}

// `count` instances on which independent work may overlap: new streams of a device (Kokkos 4's
// partition_space); the same instance on the host, and with Kokkos 3.
template <class Exec>
std::vector<Exec> concurrent_instances(const Exec& exec, std::size_t count) {
#if KOKKOS_VERSION >= 40000
  if constexpr (!Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible)
    return Kokkos::Experimental::partition_space(exec, std::vector<int>(count, 1));
#endif
  return std::vector<Exec>(count, exec);
}

// The whole corpus back to back on one execution-space instance with the asynchronous API: every
// compression queued, then the sizes read once; every decompression queued, then the outcomes
// read once (codec "ndzip-async"). Then the same with one batch per element type and rank, all
// on that instance (codec "ndzip-batch"), and each on an instance of its own, so that the
// batches overlap (codec "ndzip-batch-concurrent"; the same as "ndzip-batch" where
// concurrent_instances gives one instance). With --high-ratio, the high-ratio mode back to back
// on one instance ("ndzip-high-ratio-async"), with every dataset on an instance of its own
// ("ndzip-high-ratio-concurrent"), and as the batches, on one instance and on instances of their
// own ("ndzip-high-ratio-batch", "ndzip-high-ratio-batch-concurrent"). Results are written into
// host-pinned memory where Kokkos has it (result_array). One aggregate row per backend and codec.
void run_corpus_async(ndzip::perf::report& report, const options& opt,
                      const std::vector<dataset>& sets) {
  for (const auto& b : opt.backends)
    ndzip::with_backend(b, [&](auto exec) {
      using Exec = decltype(exec);
      using memory_space = typename Exec::memory_space;
      std::size_t total = 0;
      for (const auto& d : sets) {
        std::size_t elements = 1;
        for (const auto e : d.extents) elements *= e;
        total += elements * (d.is_double ? sizeof(double) : sizeof(float));
      }
      Kokkos::View<std::byte*, memory_space> from("copy from", total), to("copy to", total);
      const auto copy = ndzip::perf::measure([&] {
        Kokkos::deep_copy(exec, to, from);
        exec.fence();
      });
      const auto add_row = [&](const char* codec, const ndzip::perf::timing& compress_time,
                               const ndzip::perf::timing& decompress_time, double compressed_bytes,
                               bool verified) {
        ndzip::perf::result_row row{"aggregate",         "(all)", "mixed", "-", b, codec,
                                    Exec().concurrency()};
        row.bytes = double(total);
        row.compressed_bytes = compressed_bytes;
        set_timings(row, compress_time, decompress_time, copy);
        row.verified = verified;
        row.same_stream = "-";
        report.add(std::move(row));
      };

      // Every dataset's call queued (dataset k on instances[k % size]), then every instance
      // fenced and the results read; returns the streams' total.
      const auto run_entries = [&](const char* codec, ndzip::codec_mode mode,
                                   const std::vector<Exec>& instances) {
        std::vector<std::unique_ptr<corpus_entry<Exec>>> entries;
        for (const auto& d : sets)
          ndzip::visit_shape(shape_of(d.is_double, d.extents), [&](auto tag, const auto& grid) {
            using T = typename decltype(tag)::type;
            constexpr int Dims = std::decay_t<decltype(grid)>::dimensions;
            const auto host = read_values<T>(d, grid.size());
            entries.push_back(std::make_unique<typed_corpus_entry<T, Dims, Exec>>(
                instances[entries.size() % instances.size()], grid, host.data(), mode));
          });
        const std::size_t n = entries.size();
        const result_array<std::uint64_t, Exec> sizes("sizes", n);
        const result_array<ndzip::decompress_outcome, Exec> outcomes("outcomes", n);
        const auto fence_all = [&] {
          for (const auto& instance : instances) instance.fence();
        };
        fence_all();
        const auto compress = ndzip::perf::measure([&] {
          for (std::size_t i = 0; i < n; ++i) entries[i]->compress(sizes.written.data() + i);
          fence_all();
          sizes.read(exec);
          exec.fence();
        });
        const auto decompress = ndzip::perf::measure([&] {
          for (std::size_t i = 0; i < n; ++i)
            entries[i]->decompress(sizes.host(i), outcomes.written.data() + i);
          fence_all();
          outcomes.read(exec);
          exec.fence();
        });
        bool exact = true;
        double compressed = 0;
        for (std::size_t i = 0; i < n; ++i) {
          exact = exact && outcomes.host(i).failure == ndzip::decompress_outcome::no_failure &&
                  outcomes.host(i).stream_bytes == sizes.host(i) &&
                  entries[i]->restored_exactly(instances[i % instances.size()]);
          compressed += double(sizes.host(i));
        }
        add_row(codec, compress, decompress, compressed, exact);
        return compressed;
      };
      const double compressed = run_entries("ndzip-async", ndzip::codec_mode::ndzip, {exec});
      double high_ratio_compressed = 0;
      if (opt.high_ratio) {
        high_ratio_compressed =
            run_entries("ndzip-high-ratio-async", ndzip::codec_mode::high_ratio, {exec});
        run_entries("ndzip-high-ratio-concurrent", ndzip::codec_mode::high_ratio,
                    concurrent_instances(exec, sets.size()));
      }

      // One batch per element type and rank, every batch's call queued, then every instance
      // fenced and the results read; the streams' total must be that of the calls above.
      const auto run_batches = [&](const char* codec, const std::vector<Exec>& instances,
                                   ndzip::codec_mode mode, double expected_bytes) {
        const auto batches = make_corpus_batches(instances, sets, mode);
        for (const auto& instance : instances) instance.fence();
        const auto batch_compress = ndzip::perf::measure([&] {
          for (const auto& batch : batches) batch->compress();
          for (const auto& instance : instances) instance.fence();
        });
        const auto batch_decompress = ndzip::perf::measure([&] {
          for (const auto& batch : batches) batch->decompress();
          for (const auto& instance : instances) instance.fence();
        });
        bool batch_exact = true;
        double batch_compressed = 0;
        for (const auto& batch : batches) {
          batch_exact = batch_exact && batch->restored_exactly();
          batch_compressed += batch->compressed_bytes();
        }
        add_row(codec, batch_compress, batch_decompress, batch_compressed,
                batch_exact && batch_compressed == expected_bytes);
      };
      const auto ndzip_mode = ndzip::codec_mode::ndzip;
      run_batches("ndzip-batch", {exec}, ndzip_mode, compressed);
      run_batches("ndzip-batch-concurrent", concurrent_instances(exec, 5), ndzip_mode, compressed);
      if (opt.high_ratio) {
        const auto high_ratio = ndzip::codec_mode::high_ratio;
        run_batches("ndzip-high-ratio-batch", {exec}, high_ratio, high_ratio_compressed);
        run_batches("ndzip-high-ratio-batch-concurrent", concurrent_instances(exec, 5), high_ratio,
                    high_ratio_compressed);
      }
    });
}

// One call at a time on 1-D float arrays of 1 KiB, 4 KiB, ... up to --max-mib: the synchronous
// calls (stream size or outcome read back) and the asynchronous ones followed by a fence and a
// read of their result, median of many calls; and copies of each array as one batch. Rows
// `latency`, codecs ndzip, ndzip-async and ndzip-batch.
// Copies of one array in one ndzip::batch_compressor (64, or as many as 256 MiB hold), each
// call followed by a fence and a read of its results (result_array): codec "ndzip-batch", the
// bytes of all copies over the time of the call.
template <class Exec>
void add_latency_batch(ndzip::perf::report& report, const Exec& exec, const std::string& backend,
                       const ndzip::extent<1>& grid,
                       const Kokkos::View<float*, typename Exec::memory_space>& values,
                       std::size_t stream_size) {
  using memory_space = typename Exec::memory_space;
  const std::size_t bytes = grid.size() * sizeof(float);
  const std::size_t copies =
      std::max<std::size_t>(1, std::min<std::size_t>(64, (std::size_t{256} << 20) / bytes));
  ndzip::batch_compressor<float, 1, Exec> batch(exec, std::vector<ndzip::extent<1>>(copies, grid));
  const std::size_t stride = (batch.size_bound(0) + 7) / 8 * 8;
  Kokkos::View<std::byte*, memory_space> arena(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "streams"), copies * stride);
  Kokkos::View<float*, memory_space> restored(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "restored"), copies * grid.size());
  Kokkos::View<ndzip::batch_item<float>*, memory_space> packing("packing", copies),
      unpacking("unpacking", copies);
  // A host copy of its own (create_mirror): it stages the packing items, then the unpacking
  // ones, and a mirror view of a host backend's View would be `packing` itself.
  const auto items_host = Kokkos::create_mirror(packing);
  const result_array<std::uint64_t, Exec> sizes("sizes", copies);
  const result_array<ndzip::decompress_outcome, Exec> outcomes("outcomes", copies);
  for (std::size_t i = 0; i < copies; ++i)
    items_host(i) = {values.data(), arena.data() + i * stride, 0};
  Kokkos::deep_copy(packing, items_host);
  for (std::size_t i = 0; i < copies; ++i)
    items_host(i) = {restored.data() + i * grid.size(), arena.data() + i * stride, stream_size};
  Kokkos::deep_copy(unpacking, items_host);
  exec.fence();
  const auto compress = ndzip::perf::measure(
      [&] {
        batch.compress_async(packing, sizes.written);
        sizes.read(exec);
        exec.fence();
      },
      50, 0.2);
  const auto decompress = ndzip::perf::measure(
      [&] {
        batch.decompress_async(unpacking, outcomes.written);
        outcomes.read(exec);
        exec.fence();
      },
      50, 0.2);
  Kokkos::View<float*, memory_space> copied(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "copied"), restored.size());
  const auto copy = ndzip::perf::measure(
      [&] {
        Kokkos::deep_copy(exec, copied, restored);
        exec.fence();
      },
      50, 0.2);
  bool exact = true;
  for (std::size_t i = 0; i < copies; ++i)
    exact =
        exact && sizes.host(i) == stream_size &&
        outcomes.host(i).failure == ndzip::decompress_outcome::no_failure &&
        count_mismatches(exec, reinterpret_cast<const std::uint32_t*>(values.data()),
                         reinterpret_cast<const std::uint32_t*>(restored.data()) + i * grid.size(),
                         grid.size()) == 0;
  ndzip::perf::result_row row{"latency",
                              "synthetic-" + std::to_string(bytes) + "B",
                              "float",
                              ndzip::to_string(grid) + "x" + std::to_string(copies),
                              backend,
                              "ndzip-batch",
                              Exec().concurrency()};
  row.bytes = double(copies * bytes);
  row.compressed_bytes = double(copies * stream_size);
  set_timings(row, compress, decompress, copy);  // copy: one deep_copy of all copies, fenced
  row.verified = exact;
  row.same_stream = "-";
  report.add(std::move(row));
}

void run_latency(ndzip::perf::report& report, const options& opt) {
  for (const auto& b : opt.backends)
    ndzip::with_backend(b, [&](auto exec) {
      using Exec = decltype(exec);
      using memory_space = typename Exec::memory_space;
      for (std::size_t bytes = 1024; bytes <= opt.max_mib << 20; bytes *= 4) {
        const ndzip::extent<1> grid(bytes / sizeof(float));
        Kokkos::View<float*, memory_space> values(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "values"), grid.size());
        Kokkos::View<float*, memory_space> restored(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "restored"), grid.size());
        {
          // Generated on the host, as for --synthetic, then copied.
          Kokkos::View<float*, Kokkos::HostSpace> host(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, "synthetic"), grid.size());
          fill_synthetic<float, 1>(Kokkos::DefaultHostExecutionSpace(), host, grid);
          Kokkos::DefaultHostExecutionSpace().fence();
          Kokkos::deep_copy(values, host);
        }
        ndzip::compressor<float, 1, Exec> codec(exec, grid);
        Kokkos::View<std::byte*, memory_space> stream(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream"), codec.size_bound());
        // Written into host-pinned memory where Kokkos names it, as the synchronous calls do.
        const result_array<std::uint64_t, Exec> size("size", 1);
        const result_array<ndzip::decompress_outcome, Exec> outcome("outcome", 1);
        exec.fence();
        std::size_t stream_size = 0;
        const auto sync_compress = ndzip::perf::measure(
            [&] { stream_size = codec.compress_raw(values.data(), stream.data(), stream.size()); },
            50, 0.2);
        const auto sync_decompress = ndzip::perf::measure(
            [&] { codec.decompress_raw(stream.data(), stream_size, restored.data()); }, 50, 0.2);
        const auto async_compress = ndzip::perf::measure(
            [&] {
              codec.compress_raw_async(values.data(), stream.data(), stream.size(),
                                       size.written.data());
              size.read(exec);
              exec.fence();
            },
            50, 0.2);
        const auto async_decompress = ndzip::perf::measure(
            [&] {
              codec.decompress_raw_async(stream.data(), stream_size, restored.data(),
                                         outcome.written.data());
              outcome.read(exec);
              exec.fence();
            },
            50, 0.2);
        const auto copy = ndzip::perf::measure(
            [&] {
              Kokkos::deep_copy(exec, restored, values);
              exec.fence();
            },
            50, 0.2);
        codec.decompress_raw(stream.data(), stream_size, restored.data());
        const bool exact =
            count_mismatches(exec, reinterpret_cast<const std::uint32_t*>(values.data()),
                             reinterpret_cast<const std::uint32_t*>(restored.data()),
                             grid.size()) == 0 &&
            size.host(0) == stream_size && codec.check_outcome(outcome.host(0)) == stream_size;
        const auto add = [&](const char* codec_name, const ndzip::perf::timing& c,
                             const ndzip::perf::timing& d) {
          ndzip::perf::result_row row{"latency",
                                      "synthetic-" + std::to_string(bytes) + "B",
                                      "float",
                                      ndzip::to_string(grid),
                                      b,
                                      codec_name,
                                      Exec().concurrency()};
          row.bytes = double(bytes);
          row.compressed_bytes = double(stream_size);
          set_timings(row, c, d, copy);  // copy: one deep_copy of the array, fenced
          row.verified = exact;
          row.same_stream = "-";
          report.add(std::move(row));
        };
        add("ndzip", sync_compress, sync_decompress);
        add("ndzip-async", async_compress, async_decompress);
        add_latency_batch(report, exec, b, grid, values, stream_size);
      }
    });
}

using ndzip_perf::positive_decimal;

// Defines the options on `app` and parses the command line. Throws CLI::ParseError for --help
// and for usage errors, which main hands to app.exit.
options parse(CLI::App& app, int argc, char** argv) {
  options opt;
  // The modes first in --help: the help flag, which CLI::App adds first, goes after them.
  app.set_help_flag();
  app.get_formatter()->column_width(28);  // one line per option within 100 columns
  const std::string mode = "Mode (exactly one)";
  CLI::Option* manifest =
      app.add_option("--manifest", opt.manifest, "the datasets FILE lists (below), and (all) rows")
          ->type_name("FILE")
          ->group(mode);
  CLI::Option* synthetic =
      app.add_flag("--synthetic", opt.synthetic, "five large synthetic fields (below)")
          ->group(mode);
  CLI::Option* sweep =
      app.add_flag("--sweep", opt.sweep,
                   "3-D float synthetic fields of 1, 4, 16, ... MiB up to --max-mib")
          ->group(mode);
  CLI::Option* latency =
      app.add_flag("--latency", opt.latency,
                   "one call at a time on 1-D float arrays of 1, 4, 16, ... KiB to --max-mib")
          ->group(mode);
  app.set_help_flag("-h,--help", "print this help and exit");
  // One value per -b, so that a stray word is an error rather than a backend.
  app.add_option("-b", opt.backends,
                 "backend, repeatable; the first one is the reference (default: " +
                     ndzip::default_backend() + ")")
      ->type_name("BACKEND")
      ->allow_extra_args(false);
  // One flag, so that the last of --peers and --no-peers given wins.
  bool peers = false;
  CLI::Option* peers_flag =
      app.add_flag("--peers,!--no-peers", peers,
                   "CPU peer codecs on every input / on none (default: with --manifest only)");
  app.add_option("--scale", opt.scale, "with --synthetic: divide the slowest extent by K")
      ->type_name("K")
      ->transform(positive_decimal)
      ->capture_default_str();
  app.add_option("--max-mib", opt.max_mib, "largest size of --sweep and --latency in MiB")
      ->type_name("M")
      ->transform(positive_decimal)
      ->capture_default_str();
  app.add_option("--ceiling-mib", opt.ceiling_mib,
                 "the ceiling from one copy of M MiB per backend (default: each input's size)")
      ->type_name("M")
      ->transform(positive_decimal);
  app.add_option("--csv", opt.csv, "write all rows as CSV (default: none)")->type_name("FILE");
  app.add_flag("--append", opt.append, "with --csv: add to an existing file (default: replace)");
  app.add_option("--json", opt.json, "write all rows as JSON (default: none)")->type_name("FILE");
  app.add_flag("--high-ratio", opt.high_ratio,
               "also the high-ratio mode (codec ndzip-high-ratio), beside the default one");
  app.add_flag("--with-copies", opt.with_copies,
               "also time the host-device copies of input and output (default: off)");
  app.add_flag("--async", opt.async,
               "also the corpus back to back asynchronously and in batches (below)")
      ->needs(manifest);
  app.footer(
      "--manifest FILE: lines `file;float|double;dims slowest first`, paths relative to FILE;\n"
      "  the (all) rows aggregate each backend and codec as total bytes / total time.\n"
      "--synthetic: smooth fields with noisy low mantissa bits: float 512^3, 8192^2, 2^27,\n"
      "  double 2^27, 256^3; --scale K divides the slowest extent.\n"
      "--sweep: run with several OMP_NUM_THREADS for thread scaling.\n"
      "--latency: synchronous and asynchronous calls (with a fence and a read of the result),\n"
      "  and 64 copies as one batch (fewer above 4 MiB), median of at least 50 calls.\n"
      "--async: the whole corpus back to back with the asynchronous API on one instance, sizes\n"
      "  and outcomes read once (rows `(all)` ... `ndzip-async`), as one batch per type and\n"
      "  rank (`ndzip-batch`), and with each batch on an instance of its own\n"
      "  (`ndzip-batch-concurrent`: GPU streams with Kokkos 4); with --high-ratio also the\n"
      "  high-ratio mode back to back on one instance (`ndzip-high-ratio-async`) and with each\n"
      "  dataset on an instance of its own (`ndzip-high-ratio-concurrent`), and as the\n"
      "  batches (`ndzip-high-ratio-batch`, `ndzip-high-ratio-batch-concurrent`).\n"
      "-b: the others must reproduce the first backend's streams byte for byte.\n"
      "--ceiling-mib M: the copy rate behind every row's % (and deep_copy column) measured once\n"
      "  per backend on M MiB (e.g. 1024), so that small inputs' ceilings are not those of\n"
      "  small copies; printed before the rows.\n"
      "Peer codecs: zstd, lz4, blosc, fpzip, zfp, single-threaded on the host.\n"
      "Exit status 1 if any round trip is not bit-exact or any backend's stream differs,\n"
      "2 for a usage error.");
  app.parse(argc, argv);
  // Counted, not grouped: a mode given twice is an error too.
  if (manifest->count() + synthetic->count() + sweep->count() + latency->count() != 1)
    throw CLI::ValidationError("give exactly one of --manifest, --synthetic, --sweep, --latency");
  if (*peers_flag) opt.peers = peers ? 1 : 0;
  return opt;
}

// The copy rate of each backend on --ceiling-mib MiB (one deep_copy between two Views of its
// memory space, median of the timed runs), which the report uses for every row's ceiling.
void measure_copy_ceilings(ndzip::perf::report& report, const options& opt) {
  const std::size_t bytes = opt.ceiling_mib << 20;
  for (const auto& b : opt.backends)
    ndzip::with_backend(b, [&](auto exec) {
      using memory_space = typename decltype(exec)::memory_space;
      Kokkos::View<std::byte*, memory_space> from("ceiling from", bytes), to("ceiling to", bytes);
      exec.fence();
      const auto copy = ndzip::perf::measure([&] {
        Kokkos::deep_copy(exec, to, from);
        exec.fence();
      });
      const double gbps = static_cast<double>(bytes) / 1e9 / copy.median_s;
      std::printf("ceiling: %s copies %zu MiB at %.2f GB/s\n", b.c_str(), opt.ceiling_mib, gbps);
      report.set_copy_rate(b, gbps);
    });
}

void run(ndzip::perf::report& report, const options& opt) {
  if (opt.ceiling_mib > 0) measure_copy_ceilings(report, opt);
  std::vector<std::string> skipped;
  std::vector<std::unique_ptr<ndzip::perf::peer_codec>> peers;
  if (opt.peers == 1 || (opt.peers == -1 && !opt.manifest.empty()))
    peers = ndzip::perf::available_peers(skipped);
  for (const auto& s : skipped) std::fprintf(stderr, "ndzip-bench: peer skipped: %s\n", s.c_str());

  if (!opt.manifest.empty()) {
    for (const auto& d : read_manifest(opt.manifest))
      ndzip::visit_shape(shape_of(d.is_double, d.extents), [&](auto tag, const auto& grid) {
        using T = typename decltype(tag)::type;
        constexpr int Dims = std::decay_t<decltype(grid)>::dimensions;
        const auto host = read_values<T>(d, grid.size());
        run_input<T, Dims>(report, opt, {"dataset", d.name}, grid, host.data(), peers);
      });
    report.add_aggregates();
    if (opt.async) run_corpus_async(report, opt, read_manifest(opt.manifest));
  } else if (opt.synthetic) {
    for (const auto& s : synthetic_shapes) {
      auto e = s.extents;
      e[0] = std::max<std::size_t>(1, e[0] / opt.scale);
      ndzip::visit_shape(shape_of(s.is_double, e), [&](auto tag, const auto& grid) {
        run_synthetic_input<typename decltype(tag)::type,
                            std::decay_t<decltype(grid)>::dimensions>(
            report, opt, {"synthetic", "synthetic"}, grid, peers);
      });
    }
  } else if (opt.latency) {
    run_latency(report, opt);
  } else {
    // 3-D float cubes of 1, 4, 16, ... MiB: 64 x 64 x 64 is 1 MiB.
    for (std::size_t mib = 1; mib <= opt.max_mib; mib *= 4) {
      const ndzip::extent<3> grid(64 * mib, std::size_t{64}, std::size_t{64});
      run_synthetic_input<float, 3>(
          report, opt, {"sweep", "synthetic-" + std::to_string(mib) + "MiB"}, grid, peers);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "ndzip-bench: throughput of ndzip next to Kokkos::deep_copy of the same bytes on each "
      "backend,\nand of CPU peer codecs single-threaded on the host; every round trip verified",
      "ndzip-bench");
  options opt;
  try {
    opt = parse(app, argc, argv);
  } catch (const CLI::ParseError& e) {
    // 2 for a usage error, as before CLI11, whose own codes differ by error.
    return app.exit(e) == 0 ? 0 : 2;
  }
  Kokkos::ScopeGuard kokkos;
  if (opt.backends.empty()) opt.backends = {ndzip::default_backend()};
  ndzip::perf::report report(
      "ndzip-bench: GB/s of uncompressed bytes, data resident in the backend's memory, median of "
      ">= 5 runs lasting >= 1 s (spread = (slowest - fastest) / median, compress/decompress); "
      "% = share of the ceiling 2*deep_copy/(1+ratio); peers run "
      "single-threaded on the host beside a one-thread memcpy; same = stream identical to " +
      opt.backends.front() + "'s; host kernels: " + ndzip::host_instruction_set());
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
