// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::batch_compressor: many grids of one element type and rank, each with its own extents,
// compressed or decompressed in one kernel launch (halo faces, AMR patches, per-variable
// checkpoints: arrays too small to fill a GPU one call at a time).
//
// Like a plan, it is made for a fixed list of extents and owns the scratch for them; every call
// then takes a View of batch_item, one per grid in that order: where the grid's values are and
// where its stream goes or comes from, both in memory the execution space can access.
//   - compress_async(items): writes each stream (into room for size_bound(i) bytes) and its
//     size into items(i).stream_bytes; compress_async(items, sizes) also into sizes(i), a View
//     that may lie in host-pinned memory, so that the host reads the sizes after a fence
//     without a copy (to post one MPI send per stream, say).
//   - decompress_async(items, outcomes): decodes items(i).stream_bytes bytes at items(i).stream
//     into items(i).values, and writes what it found into outcomes(i) (check_outcome).
// The items View written by a compression can be passed straight to a decompression. Both
// calls only queue one kernel on the instance: no fence, no allocation (the batch allocates its
// scratch when it is made; Kokkos' host backends may grow their own team scratch at a process's
// first launch), no deep copy and no host read of device memory; results are valid once the
// instance has been fenced. Streams are byte-identical to those of ndzip::compressor for the
// same grid: bare ndzip streams, with no checksum (compressor.hpp says what protects them).
//
// The items. Every values pointer must hold grid(i).size() elements in C order, and every stream
// pointer room for size_bound(i) bytes (compression) or stream_bytes bytes (decompression): no
// address tells how much memory lies behind it, so that is always the caller's word. Compression
// reads each [values, values + grid(i).size()) and writes each [stream, stream + size_bound(i)),
// the items (their stream_bytes) and the sizes; decompression reads each
// [stream, stream + stream_bytes) and the items, and writes each values array and the outcomes.
//   - Host backends (execution spaces that can access HostSpace: Serial, OpenMP, Threads) read
//     the items on the host when the call is made, before its kernel is queued, and throw
//     std::invalid_argument (naming the items and what is wrong; nothing written, nothing
//     queued) if a values or stream pointer with at least one byte to access is null, if one is
//     not aligned to sizeof(T), or if a range the call writes shares a byte with another range
//     it reads or writes (ranges that are only read may overlap: one stream decoded into several
//     grids). Pointers are checked first, item by item, then the ranges. Host backends complete
//     every launch before it returns, so the items read then are those the kernel reads, with
//     the stream_bytes of an earlier compression queued on these items. Cost: a pass over the
//     items and a sweep over their 2 * size() + 2 ranges, sorted first unless they already lie
//     in address order, in scratch reserved when the batch is made (10^5 grids of 16 floats,
//     one core of a busy machine: 5 ms in address order, 15-18 ms in reverse order, next to
//     11 ms for the kernel).
//   - Device backends (CUDA, HIP) do not read the items on the host: work queued on the instance
//     may still be writing them (a compression's stream_bytes, a kernel that fills them), so
//     reading them would take a fence. There every item rule above is a precondition that
//     nothing checks: a null or misaligned pointer faults in the kernel, and overlapping ranges
//     give unspecified streams and values.
// The streams' contents are untrusted: a decompression never reads outside
// [stream, stream + stream_bytes) and reports every inconsistency in the outcome.
//
// The high-ratio mode (codec_mode::high_ratio, ndzip/high_ratio.hpp): every grid's stream is the
// high-ratio stream that ndzip::high_ratio_compressor writes for it, byte for byte, and each
// step of the codec runs once for all grids (a launch per step, not per grid). The calls queue
// more kernels (about twenty) but still never wait for the host. What changes:
//   - size_bound(i) is the high-ratio bound (16 bytes above the default one), and every stream
//     pointer must be aligned to 8 bytes (stream_alignment());
//   - the batch allocates about three times the grids' bytes when it is made, plus, at its
//     first decompression, as much again and the decoder's tables (about 100 KB per grid:
//     the mode is for grids of megabytes, not for thousands of tiny ones);
//   - a decompressed stream shorter than the 16-byte header is reported in its grid's outcome,
//     and so is a misaligned one on a device backend (host backends refuse that one with
//     std::invalid_argument, as every item rule); a misaligned stream pointer given to a device
//     compression still faults.
//
// Threads: like ndzip::compressor (calls on one batch_compressor are serialised; calls queued on
// it run in order, so its scratch is reused safely). Movable, not copyable.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "ndzip/codec_mode.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/detail/engine_fwd.hpp"
#include "ndzip/error.hpp"
#include "ndzip/export.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/stream_size.hpp"

namespace ndzip {

// One grid of a batch. `values` is only read by compression (a pointer to const data may be
// cast); `stream_bytes` receives the stream size from compression and gives the bytes
// available at `stream` to decompression.
template <class T>
struct batch_item {
  T* values;
  std::byte* stream;
  std::uint64_t stream_bytes;
};

template <class T, int Dims, class ExecSpace = Kokkos::DefaultExecutionSpace>
class NDZIP_EXPORT batch_compressor {
 public:
  using value_type = T;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using item_type = batch_item<T>;
  static constexpr int dimensions = Dims;

  // Scratch for these grids (slowest dimension first), in this order, writing and reading the
  // streams of `mode`. Throws std::invalid_argument if a grid cannot be represented in the
  // ndzip format, if the batch needs more teams than one launch holds (INT_MAX), or for a mode
  // that is not one of codec_mode's.
  batch_compressor(const ExecSpace& exec, const std::vector<extent<Dims>>& grids,
                   codec_mode mode = codec_mode::ndzip);
  ~batch_compressor();
  batch_compressor(batch_compressor&&) noexcept;
  batch_compressor& operator=(batch_compressor&&) noexcept;

  std::size_t size() const { return m_grids.size(); }
  const extent<Dims>& grid(std::size_t i) const { return m_grids.at(i); }
  codec_mode mode() const { return m_mode; }
  std::size_t size_bound(std::size_t i) const { return compressed_size_bound<T>(grid(i), m_mode); }
  // Every stream pointer must be a multiple of this many bytes.
  std::size_t stream_alignment() const { return stream_alignment_of<T>(m_mode); }
  const ExecSpace& execution_space_instance() const { return m_exec; }

  // Queues the compression of every grid; `items` is a rank-1 View of size() batch_items.
  template <class ItemsView>
  void compress_async(const ItemsView& items) {
    check_items<false>(items);
    compress_raw_async(items.data());
  }

  // The same, every stream size also written into `sizes`, a rank-1 View of size()
  // std::uint64_t (device or host-pinned memory).
  template <class ItemsView, class SizesView>
  void compress_async(const ItemsView& items, const SizesView& sizes) {
    check_items<false>(items);
    check_results<std::uint64_t>(sizes, "sizes");
    compress_raw_async(items.data(), sizes.data());
  }

  // Queues the decompression of every grid; `outcomes` is a rank-1 View of size()
  // decompress_outcome (device or host-pinned memory).
  template <class ItemsView, class OutcomesView>
  void decompress_async(const ItemsView& items, const OutcomesView& outcomes) {
    check_items<true>(items);
    check_results<decompress_outcome>(outcomes, "outcomes");
    decompress_raw_async(items.data(), outcomes.data());
  }

  // The bytes consumed from grid i's stream by the decompression that wrote `outcome` (read on
  // the host after the instance was fenced), or the ndzip::stream_error that
  // ndzip::compressor::decompress would have thrown for that stream, its message naming the
  // array ("ndzip: array i: invalid stream: ...").
  std::size_t check_outcome(std::size_t i, const decompress_outcome& outcome) const;

  // The same on raw pointers to size() items, sizes (null: none) and outcomes.
  void compress_raw_async(item_type* items, std::uint64_t* sizes = nullptr);
  void decompress_raw_async(const item_type* items, decompress_outcome* outcomes);

 private:
  ExecSpace m_exec;
  std::vector<extent<Dims>> m_grids;
  codec_mode m_mode;
  // The mode's codec and all of its scratch (core/engine.hpp), which every call is handed to.
  std::unique_ptr<core::engine<T, Dims, ExecSpace>> m_engine;

  template <bool ForDecompression, class ItemsView>
  void check_items(const ItemsView& items) const {
    using value = std::remove_const_t<typename ItemsView::value_type>;
    static_assert(Kokkos::is_view<ItemsView>::value && ItemsView::rank == 1 &&
                      std::is_same_v<value, item_type>,
                  "ndzip: a batch's items are a rank-1 View of ndzip::batch_item<T>");
    static_assert(ForDecompression || !std::is_const_v<typename ItemsView::value_type>,
                  "ndzip: compression writes the stream sizes into the items View");
    static_assert(
        Kokkos::SpaceAccessibility<ExecSpace, typename ItemsView::memory_space>::accessible,
        "ndzip: the items View is not accessible from the batch's execution space");
    check_count(items.extent(0), "items");
    check_contiguous(items.span_is_contiguous(), "items");
  }
  // A View the kernels write one result per grid into (stream sizes, outcomes).
  template <class Value, class View>
  void check_results(const View& results, const char* what) const {
    static_assert(Kokkos::is_view<View>::value && View::rank == 1 &&
                      std::is_same_v<typename View::value_type, Value>,
                  "ndzip: a batch's stream sizes go into a rank-1 View of std::uint64_t, its "
                  "outcomes into one of ndzip::decompress_outcome");
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                  "ndzip: the sizes or outcomes View is not accessible from the batch's "
                  "execution space");
    check_count(results.extent(0), what);
    check_contiguous(results.span_is_contiguous(), what);
  }
  void check_contiguous(bool contiguous, const char* what) const;
  void check_count(std::size_t count, const char* what) const;
};

}  // namespace ndzip
