// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::high_ratio_compressor: the codec's high-ratio mode for one grid shape on one
// execution-space instance, on raw pointers; an ndzip::compressor made with
// ndzip::codec_mode::high_ratio runs it behind its View calls, and so does the frame (a
// batch_compressor in that mode runs the same engine over all its grids at once). It writes
// and reads the high-ratio stream (docs/FORMAT.md): the ndzip transform with a gray step, the
// border compressed as a 1-D array, and every block's bytes Huffman-coded with code tables built
// for the stream, each block decodable on its own. It stores fewer bytes than the default mode on
// most data (docs/PERFORMANCE.md) and never more than 16 bytes beyond the ndzip size bound
// (size_bound()). Like the raw ndzip stream it records no type or extents and carries no checksum:
// keep it in a frame where bytes are stored or sent.
//
// The stream is the same on every backend. Every step, the code tables included, runs on the
// instance: the asynchronous calls only queue kernels (no fence, no host read; the first
// decompression allocates the decoder's scratch), as ndzip::compressor's do, and the
// synchronous ones are those, a fence and a read of the result. It owns all scratch memory:
// about three times the array's byte size in the execution space's memory, allocated when it
// is made, and about the array's size more for the decoder.
//
// Threads and memory: as ndzip::compressor (calls on one object are serialised; values and
// stream must not overlap; the stream is untrusted when decompressed and every inconsistency
// throws ndzip::stream_error). Movable, not copyable.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ndzip/codec_mode.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/export.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/format.hpp"

namespace ndzip {

template <class T, int Dims>
constexpr std::size_t high_ratio_size_bound(const extent<Dims>& grid) {
  return high_ratio_header_bytes + compressed_size_bound<T>(grid);
}

// The shortest high-ratio stream of a grid: the header, a byte per code table, the block table
// (8 bytes per hypercube and per 4096 border elements) and the border's last elements raw, or
// the header and the shortest ndzip stream where that is shorter. A reader checks a stream's
// length against it before allocating anything of the grid's size.
template <class T, int Dims>
constexpr std::size_t high_ratio_smallest_stream_bytes(const extent<Dims>& grid) {
  const stream_layout<T, Dims> layout(grid);
  const std::size_t blocks = layout.hypercube_count + layout.border_size / 4096;
  const std::size_t coded =
      high_ratio_header_bytes + sizeof(T) + 4 + 8 * blocks + layout.border_size % 4096 * sizeof(T);
  const std::size_t stored = high_ratio_header_bytes + layout.smallest_stream_bytes();
  return coded < stored ? coded : stored;
}

namespace core::high_ratio {
// The kernels' schedule: a device's (a thread per chunk, per code stream) or a host thread's (a
// thread per block); both write and read the same stream.
template <class ExecSpace>
inline constexpr bool device_schedule =
    !Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
template <class T, int Dims, class ExecSpace, bool DeviceSchedule = device_schedule<ExecSpace>,
          class LaneOps = void>
struct engine;
}  // namespace core::high_ratio

template <class T, int Dims, class ExecSpace = Kokkos::DefaultExecutionSpace>
class NDZIP_EXPORT high_ratio_compressor {
 public:
  using value_type = T;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr int dimensions = Dims;
  // The stream must start at a multiple of this many bytes.
  static constexpr std::size_t stream_alignment = high_ratio_stream_alignment;

  // Throws std::invalid_argument if the grid cannot be represented in the ndzip format.
  high_ratio_compressor(const ExecSpace& exec, const extent<Dims>& grid);
  ~high_ratio_compressor();
  high_ratio_compressor(high_ratio_compressor&&) noexcept;
  high_ratio_compressor& operator=(high_ratio_compressor&&) noexcept;

  const extent<Dims>& grid() const { return m_grid; }
  const ExecSpace& execution_space_instance() const { return m_exec; }
  std::size_t size_bound() const { return high_ratio_size_bound<T>(m_grid); }

  // As ndzip::compressor's raw calls; the stream aligned to 8 bytes.
  std::size_t compress_raw(const T* values, std::byte* stream, std::size_t stream_capacity);
  std::size_t decompress_raw(const std::byte* stream, std::size_t stream_size, T* values);
  void compress_raw_async(const T* values, std::byte* stream, std::size_t stream_capacity,
                          std::uint64_t* stream_size);
  void decompress_raw_async(const std::byte* stream, std::size_t stream_size, T* values,
                            decompress_outcome* outcome);
  std::size_t check_outcome(const decompress_outcome& outcome) const;

 private:
  ExecSpace m_exec;
  extent<Dims> m_grid;
  std::unique_ptr<core::high_ratio::engine<T, Dims, ExecSpace>> m_engine;
};

}  // namespace ndzip
