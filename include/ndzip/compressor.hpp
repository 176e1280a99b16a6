// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::compressor: a reusable codec for one grid shape on one execution-space instance.
// It writes and reads the bare ndzip stream of the original format, which records no type,
// extents or checksum: a damaged stream can decode silently into other values. Bytes that are
// stored or sent belong in a frame (ndzip/frame.hpp: XXH3-64 over every byte, checked before
// decoding) or behind another integrity check (docs/FORMAT.md). It owns all scratch memory. The
// encoder's scratch is allocated by the first compress() that needs it, so a compressor that only
// decompresses never holds it: 8 bytes per hypercube on GPUs when the stream View holds
// size_bound() bytes, otherwise (host backends, or a smaller stream View) a worst-case block per
// hypercube, about 1.03x the array's size. After that, compress() and decompress() allocate
// nothing.
//
// Threads: a compressor may be shared by host threads; its calls are serialised. Distinct
// compressors may be used concurrently from distinct threads; with Kokkos older than 4.4 the
// library serialises all of its calls, and with Kokkos 3.x the OpenMP backend is usable only
// from the thread that initialised Kokkos (other threads get std::logic_error). Movable, not
// copyable (copies would share scratch).
//
// Memory: the values and the stream must not overlap (std::invalid_argument). The stream is
// read as untrusted memory that may even change during a decompress (a buffer shared with
// another process): the result is then unspecified, but no read leaves the stream.
//
// Asynchronous calls (compress_async, decompress_async) only queue kernels on the instance:
// no fence, no allocation (after the compressor's first compression, which allocates the
// encoder's scratch, and in the high-ratio mode its first decompression, the decoder's), no
// deep copy and no host read. Their results (the stream size, or a
// decompress_outcome) are written into Views the caller provides, and are valid, like the
// output, once the instance has been fenced. Calls queued on one compressor run in order, so
// its scratch may be reused by the next call before the previous one has finished; its buffers
// (values, stream, result Views) must stay alive and untouched until then. The synchronous
// calls are these plus one read of the result.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "ndzip/codec_mode.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/detail/engine_fwd.hpp"
#include "ndzip/error.hpp"
#include "ndzip/export.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/format.hpp"
#include "ndzip/stream_size.hpp"
#include "ndzip/view_checks.hpp"

namespace ndzip {

template <class T, int Dims, class ExecSpace = Kokkos::DefaultExecutionSpace>
class NDZIP_EXPORT compressor {
 public:
  using value_type = T;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using bits_type = typename profile<T, Dims>::bits_type;
  static constexpr int dimensions = Dims;
  // The stream must start at a multiple of this many bytes in the default mode (alignment()
  // gives it for the compressor's mode).
  static constexpr std::size_t stream_alignment = sizeof(T);

  // A codec for grids of this extent (slowest dimension first) in ExecSpace's memory, writing
  // and reading the stream of `mode`: the original ndzip stream (the default), or the
  // high-ratio stream (ndzip/high_ratio.hpp: smaller, slower; its scratch, about three times
  // the array's size, is allocated here, and as much again by the first decompression). Throws
  // std::invalid_argument if the grid cannot be represented in the ndzip format, or for a mode that
  // is not one of these.
  compressor(const ExecSpace& exec, const extent<Dims>& grid, codec_mode mode = codec_mode::ndzip);
  ~compressor();
  compressor(compressor&&) noexcept;
  compressor& operator=(compressor&&) noexcept;

  const extent<Dims>& grid() const { return m_grid; }
  const ExecSpace& execution_space_instance() const { return m_exec; }
  codec_mode mode() const { return m_mode; }
  std::size_t size_bound() const { return compressed_size_bound<T>(m_grid, m_mode); }
  std::size_t alignment() const { return stream_alignment_of<T>(m_mode); }

  // Throws ndzip::stream_error if no stream of this grid fits in `stream_size` bytes (every
  // stream holds at least the offset table, the chunk heads and the border). decompress() checks
  // this itself; a caller that allocates the output for an untrusted stream checks it first.
  void check_stream_size(std::size_t stream_size) const;

  // Compresses `values` (a contiguous View of this grid's extents; LayoutLeft extents are
  // read reversed) into `stream` (a contiguous rank-1 View of bytes) and returns the stream
  // size in bytes. The stream size is known on return; the kernels that write the stream are
  // queued on the execution-space instance (fence it before reading the bytes on the host).
  // Throws ndzip::capacity_error, before writing anything, if the stream View is too small.
  template <class ValuesView, class StreamView>
  std::size_t compress(const ValuesView& values, const StreamView& stream) {
    check_values_view<T, Dims, memory_space>(values, m_grid);
    check_stream_view<memory_space>(stream);
    return compress_raw(values.data(), reinterpret_cast<std::byte*>(stream.data()), stream.size());
  }

  // Decompresses `stream` into `values`; returns the number of stream bytes consumed (a stream
  // View longer than the stream is accepted; all of it must be disjoint from `values`: else
  // std::invalid_argument, before anything is written). The stream is untrusted: anything
  // inconsistent with this grid throws ndzip::stream_error, and the contents of `values` are
  // then unspecified. Returns once the output is complete (the instance is fenced once, to read
  // the outcome of the checks).
  template <class StreamView, class ValuesView>
  std::size_t decompress(const StreamView& stream, const ValuesView& values) {
    check_stream_view<memory_space>(stream);
    check_values_view<T, Dims, memory_space>(values, m_grid);
    static_assert(!std::is_const_v<typename ValuesView::value_type>,
                  "ndzip::decompress needs a writable values View");
    return decompress_raw(reinterpret_cast<const std::byte*>(stream.data()), stream.size(),
                          values.data());
  }

  // Decompresses only a box of the grid: the one whose first element is at `start` (slowest
  // first, as grid_of gives extents) and whose extents are those of `values`, which receives it
  // in C order (a View of the box's shape: box.count = grid_of(values)). In the default mode
  // only the hypercubes the box touches are decoded, and the stream's border only where the box
  // lies in it; the high-ratio stream decodes in full, into a buffer of the grid's size that the
  // compressor keeps for its next region. Throws std::invalid_argument if the box is empty or
  // does not lie inside the grid, ndzip::stream_error for a stream inconsistent with the grid
  // where it is read (blocks outside the box are not read, so not checked: a frame's checksum
  // covers them). Returns the stream bytes the stream takes; completes before returning.
  template <class StreamView, class ValuesView>
  std::size_t decompress_region(const StreamView& stream, const std::array<std::size_t, Dims>& start,
                                const ValuesView& values) {
    check_stream_view<memory_space>(stream);
    static_assert(!std::is_const_v<typename ValuesView::value_type>,
                  "ndzip::decompress_region needs a writable values View");
    check_values_view<T, Dims, memory_space>(values, grid_of(values));
    return decompress_region_raw(reinterpret_cast<const std::byte*>(stream.data()),
                                 stream.size(), start, grid_of(values), values.data());
  }

  // Queues the compression of `values` into `stream` and returns at once; `stream_size` (a
  // rank-0 View of std::uint64_t that the instance can write: device memory, or host-pinned
  // memory to read without a copy) receives the stream size in bytes. The stream View must hold
  // size_bound() bytes: otherwise ndzip::capacity_error, before anything is queued.
  template <class ValuesView, class StreamView, class SizeView>
  void compress_async(const ValuesView& values, const StreamView& stream,
                      const SizeView& stream_size) {
    check_values_view<T, Dims, memory_space>(values, m_grid);
    check_stream_view<memory_space>(stream);
    check_result_view<std::uint64_t>(stream_size);
    compress_raw_async(values.data(), reinterpret_cast<std::byte*>(stream.data()), stream.size(),
                       stream_size.data());
  }

  // Queues the decompression of `stream` into `values` and returns at once; `outcome` (a rank-0
  // View of ndzip::decompress_outcome that the instance can write: device memory, or host-pinned
  // memory to read without a copy) receives the bytes consumed or the first inconsistency
  // found; check_outcome() turns it into decompress()'s result or exception. Errors that the
  // sizes alone show (a stream View shorter than the smallest stream, overlapping buffers) are
  // thrown here, before anything is queued.
  template <class StreamView, class ValuesView, class OutcomeView>
  void decompress_async(const StreamView& stream, const ValuesView& values,
                        const OutcomeView& outcome) {
    check_stream_view<memory_space>(stream);
    check_values_view<T, Dims, memory_space>(values, m_grid);
    static_assert(!std::is_const_v<typename ValuesView::value_type>,
                  "ndzip::decompress_async needs a writable values View");
    check_result_view<decompress_outcome>(outcome);
    decompress_raw_async(reinterpret_cast<const std::byte*>(stream.data()), stream.size(),
                         values.data(), outcome.data());
  }

  // The number of stream bytes consumed by the decompression that wrote `outcome` (read on the
  // host after the instance was fenced), or the ndzip::stream_error that decompress() would have
  // thrown for the same stream.
  std::size_t check_outcome(const decompress_outcome& outcome) const;

  // The same on raw pointers into memory_space: `values` holds grid().size() elements in C
  // order; `stream` must be aligned to alignment(), and the two ranges
  // ([stream, stream + capacity or size) and the values) must not overlap. `stream_size` and
  // `outcome` point into memory the instance can write.
  std::size_t compress_raw(const T* values, std::byte* stream, std::size_t stream_capacity);
  std::size_t decompress_raw(const std::byte* stream, std::size_t stream_size, T* values);
  void compress_raw_async(const T* values, std::byte* stream, std::size_t stream_capacity,
                          std::uint64_t* stream_size);
  void decompress_raw_async(const std::byte* stream, std::size_t stream_size, T* values,
                            decompress_outcome* outcome);
  // `values` holds count.size() elements: the box at `start` of extents `count`, in C order.
  std::size_t decompress_region_raw(const std::byte* stream, std::size_t stream_size,
                                    const std::array<std::size_t, Dims>& start,
                                    const extent<Dims>& count, T* values);

 private:
  ExecSpace m_exec;
  extent<Dims> m_grid;
  codec_mode m_mode;
  // The mode's codec and all of its scratch (core/engine.hpp), which every call is handed to.
  std::unique_ptr<core::engine<T, Dims, ExecSpace>> m_engine;

  template <class Value, class View>
  static void check_result_view(const View&) {
    static_assert(Kokkos::is_view<View>::value && View::rank == 0 &&
                      std::is_same_v<typename View::value_type, Value>,
                  "ndzip: the result of an asynchronous call goes into a rank-0 View of "
                  "std::uint64_t (compress) or ndzip::decompress_outcome (decompress)");
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                  "ndzip: the result View is not accessible from the compressor's execution space");
  }
};

}  // namespace ndzip
