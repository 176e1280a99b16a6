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
  virtual void run_decompress_batch(const item_type* items, decompress_outcome* outcomes) = 0;

  const ExecSpace m_exec;
  const std::vector<extent<Dims>> m_grids;

 private:
  void check_stream_pointer(const std::byte* stream) const {
    if (reinterpret_cast<std::uintptr_t>(stream) % stream_alignment() != 0)
      throw std::invalid_argument("ndzip: the stream buffer must be aligned to " +
                                  std::to_string(stream_alignment()) + " bytes in the " +
                                  codec_mode_name(m_mode) + " mode");
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
};

}  // namespace ndzip::core
