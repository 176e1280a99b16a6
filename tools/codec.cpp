// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codec.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <ndzip/ndzip.hpp>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include "core/array_dispatch.hpp"

namespace ndzip_cli {

namespace {

template <int Dims>
ndzip::extent<Dims> grid_from(const array_desc& array) {
  ndzip::extent<Dims> grid;
  for (int a = 0; a < Dims; ++a) grid[a] = static_cast<std::size_t>(array.extents[a]);
  return grid;
}

template <class T, int Dims>
using array_data_t = std::conditional_t<Dims == 1, T*, std::conditional_t<Dims == 2, T**, T***>>;

// A C-order View over host memory that the tool owns.
template <class T, int Dims>
using host_view = Kokkos::View<array_data_t<T, Dims>, Kokkos::LayoutRight, Kokkos::HostSpace,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class T, int Dims>
host_view<T, Dims> make_host_view(T* data, const ndzip::extent<Dims>& grid) {
  if constexpr (Dims == 1)
    return host_view<T, Dims>(data, grid[0]);
  else if constexpr (Dims == 2)
    return host_view<T, Dims>(data, grid[0], grid[1]);
  else
    return host_view<T, Dims>(data, grid[0], grid[1], grid[2]);
}

// The codec needs values and streams aligned to the element size. The tool's buffers come from
// operator new, and a frame's stream starts 48 bytes in, so this holds by construction.
template <class T>
void check_aligned(const std::byte* data) {
  if (reinterpret_cast<std::uintptr_t>(data) % alignof(T) != 0)
    throw std::logic_error("ndzip_cli: buffer not aligned for its element type");
}

template <class T>
T* element_cast(const std::byte* data) {
  check_aligned<T>(data);
  return reinterpret_cast<T*>(const_cast<std::byte*>(data));
}

template <class Exec, class HostView>
constexpr bool reads_host_memory_v =
    std::is_same_v<typename Exec::memory_space, typename HostView::memory_space>;

// A View of `host`'s shape in Exec's memory space: `host` itself where that is host memory,
// otherwise a new allocation, filled with a copy of `host` if `copy`.
template <class Exec, class HostView>
auto backend_view(const Exec& exec, const HostView& host, bool copy) {
  if constexpr (reads_host_memory_v<Exec, HostView>) {
    return host;
  } else {
    Kokkos::View<typename HostView::non_const_data_type, typename HostView::array_layout,
                 typename Exec::memory_space>
        view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip-cli"), host.layout());
    if (copy) Kokkos::deep_copy(exec, view, host);
    return view;
  }
}

// Copies a result from the backend's memory to `host` (nothing to copy if it is the same
// memory) and waits until it is complete.
template <class Exec, class HostView, class BackendView>
void copy_to_host(const Exec& exec, const HostView& host, const BackendView& result) {
  if constexpr (!reads_host_memory_v<Exec, HostView>) Kokkos::deep_copy(exec, host, result);
  exec.fence();
}

// Once `exec` has its own copy of a host buffer, the buffer `owner` that holds it is released
// (nothing happens where the backend reads host memory), so that a GPU run never holds its input
// and its output in host memory at once.
template <class Exec, class HostView>
void release_host_copy(const Exec& exec, const HostView&, byte_buffer* owner) {
  if constexpr (!reads_host_memory_v<Exec, HostView>) {
    if (owner) {
      exec.fence();
      *owner = byte_buffer();
    }
  }
}

template <class T, int Dims, class Exec>
byte_buffer compress_on(const Exec& exec, const ndzip::extent<Dims>& grid, byte_span values,
                        byte_buffer* owner, ndzip::codec_mode mode) {
  const auto host_values = make_host_view<const T>(element_cast<const T>(values.data), grid);
  const auto values_b = backend_view(exec, host_values, true);
  release_host_copy(exec, host_values, owner);
  ndzip::compressor<T, Dims, Exec> codec(exec, grid, mode);
  byte_buffer stream(codec.size_bound());
  const host_view<std::byte, 1> host_stream(stream.data(), stream.size());
  const auto stream_b = backend_view(exec, host_stream, false);
  const std::size_t size = codec.compress(values_b, stream_b);
  const auto written = std::make_pair(std::size_t{0}, size);
  copy_to_host(exec, Kokkos::subview(host_stream, written), Kokkos::subview(stream_b, written));
  stream.resize(size);
  return stream;
}

template <class T, int Dims, class Exec>
decompressed decompress_on(const Exec& exec, const ndzip::extent<Dims>& grid, byte_span stream,
                           byte_buffer* owner, ndzip::codec_mode mode) {
  check_aligned<std::uint64_t>(stream.data);
  const host_view<const std::byte, 1> host_stream(stream.data, stream.size);
  const auto stream_b = backend_view(exec, host_stream, true);
  release_host_copy(exec, host_stream, owner);
  // Before the output is allocated: the compressor rejects grids the format cannot hold, and
  // a stream too short for the grid, whose extents may come from an untrusted frame header,
  // must not cost an allocation of the array's size.
  if (mode == ndzip::codec_mode::ndzip)
    ndzip::compressor<T, Dims, Exec>(exec, grid).check_stream_size(stream.size);
  else if (stream.size < ndzip::high_ratio_smallest_stream_bytes<T>(grid))
    throw ndzip::stream_error(
        "ndzip: a high-ratio stream of " + std::to_string(stream.size) +
        " bytes is shorter than the shortest of a " + ndzip::to_string(grid) + " grid (" +
        std::to_string(ndzip::high_ratio_smallest_stream_bytes<T>(grid)) + " bytes)");

  ndzip::compressor<T, Dims, Exec> codec(exec, grid, mode);
  decompressed out;
  out.values.resize(grid.size() * sizeof(T));
  const auto host_values = make_host_view(element_cast<T>(out.values.data()), grid);
  const auto values_b = backend_view(exec, host_values, false);
  out.consumed = codec.decompress(stream_b, values_b);
  copy_to_host(exec, host_values, values_b);
  return out;
}

}  // namespace

struct backend_session::guard {
  Kokkos::ScopeGuard kokkos;

  // The host threads Kokkos starts: `threads` (0: one per core), else what Kokkos would take
  // itself (OMP_NUM_THREADS), at most what it holds; lowering a count is said on standard error
  // unless `quiet` (only a default can be too large: -T is checked by the options).
  static std::optional<int> thread_count(std::optional<int> threads, bool quiet) {
    if (threads && *threads == 0)
      threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const auto count = ndzip::host_threads_to_initialize(threads);
    const auto wanted = threads ? threads : ndzip::default_host_threads();
    if (!quiet && count && wanted && *count < *wanted)
      std::fprintf(stderr, "ndzip: warning: %s asks for %d host threads; Kokkos holds at most %d\n",
                   threads                          ? "-T 0 (one per core)"
                   : std::getenv("OMP_NUM_THREADS") ? "OMP_NUM_THREADS"
                                                    : "one thread per core",
                   *wanted, *count);
    return count;
  }

  static auto settings(std::optional<int> threads, bool quiet) {
    const std::optional<int> count = thread_count(threads, quiet);
#if KOKKOS_VERSION >= 30700
    auto settings = Kokkos::InitializationSettings().set_disable_warnings(true);
    if (count) settings.set_num_threads(*count);
    return settings;
#else
    Kokkos::InitArguments args;
    args.disable_warnings = true;
    args.num_threads = count.value_or(-1);
    return args;
#endif
  }

  guard(std::optional<int> threads, bool quiet) : kokkos(settings(threads, quiet)) {}
};

backend_session::backend_session(std::optional<int> threads, bool quiet)
    : m_guard(std::make_unique<guard>(threads, quiet)) {}
backend_session::~backend_session() = default;

std::string codec_message(const std::exception& e) {
  const std::string_view what = e.what();
  constexpr std::string_view prefix = "ndzip: ";
  return std::string(what.substr(what.rfind(prefix, 0) == 0 ? prefix.size() : 0));
}

int host_thread_limit() { return ndzip::max_host_threads; }

std::vector<std::string> backend_names() { return ndzip::enabled_backends(); }

std::string backend_list() {
  std::string list;
  for (const auto& name : backend_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

byte_buffer compress_array(const std::string& backend, const array_desc& array, byte_span values,
                           byte_buffer* owner) {
  if (values.size != byte_size(array))
    throw std::logic_error("ndzip_cli: compress_array: input size does not match the array");
  return ndzip::detail::with_array_type(array.type, array.dims, [&](auto tag, auto dims) {
    using T = typename decltype(tag)::type;
    constexpr int Dims = decltype(dims)::value;
    byte_buffer stream;
    ndzip::with_backend(backend, [&](const auto& exec) {
      stream = compress_on<T, Dims>(exec, grid_from<Dims>(array), values, owner, array.mode);
    });
    return stream;
  });
}

decompressed decompress_array(const std::string& backend, const array_desc& array, byte_span stream,
                              byte_buffer* owner) {
  byte_size(array);  // throws if the array cannot be addressed
  return ndzip::detail::with_array_type(array.type, array.dims, [&](auto tag, auto dims) {
    using T = typename decltype(tag)::type;
    constexpr int Dims = decltype(dims)::value;
    decompressed out;
    ndzip::with_backend(backend, [&](const auto& exec) {
      out = decompress_on<T, Dims>(exec, grid_from<Dims>(array), stream, owner, array.mode);
    });
    return out;
  });
}

std::size_t largest_stream_size(const array_desc& array) {
  byte_size(array);  // throws if the array cannot be addressed
  return ndzip::detail::with_array_type(array.type, array.dims, [&](auto tag, auto dims) {
    using T = typename decltype(tag)::type;
    constexpr int Dims = decltype(dims)::value;
    try {
      return ndzip::compressed_size_bound<T>(grid_from<Dims>(array)) +
             (array.mode == ndzip::codec_mode::high_ratio ? ndzip::high_ratio_header_bytes : 0);
    } catch (const std::invalid_argument&) {
      // A grid the codec cannot hold: decoding reports that with the codec's own message.
      return std::numeric_limits<std::size_t>::max();
    }
  });
}

void check_codec_holds(const array_desc& array) {
  ndzip::detail::with_array_type(array.type, array.dims, [&](auto tag, auto dims) {
    using T = typename decltype(tag)::type;
    constexpr int Dims = decltype(dims)::value;
    ndzip::check_grid_representable<T>(grid_from<Dims>(array));
  });
}

}  // namespace ndzip_cli
