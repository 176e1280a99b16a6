// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The tool's only contact with the codec library: runs ndzip::compressor on a backend chosen by
// name for an array whose element type and dimensionality are known only at run time.

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array_desc.hpp"
#include "bytes.hpp"

namespace ndzip_cli {

// Kokkos is initialized while one of these lives (host threads: `threads`, 0 meaning one per
// core, else OMP_NUM_THREADS and Kokkos' environment variables, at most host_thread_limit():
// a larger default is lowered with a warning on standard error unless `quiet`; Kokkos' warnings,
// which it prints to standard output, are off) and finalized when it is destroyed. Every codec
// call below must run inside one; Kokkos can be initialized only once per process. Throws
// std::invalid_argument if KOKKOS_NUM_THREADS asks for more than host_thread_limit().
class backend_session {
 public:
  explicit backend_session(std::optional<int> threads = std::nullopt, bool quiet = false);
  ~backend_session();
  backend_session(const backend_session&) = delete;
  backend_session& operator=(const backend_session&) = delete;

 private:
  struct guard;
  std::unique_ptr<guard> m_guard;
};

// The most host threads Kokkos can run (ndzip::max_host_threads): -T may ask for no more.
int host_thread_limit();

// The message of an exception from the codec library, without the "ndzip: " it starts with.
std::string codec_message(const std::exception& e);

// The backends this build has (ndzip::enabled_backends()), the default first.
std::vector<std::string> backend_names();
// The same as "serial, openmp".
std::string backend_list();

// Compresses `values`, the array.shape.byte_size() bytes of `array` (aligned for its element type),
// on `backend`; returns the raw ndzip stream of its coded grid (array.coded_shape()). With `owner`, the buffer `values` lie in: a backend
// with memory of its own (a GPU) releases it once the values are copied there, so that the input
// and the stream are not both in host memory at once; `values` must not be used after the call.
byte_buffer compress_array(const std::string& backend, const array_desc& array, byte_span values,
                           byte_buffer* owner = nullptr);

struct decompressed {
  byte_buffer values;        // array.shape.byte_size() bytes
  std::size_t consumed = 0;  // stream bytes the decoder used
};

// Decompresses the raw ndzip stream `stream` (aligned for the element type) into an `array` on
// `backend`. Throws ndzip::stream_error if it is not a stream of such an array. `owner`: as for
// compress_array, the buffer `stream` lies in, released once a GPU has its copy.
decompressed decompress_array(const std::string& backend, const array_desc& array, byte_span stream,
                              byte_buffer* owner = nullptr);

// The largest stream any `array` compresses to (ndzip::compressed_size_bound), or SIZE_MAX for
// arrays the codec cannot hold: decoding rejects those with the codec's message. Throws
// std::runtime_error if the array's byte size does not fit in std::size_t.
std::size_t largest_stream_size(const array_desc& array);

// Throws std::invalid_argument, with the codec's reason, unless the codec can hold an `array`
// (compress or decompress one), whatever the values or the stream.
void check_codec_holds(const array_desc& array);

}  // namespace ndzip_cli
