// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The run-time side of the API, for callers that learn an array's element type, rank and
// extents only at run time (a file's header, a command line, a NumPy array, an HDF5 chunk) and
// pick the backend by name (ndzip/backends.hpp):
//
//   ndzip::array_shape         element type, rank (1..3) and extents, slowest first; sizes
//                              checked against overflow; "float 100x200" as text
//   ndzip::visit_shape(s, f)   f(ndzip::type_tag<T>{}, ndzip::extent<Dims>): the compile-time
//                              types that ndzip::compressor and the View API take
//   ndzip::dynamic_compressor  ndzip::compressor behind a run-time shape and backend name, over
//                              buffers in host memory or in the backend's own memory; compiled
//                              into libndzip, so a caller compiles no kernels of its own
//   ndzip::decompress_frame_region(backend, frame, bytes, box, start, values)
//                              a box of a frame of any version, decoding only what it touches
//
//   const ndzip::array_shape shape(ndzip::element_type::float32, {512, 512, 512});
//   ndzip::dynamic_compressor codec("cuda", shape);
//   std::vector<std::byte> frame(codec.frame_size_bound());
//   frame.resize(codec.compress_frame(values, frame.data(), frame.size()));  // host values
//
// The frame (ndzip/frame_format.hpp) is the container the command-line tool writes and the
// Python module returns; compress and decompress read and write the bare stream.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ndzip/array_shape.hpp"
#include "ndzip/codec_mode.hpp"
#include "ndzip/export.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/folding.hpp"
#include "ndzip/frame_format.hpp"

namespace ndzip {

// Throws std::invalid_argument, with the codec's reason, unless the ndzip format can hold an
// array of this shape (ndzip::check_grid_representable).
NDZIP_EXPORT void check_grid_representable(const array_shape& shape);
// The largest stream an array of this shape compresses to in `mode` (ndzip::compressed_size_bound,
// and the high-ratio stream's header); throws as check_grid_representable.
NDZIP_EXPORT std::size_t compressed_size_bound(const array_shape& shape,
                                               codec_mode mode = codec_mode::ndzip);
// Throws ndzip::stream_error unless a stream of `mode` for this shape can be `stream_bytes`
// long (the shortest stream of a shape holds its offset table, chunk heads and border): a
// check a caller makes before it allocates the array for an untrusted stream.
NDZIP_EXPORT void check_stream_size(const array_shape& shape, std::size_t stream_bytes,
                                    codec_mode mode = codec_mode::ndzip);

// Where a dynamic_compressor's buffers lie: host memory, or the memory space of the backend's
// execution space (device memory for "cuda" and "hip"; host memory for the host backends).
enum class buffer_location { host, backend };

// A stream of a GPU backend's own runtime, a cudaStream_t ("cuda") or hipStream_t ("hip") as an
// integer (0: the legacy default stream), for a dynamic_compressor to run on in place of the
// backend's default instance: its kernels and copies are then ordered with the caller's other
// work on that stream (a framework's current stream), and its fences wait for that stream only.
// The compressor runs on the stream's device; the stream must outlive the compressor.
struct native_stream {
  std::uintptr_t handle = 0;
};

// ndzip::compressor<T, Dims, ExecSpace> for a shape and a backend chosen at run time. Buffers in
// host memory are copied through the backend's memory where the backend cannot read them (GPUs),
// into memory the compressor keeps for its next calls; values and streams need no particular
// alignment (misaligned ones are copied). Every call completes before it returns (it fences the
// compressor's instance: the backend's default one, its own one on Serial with Kokkos 4 so that
// compressors on distinct threads run at once, or the caller's native_stream). Errors are those
// of ndzip::compressor: ndzip::capacity_error (nothing written), ndzip::stream_error (a damaged
// stream; the values are then unspecified), ndzip::frame_error, std::invalid_argument
// (overlapping buffers). Threads: as
// ndzip::compressor (calls on one object are serialised; distinct objects may run concurrently).
// Kokkos must be initialised while a dynamic_compressor exists.
class NDZIP_EXPORT dynamic_compressor {
 public:
  // Called once the input of a call is no longer read, so that the caller may release it:
  // after its copy to a GPU, which then does not need input and output in host memory at once.
  using input_done = std::function<void()>;

  // Throws std::invalid_argument for a backend this build does not have (naming those it has) or
  // a shape the format cannot hold. `frame_folding`: how compress_frame codes the array
  // (ndzip/folding.hpp; the bare stream of compress is always the stream of `shape`).
  dynamic_compressor(std::string_view backend, const array_shape& shape,
                     codec_mode mode = codec_mode::ndzip,
                     folding frame_folding = folding::automatic);
  // The same on the caller's stream; std::invalid_argument also for a backend without streams
  // (the host backends).
  dynamic_compressor(std::string_view backend, const array_shape& shape, codec_mode mode,
                     native_stream stream, folding frame_folding = folding::automatic);
  ~dynamic_compressor();
  dynamic_compressor(dynamic_compressor&&) noexcept;
  dynamic_compressor& operator=(dynamic_compressor&&) noexcept;

  const array_shape& shape() const { return m_shape; }
  const std::string& backend() const { return m_backend; }
  codec_mode mode() const { return m_mode; }
  // The grid compress_frame codes: shape(), or shape() folded.
  const array_shape& frame_coded_shape() const { return m_frame_shape; }
  // Whether the backend reads host memory itself (no copies).
  bool backend_reads_host_memory() const;
  // The largest bare stream (of shape()), and the largest frame (of frame_coded_shape()).
  std::size_t size_bound() const;
  std::size_t frame_size_bound() const;

  // Compresses the shape().byte_size() bytes of values (C order) at `values` into the bare stream
  // at `stream`; returns its size. ndzip::capacity_error, before writing, if `capacity` is too
  // small for this stream (size_bound() always suffices).
  std::size_t compress(const void* values, void* stream, std::size_t capacity,
                       buffer_location where = buffer_location::host,
                       const input_done& done = {});
  // Decompresses the bare stream of `stream_bytes` bytes (or more: the rest is ignored) into
  // shape().byte_size() bytes at `values`; returns the bytes of stream consumed.
  std::size_t decompress(const void* stream, std::size_t stream_bytes, void* values,
                         buffer_location where = buffer_location::host,
                         const input_done& done = {});

  // The same into and from a frame (header and stream; ndzip/frame_format.hpp) in host memory;
  // `where` is the values' location. compress_frame codes frame_coded_shape(); decompress_frame
  // reads a frame of shape() in mode() coded in any rank (folded or not). It checks the frame
  // whole (inspect_frame, verify_frame_checksum) and that it holds an array of shape() in mode()
  // before decoding, and that the stream was consumed exactly: ndzip::frame_error otherwise.
  std::size_t compress_frame(const void* values, void* frame, std::size_t capacity,
                             buffer_location where = buffer_location::host,
                             const input_done& done = {});
  void decompress_frame(const void* frame, std::size_t frame_bytes, void* values,
                        buffer_location where = buffer_location::host);

  struct typed_codec;  // the typed compressor (and its staging) behind the run-time shape
  struct codecs;       // one typed codec for each rank the array is coded in, made when needed

 private:
  // The codec of shape() folded to `coded_rank` (its own rank: the bare stream's).
  typed_codec& codec(int coded_rank);

  std::string m_backend;
  array_shape m_shape;
  codec_mode m_mode;
  array_shape m_frame_shape;
  std::unique_ptr<codecs> m_codecs;
};

// Decompresses part of the array a frame holds: the box whose first element is at `start` and
// whose element type, rank and extents are `box`'s (slowest first; entries past its rank
// ignored), from a frame of any version (1 to 3, ndzip/frame_format.hpp; 4, the chunked frame)
// of `frame_bytes` bytes in host memory, on the backend named `backend`, into box.byte_size()
// bytes at `values` (the box in C order) in host memory or in the backend's own memory
// (`where`), as dynamic_compressor::decompress_frame writes values: through staging memory of
// the backend where it cannot write them or they are misaligned. Only what the box touches is
// decoded and checked (ndzip::decompress_frame_region, ndzip/frame_region.hpp). Throws
// ndzip::frame_error if the frame is damaged where it is read or holds another element type or
// rank than `box`; std::invalid_argument for an empty box or one outside the array, a backend
// this build lacks, or `values` overlapping the frame; ndzip::stream_error for a stream
// inconsistent with its grid where it is decoded. Each call makes the codecs it needs and
// completes before it returns.
NDZIP_EXPORT void decompress_frame_region(std::string_view backend, const void* frame,
                                          std::size_t frame_bytes, const array_shape& box,
                                          const std::array<std::uint64_t, 3>& start,
                                          void* values,
                                          buffer_location where = buffer_location::host);
// The same on the caller's stream of a GPU backend (native_stream); std::invalid_argument for
// a backend without streams.
NDZIP_EXPORT void decompress_frame_region(std::string_view backend, native_stream stream,
                                          const void* frame, std::size_t frame_bytes,
                                          const array_shape& box,
                                          const std::array<std::uint64_t, 3>& start,
                                          void* values,
                                          buffer_location where = buffer_location::host);

}  // namespace ndzip
