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

namespace ndzip_cli {

namespace {

// Releases the input buffer `owner` once a GPU has its copy (nothing where the backend reads
// host memory).
ndzip::dynamic_compressor::input_done release(const ndzip::dynamic_compressor& codec,
                                              byte_buffer* owner) {
  if (!owner || codec.backend_reads_host_memory()) return {};
  return [owner] { *owner = byte_buffer(); };
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
  if (values.size != array.shape.byte_size())
    throw std::logic_error("ndzip_cli: compress_array: input size does not match the array");
  ndzip::dynamic_compressor codec(backend, array.coded_shape(), array.mode);
  // Uninitialised: the pages of the stream are taken only as the codec writes them, so a GPU
  // run, which releases the values once they are on the GPU, never holds both in host memory.
  byte_buffer stream(codec.size_bound());
  stream.resize(codec.compress(values.data, stream.data(), stream.size(),
                               ndzip::buffer_location::host, release(codec, owner)));
  return stream;
}

decompressed decompress_array(const std::string& backend, const array_desc& array, byte_span stream,
                              byte_buffer* owner) {
  // Before anything is allocated: the extents may come from an untrusted frame header, and a
  // stream too short for them must not cost an allocation of the array's size.
  ndzip::check_stream_size(array.coded_shape(), stream.size, array.mode);
  ndzip::dynamic_compressor codec(backend, array.coded_shape(), array.mode);
  decompressed out;
  out.values.resize(array.shape.byte_size());  // uninitialised, as the stream above
  out.consumed = codec.decompress(stream.data, stream.size, out.values.data(),
                                  ndzip::buffer_location::host, release(codec, owner));
  return out;
}

std::size_t largest_stream_size(const array_desc& array) {
  array.shape.byte_size();  // throws if the array cannot be addressed
  try {
    return ndzip::compressed_size_bound(array.coded_shape(), array.mode);
  } catch (const std::invalid_argument&) {
    // A grid the codec cannot hold: decoding reports that with the codec's own message.
    return std::numeric_limits<std::size_t>::max();
  }
}

void check_codec_holds(const array_desc& array) {
  ndzip::check_grid_representable(array.coded_shape());
}

}  // namespace ndzip_cli
