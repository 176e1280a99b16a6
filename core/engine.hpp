// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// core::engine: a codec mode for a list of grids on one execution-space instance, the one
// interface every mode implements (core/ndzip_engine.hpp: the default ndzip stream;
// core/high_ratio/engine.hpp: the high-ratio stream). ndzip::compressor (and so
// high_ratio_compressor and dynamic_compressor) holds the engine of one grid,
// ndzip::batch_compressor the engine of its grids; they forward every call to it, and
// core::make_engine (core/make_engine.hpp) is the one place that picks a mode's engine.
//
// What is the same in every mode is done here, before a mode's own step runs: the call is
// serialised (the engine's scratch is shared by its calls), and the buffers are checked as the
// mode's stream needs them (aligned, disjoint from the values, room for the bound where the
// call cannot refuse later, a stream as long as the grid's smallest); a batch's items are
// checked on host backends (core/batch_checks.hpp). A mode's own steps (run_*) then queue its
// kernels; they take the library's lock themselves (core/call_guard.hpp), around launches only
// where they call another engine, which takes it too.
//
// An engine made for one grid serves the single-grid calls, one made for a list the batch calls.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/batch_checks.hpp"
#include "core/call_guard.hpp"
#include "core/region_copy.hpp"
#include "core/stream_status.hpp"
#include "ndzip/batch_compressor.hpp"
#include "ndzip/codec_mode.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/detail/disjoint.hpp"
#include "ndzip/error.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/stream_size.hpp"

namespace ndzip::core {

template <class T, int Dims, class ExecSpace>
class engine {
 public:
  using value_type = T;
  using item_type = batch_item<T>;
  static constexpr int dimensions = Dims;

  virtual ~engine() = default;
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  const extent<Dims>& grid(std::size_t g) const { return m_grids[g]; }
  std::size_t size_bound(std::size_t grid) const {
    return compressed_size_bound<T>(m_grids[grid], m_mode);
  }
  std::size_t stream_alignment() const { return stream_alignment_of<T>(m_mode); }

  // One grid's calls, as ndzip::compressor's raw calls (that header says what each does and
  // throws). The synchronous ones fence the instance once, to read the result.
  std::size_t compress(const T* values, std::byte* stream, std::size_t capacity) {
    check_compression_buffers(values, stream, capacity);
    const std::lock_guard<std::mutex> lock(m_calls);
    return run_compress(values, stream, capacity);
  }

  void compress_async(const T* values, std::byte* stream, std::size_t capacity,
                      std::uint64_t* stream_bytes) {
    check_compression_buffers(values, stream, capacity);
    if (capacity < size_bound(0))
      throw capacity_error("ndzip: an asynchronous compression needs a stream of size_bound = " +
                           std::to_string(size_bound(0)) + " bytes, but the output holds only " +
                           std::to_string(capacity));
    const std::lock_guard<std::mutex> lock(m_calls);
    run_compress_async(values, stream, capacity, stream_bytes);
  }

  std::size_t decompress(const std::byte* stream, std::size_t stream_size, T* values) {
    check_decompression_buffers(stream, stream_size, values);
    const std::lock_guard<std::mutex> lock(m_calls);
    return run_decompress(stream, stream_size, values);
  }

  void decompress_async(const std::byte* stream, std::size_t stream_size, T* values,
                        decompress_outcome* outcome) {
    check_decompression_buffers(stream, stream_size, values);
    const std::lock_guard<std::mutex> lock(m_calls);
    run_decompress_async(stream, stream_size, values, outcome);
  }

  // Decodes the box `box` of the grid from `stream` into `values` (the box's elements in C
  // order), as ndzip::compressor::decompress_region. Synchronous.
  std::size_t decompress_region(const std::byte* stream, std::size_t stream_size,
                                const region_box<Dims>& box, T* values) {
    check_stream_pointer(stream);
    check_region(box);
    detail::check_disjoint(values, box.count.size() * sizeof(T), stream, stream_size);
    check_stream_size(stream_size);
    const std::lock_guard<std::mutex> lock(m_calls);
    return run_decompress_region(stream, stream_size, box, values);
  }

  // Throws ndzip::stream_error unless a stream of grid `g` can be `stream_size` bytes long.
  void check_stream_size(std::size_t stream_size, std::size_t g = 0) const {
    core::check_stream_size<T>(m_grids[g], stream_size, m_mode);
  }

  // A batch's calls, as ndzip::batch_compressor's raw calls; `sizes` may be null.
  void compress_batch(item_type* items, std::uint64_t* sizes) {
    const std::lock_guard<std::mutex> lock(m_calls);
    if (m_grids.empty()) return;
    if constexpr (checks_items_on_host)
      check_items_on_host(batch_call::compression, m_mode, m_grids, items, sizes,
                          m_grids.size() * sizeof(std::uint64_t), m_ranges);
    run_compress_batch(items, sizes);
  }

  void decompress_batch(const item_type* items, decompress_outcome* outcomes) {
    const std::lock_guard<std::mutex> lock(m_calls);
    if (m_grids.empty()) return;
    if constexpr (checks_items_on_host)
      check_items_on_host(batch_call::decompression, m_mode, m_grids, items, outcomes,
                          m_grids.size() * sizeof(decompress_outcome), m_ranges);
    run_decompress_batch(items, outcomes);
  }

  // The message of the ndzip::stream_error that grid g's failed outcome stands for.
  virtual std::string describe_failure(const decompress_outcome& outcome, std::size_t g) const = 0;

  // The stream bytes consumed by grid g's decompression, which wrote `outcome`, or the
  // ndzip::stream_error it found.
  std::size_t check_outcome(const decompress_outcome& outcome, std::size_t g) const {
    if (outcome.failure != decompress_outcome::no_failure)
      throw stream_error(describe_failure(outcome, g));
    return outcome.stream_bytes;
  }

 protected:
  // Whether a batch's items are checked on the host before every call
  // (ndzip/batch_compressor.hpp).
  static constexpr bool checks_items_on_host =
      Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

  engine(const ExecSpace& exec, std::vector<extent<Dims>> grids, codec_mode mode, bool batch)
      : m_exec(exec), m_grids(std::move(grids)), m_mode(mode) {
    for (const extent<Dims>& grid : m_grids) check_grid_representable<T>(grid);
    // A values and a stream range per grid, the items and the sizes or outcomes.
    if (checks_items_on_host && batch) m_ranges.reserve(2 * m_grids.size() + 2);
  }

  // The mode's own steps, called with the engine's calls serialised and the buffers checked.
  virtual std::size_t run_compress(const T* values, std::byte* stream, std::size_t capacity) = 0;
  virtual void run_compress_async(const T* values, std::byte* stream, std::size_t capacity,
                                  std::uint64_t* stream_bytes) = 0;
  virtual std::size_t run_decompress(const std::byte* stream, std::size_t stream_size,
                                     T* values) = 0;
  virtual void run_decompress_async(const std::byte* stream, std::size_t stream_size, T* values,
                                    decompress_outcome* outcome) = 0;
  virtual void run_compress_batch(item_type* items, std::uint64_t* sizes) = 0;
  // A mode whose stream cannot be decoded in part: the whole grid into the engine's region
  // buffer (allocated by the first call, kept for the next), and the box copied out of it.
  virtual std::size_t run_decompress_region(const std::byte* stream, std::size_t stream_size,
                                            const region_box<Dims>& box, T* values) {
    using bits_type = typename profile<T, Dims>::bits_type;
    const extent<Dims>& grid = m_grids[0];
    bits_type* decoded = region_buffer(grid.size());
    const std::size_t consumed = run_decompress(stream, stream_size,
                                                reinterpret_cast<T*>(decoded));
    copy_region<T, Dims, ExecSpace> copy{stream_layout<T, Dims>(grid), box, {}, {}, grid,
                                         decoded, stream, nullptr,
                                         reinterpret_cast<bits_type*>(values)};
    for (int a = 0; a < Dims; ++a) copy.covered[a] = grid[a];
    launch_region_copy(copy);
    const call_guard<ExecSpace> guard(nullptr);
    m_exec.fence();
    return consumed;
  }
  virtual void run_decompress_batch(const item_type* items, decompress_outcome* outcomes) = 0;

  // The region decoder's buffer of at least `elements` words, grown where a call needs more.
  typename profile<T, Dims>::bits_type* region_buffer(std::size_t elements) {
    if (m_region_buffer.extent(0) < elements) {
      const call_guard<ExecSpace> guard(nullptr);
      m_region_buffer = {};  // released before the larger one is allocated
      m_region_buffer = decltype(m_region_buffer)(
          Kokkos::view_alloc(m_exec, Kokkos::WithoutInitializing, "ndzip::region_buffer"),
          elements);
    }
    return m_region_buffer.data();
  }

  // Queues a region's copy (core/region_copy.hpp) on the instance.
  void launch_region_copy(copy_region<T, Dims, ExecSpace>& copy) {
    const call_guard<ExecSpace> guard(nullptr);
    Kokkos::parallel_for("ndzip::copy_region", copy.policy(m_exec), copy);
  }

  const ExecSpace m_exec;
  const std::vector<extent<Dims>> m_grids;

 private:
  // Throws std::invalid_argument unless `box` is a non-empty box inside grid 0.
  void check_region(const region_box<Dims>& box) const {
    const extent<Dims>& grid = m_grids[0];
    std::string text;
    bool inside = true, empty = false;
    for (int a = 0; a < Dims; ++a) {
      text += (a ? ", " : "[") + std::to_string(box.start[a]) + ":" +
              std::to_string(box.start[a] + box.count[a]);
      empty = empty || box.count[a] == 0;
      inside = inside && box.start[a] <= grid[a] && box.count[a] <= grid[a] - box.start[a];
    }
    text += "]";
    if (empty)
      throw std::invalid_argument("ndzip: the region " + text + " is empty; a region holds " +
                                  "one element at least");
    if (!inside)
      throw std::invalid_argument("ndzip: the region " + text + " does not lie inside the " +
                                  to_string(grid) + " grid (slowest first)");
  }

  void check_stream_pointer(const std::byte* stream) const {
    check_stream_alignment<T>(stream, m_mode);
  }
  void check_compression_buffers(const T* values, const std::byte* stream,
                                 std::size_t capacity) const {
    check_stream_pointer(stream);
    detail::check_disjoint(values, m_grids[0].size() * sizeof(T), stream, capacity);
  }
  void check_decompression_buffers(const std::byte* stream, std::size_t stream_size,
                                   const T* values) const {
    check_stream_pointer(stream);
    detail::check_disjoint(values, m_grids[0].size() * sizeof(T), stream, stream_size);
    check_stream_size(stream_size);
  }

  const codec_mode m_mode;
  std::mutex m_calls;
  // The ranges of a batch's items (checks_items_on_host), reserved when the engine is made, so
  // that the check allocates nothing.
  std::vector<batch_range> m_ranges;
  Kokkos::View<typename profile<T, Dims>::bits_type*, typename ExecSpace::memory_space>
      m_region_buffer;
};

}  // namespace ndzip::core
