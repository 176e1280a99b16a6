// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// One-shot compression of Kokkos Views. Each call builds a temporary ndzip::compressor (and so
// allocates its scratch); code that compresses repeatedly should keep a compressor instead.
// The stream is the bare ndzip stream, with no checksum (compressor.hpp); ndzip/frame.hpp puts
// it in a checksummed, self-describing frame for storage and transfer.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <type_traits>

#include "ndzip/compressor.hpp"
#include "ndzip/stream_size.hpp"
#include "ndzip/view_checks.hpp"

namespace ndzip {

// Worst-case stream size for a View (same shape rules as compress()) in `mode`.
template <class ValuesView>
std::size_t compressed_size_bound(const ValuesView& values, codec_mode mode = codec_mode::ndzip) {
  return compressed_size_bound<std::remove_const_t<typename ValuesView::value_type>>(
      grid_of(values), mode);
}

// Compresses `values` into `stream` on `exec` in `mode` (ndzip/codec_mode.hpp); returns the
// stream size in bytes. Completes (the instance is fenced) before returning, since the
// temporary scratch is released at return.
template <class ExecSpace, class ValuesView, class StreamView>
std::size_t compress(const ExecSpace& exec, const ValuesView& values, const StreamView& stream,
                     codec_mode mode = codec_mode::ndzip) {
  using T = std::remove_const_t<typename ValuesView::value_type>;
  compressor<T, static_cast<int>(ValuesView::rank), ExecSpace> codec(exec, grid_of(values), mode);
  const std::size_t size = codec.compress(values, stream);
  exec.fence();
  return size;
}

// Decompresses `stream`, written in `mode` (a raw stream does not record it), into `values` on
// `exec`; returns the number of stream bytes consumed. Throws ndzip::stream_error if the stream
// does not fit the extents of `values`.
template <class ExecSpace, class StreamView, class ValuesView>
std::size_t decompress(const ExecSpace& exec, const StreamView& stream, const ValuesView& values,
                       codec_mode mode = codec_mode::ndzip) {
  using T = std::remove_const_t<typename ValuesView::value_type>;
  compressor<T, static_cast<int>(ValuesView::rank), ExecSpace> codec(exec, grid_of(values), mode);
  return codec.decompress(stream, values);
}

// Decompresses the box of the `grid` grid (slowest first) whose first element is at `start` and
// whose extents are those of `values`, from `stream` written in `mode`, into `values` on `exec`
// (ndzip::compressor::decompress_region: in the default mode only the hypercubes the box
// touches are decoded). Returns the stream's bytes.
template <class ExecSpace, class StreamView, class ValuesView>
std::size_t decompress_region(const ExecSpace& exec, const StreamView& stream,
                              const extent<static_cast<int>(ValuesView::rank)>& grid,
                              const std::array<std::size_t, ValuesView::rank>& start,
                              const ValuesView& values, codec_mode mode = codec_mode::ndzip) {
  using T = std::remove_const_t<typename ValuesView::value_type>;
  compressor<T, static_cast<int>(ValuesView::rank), ExecSpace> codec(exec, grid, mode);
  return codec.decompress_region(stream, start, values);
}

}  // namespace ndzip
