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

#include "ndzip/codec_mode.hpp"
#include "ndzip/export.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/frame_format.hpp"

namespace ndzip {

// An element type as a type, for visitors (visit_shape).
template <class T>
struct type_tag {
  using type = T;
};

// "float" or "double", as the command-line tool spells them.
NDZIP_EXPORT const char* element_type_name(element_type type);
// The element type named "float" or "double"; nothing for any other name.
NDZIP_EXPORT std::optional<element_type> parse_element_type(std::string_view name);
// Bytes per element: 4 or 8.
NDZIP_EXPORT std::size_t element_size(element_type type);

// The shape of a dense C-order array: element type, rank 1..3 and extents, slowest first (an
// extent may be 0: an empty array). Its sizes are checked, not assumed to fit in std::size_t.
class NDZIP_EXPORT array_shape {
 public:
  static constexpr int max_rank = 3;

  // An empty one-dimensional float array.
  array_shape() = default;
  // Throws std::invalid_argument unless there are 1 to 3 extents and `type` is one of
  // element_type's values.
  array_shape(element_type type, std::initializer_list<std::uint64_t> extents);
  array_shape(element_type type, int rank, const std::uint64_t* extents);
  template <int Dims>
  array_shape(element_type type, const ndzip::extent<Dims>& grid)
      : array_shape(type, Dims, extents_of(grid).data()) {}

  // The array a frame header records.
  static array_shape of(const frame_info& frame);

  element_type type() const { return m_type; }
  int rank() const { return m_rank; }
  // Extent `axis` (slowest first); std::out_of_range unless 0 <= axis < rank().
  std::uint64_t extent(int axis) const;
  // All three, 0 past rank() (the frame header's form).
  const std::array<std::uint64_t, 3>& extents() const { return m_extents; }
  // extent(axis) as a std::size_t; std::overflow_error where it does not fit.
  std::size_t addressable_extent(int axis) const;

  // Elements and bytes; std::overflow_error where the count does not fit in std::size_t.
  std::size_t element_count() const;
  std::size_t byte_size() const;
  std::size_t element_bytes() const { return element_size(m_type); }

  // The same shape with another element type, or with extent `axis` set to `n`.
  array_shape with_type(element_type type) const;
  array_shape with_extent(int axis, std::uint64_t n) const;

  // "100x200", and "float 100x200".
  std::string extents_string() const;
  std::string to_string() const;

  friend bool operator==(const array_shape& l, const array_shape& r) {
    return l.m_type == r.m_type && l.m_rank == r.m_rank && l.m_extents == r.m_extents;
  }
  friend bool operator!=(const array_shape& l, const array_shape& r) { return !(l == r); }

 private:
  template <int Dims>
  static std::array<std::uint64_t, 3> extents_of(const ndzip::extent<Dims>& grid) {
    std::array<std::uint64_t, 3> e{};
    for (int a = 0; a < Dims; ++a) e[a] = grid[a];
    return e;
  }

  element_type m_type = element_type::float32;
  int m_rank = 1;
  std::array<std::uint64_t, 3> m_extents{};
};

// Returns f(type_tag<T>{}, grid) for the shape's element type T (float or double) and its
// extents as an ndzip::extent<Dims>. Every return of f must have the same type. Throws
// std::overflow_error where an extent does not fit in std::size_t (their product is not
// checked: ndzip::check_grid_representable does that for the codec).
template <class F>
decltype(auto) visit_shape(const array_shape& shape, F&& f) {
  auto with_type = [&](auto tag) -> decltype(auto) {
    auto grid = [&](auto dims) {
      ndzip::extent<decltype(dims)::value> g;
      for (int a = 0; a < decltype(dims)::value; ++a) g[a] = shape.addressable_extent(a);
      return g;
    };
    switch (shape.rank()) {
      case 1:
        return f(tag, grid(std::integral_constant<int, 1>{}));
      case 2:
        return f(tag, grid(std::integral_constant<int, 2>{}));
      default:
        return f(tag, grid(std::integral_constant<int, 3>{}));
    }
  };
  return shape.type() == element_type::float32 ? with_type(type_tag<float>{})
                                               : with_type(type_tag<double>{});
}

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

// ndzip::compressor<T, Dims, ExecSpace> for a shape and a backend chosen at run time. Buffers in
// host memory are copied through the backend's memory where the backend cannot read them (GPUs),
// into memory the compressor keeps for its next calls; values and streams need no particular
// alignment (misaligned ones are copied). Every call completes before it returns (it fences the
// backend's default instance). Errors are those of ndzip::compressor: ndzip::capacity_error
// (nothing written), ndzip::stream_error (a damaged stream; the values are then unspecified),
// ndzip::frame_error, std::invalid_argument (overlapping buffers). Threads: as
// ndzip::compressor (calls on one object are serialised; distinct objects may run concurrently).
// Kokkos must be initialised while a dynamic_compressor exists.
class NDZIP_EXPORT dynamic_compressor {
 public:
  // Called once the input of a call is no longer read, so that the caller may release it:
  // after its copy to a GPU, which then does not need input and output in host memory at once.
  using input_done = std::function<void()>;

  // Throws std::invalid_argument for a backend this build does not have (naming those it has) or
  // a shape the format cannot hold.
  dynamic_compressor(std::string_view backend, const array_shape& shape,
                     codec_mode mode = codec_mode::ndzip);
  ~dynamic_compressor();
  dynamic_compressor(dynamic_compressor&&) noexcept;
  dynamic_compressor& operator=(dynamic_compressor&&) noexcept;

  const array_shape& shape() const { return m_shape; }
  const std::string& backend() const { return m_backend; }
  codec_mode mode() const { return m_mode; }
  // Whether the backend reads host memory itself (no copies).
  bool backend_reads_host_memory() const;
  // The largest stream, and the largest frame.
  std::size_t size_bound() const;
  std::size_t frame_size_bound() const { return frame_header_bytes + size_bound(); }

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
  // `where` is the values' location. decompress_frame checks the frame whole (inspect_frame,
  // verify_frame_checksum) and that it holds an array of shape() in mode() before decoding, and
  // that the stream was consumed exactly: ndzip::frame_error otherwise.
  std::size_t compress_frame(const void* values, void* frame, std::size_t capacity,
                             buffer_location where = buffer_location::host,
                             const input_done& done = {});
  void decompress_frame(const void* frame, std::size_t frame_bytes, void* values,
                        buffer_location where = buffer_location::host);

  struct engine;  // the typed compressor behind the run-time shape

 private:
  std::string m_backend;
  array_shape m_shape;
  codec_mode m_mode;
  std::unique_ptr<engine> m_engine;
};

}  // namespace ndzip
