// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::high_ratio_compressor: the codec's high-ratio mode for one grid shape on one
// execution-space instance, on raw pointers: an ndzip::compressor made with
// ndzip::codec_mode::high_ratio, which runs the mode's engine behind its View calls too, as the
// frame does (a batch_compressor in that mode runs the same engine over all its grids at once). It
// writes and reads the high-ratio stream (docs/FORMAT.md): the ndzip transform with a gray step,
// the border compressed as a 1-D array, and every block's bytes Huffman-coded with code tables
// built for the stream, each block decodable on its own. It stores fewer bytes than the default
// mode on most data (docs/PERFORMANCE.md) and never more than 16 bytes beyond the ndzip size bound
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

#include "ndzip/codec_mode.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/export.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/stream_size.hpp"

namespace ndzip {

// A compressor made with codec_mode::high_ratio, on raw pointers (high_ratio_size_bound and
// high_ratio_smallest_stream_bytes are in ndzip/stream_size.hpp).
template <class T, int Dims, class ExecSpace = Kokkos::DefaultExecutionSpace>
class high_ratio_compressor {
 public:
  using value_type = T;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr int dimensions = Dims;
  // The stream must start at a multiple of this many bytes.
  static constexpr std::size_t stream_alignment = high_ratio_stream_alignment;

  // Throws std::invalid_argument if the grid cannot be represented in the ndzip format.
  high_ratio_compressor(const ExecSpace& exec, const extent<Dims>& grid)
      : m_codec(exec, grid, codec_mode::high_ratio) {}

  const extent<Dims>& grid() const { return m_codec.grid(); }
  const ExecSpace& execution_space_instance() const { return m_codec.execution_space_instance(); }
  std::size_t size_bound() const { return m_codec.size_bound(); }

  // As ndzip::compressor's raw calls; the stream aligned to 8 bytes.
  std::size_t compress_raw(const T* values, std::byte* stream, std::size_t stream_capacity) {
    return m_codec.compress_raw(values, stream, stream_capacity);
  }
  std::size_t decompress_raw(const std::byte* stream, std::size_t stream_size, T* values) {
    return m_codec.decompress_raw(stream, stream_size, values);
  }
  void compress_raw_async(const T* values, std::byte* stream, std::size_t stream_capacity,
                          std::uint64_t* stream_size) {
    m_codec.compress_raw_async(values, stream, stream_capacity, stream_size);
  }
  void decompress_raw_async(const std::byte* stream, std::size_t stream_size, T* values,
                            decompress_outcome* outcome) {
    m_codec.decompress_raw_async(stream, stream_size, values, outcome);
  }
  std::size_t check_outcome(const decompress_outcome& outcome) const {
    return m_codec.check_outcome(outcome);
  }

 private:
  compressor<T, Dims, ExecSpace> m_codec;
};

}  // namespace ndzip
