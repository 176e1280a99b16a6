// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Kokkos Views to and from frames (ndzip/frame_format.hpp: a raw ndzip stream behind a header
// that records the element type, the extents, the stream length and a checksum). The frame
// lies in host memory (a file's or a message's bytes); the values may lie in any memory space
// the execution space can access.
//
//   Kokkos::View<std::byte*, Kokkos::HostSpace> frame("frame", ndzip::frame_size_bound(field));
//   const std::size_t bytes = ndzip::compress_frame(exec, field, frame);  // the frame's size
//
//   // Reading `size` bytes at `data` that should be a frame of a 3-D float array: ask it what
//   // it holds, then decode it into a View of that shape.
//   const ndzip::frame_info info = ndzip::inspect_frame(data, size);  // type, extents, sizes
//   Kokkos::View<float***, Kokkos::LayoutRight> out("out", info.extents[0], info.extents[1],
//                                                   info.extents[2]);
//   Kokkos::View<const std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> in(data, size);
//   ndzip::decompress_frame(exec, in, out);  // ndzip::frame_error unless `out` fits the frame
//
// Like the one-shot functions of ndzip/view_api.hpp, each call builds a temporary compressor
// (allocating its scratch) and completes before it returns.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "ndzip/array_shape.hpp"
#include "ndzip/chunked_frame.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/detail/frame_views.hpp"
#include "ndzip/error.hpp"
#include "ndzip/export.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/folding.hpp"
#include "ndzip/frame_format.hpp"
#include "ndzip/stream_size.hpp"
#include "ndzip/view_api.hpp"
#include "ndzip/view_checks.hpp"

namespace ndzip {

namespace detail {

// Whether one stream holds `grid` coded in `coded_rank` dimensions; where none does (its offset
// table would need more than 32 bits), compress_frame writes a chunked frame.
template <class T, int Dims>
bool one_stream_holds(const extent<Dims>& grid, int coded_rank) {
  try {
    with_coded_grid<T>(grid, coded_rank, [](const auto& coded) {
      check_grid_representable<T>(coded);
      return 0;
    });
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

}  // namespace detail

// The most bytes compress_frame writes for `values` in `mode`, folded or not: the header and
// the larger compressed_size_bound of the grid as it is and of the grid the rule folds it into
// (or, for a grid that no stream holds, chunked_frame_size_bound).
template <class ValuesView>
std::size_t frame_size_bound(const ValuesView& values, codec_mode mode = codec_mode::ndzip) {
  using T = std::remove_const_t<typename ValuesView::value_type>;
  const auto grid = grid_of(values);
  if (!detail::one_stream_holds<T>(grid, static_cast<int>(ValuesView::rank)))
    return chunked_frame_size_bound(values, 0, mode);
  const std::size_t folded_bound = detail::with_coded_grid<T>(
      grid, detail::coded_rank<T>(grid, folding::automatic),
      [&](const auto& coded) { return compressed_size_bound<T>(coded, mode); });
  return frame_header_bytes + std::max(compressed_size_bound<T>(grid, mode), folded_bound);
}

// Compresses `values` (a contiguous View, as for compress; not empty: a frame's extents are at
// least 1, else std::invalid_argument) on `exec` into a frame at the start of `frame`, a
// contiguous rank-1 View of bytes in host-accessible memory, and returns the frame's size.
// Throws ndzip::capacity_error if `frame` holds fewer bytes than the frame needs
// (frame_size_bound always suffices), and std::invalid_argument if the values overlap the
// frame View (header or stream), before anything is written. `mode`: the stream's coding, the
// original ndzip stream (a version 1 frame) or the high-ratio stream (version 2). `fold`: with
// folding::automatic (the default) an array with few elements in whole hypercubes is coded as
// the grid of lower rank its slowest dimensions merge into (a version 3 frame; ndzip/folding.hpp),
// with folding::none always as it is. A grid that no single stream holds (the format's offset
// table is 32-bit: about 2^32 words of stream) is written as a chunked frame of default slabs
// (ndzip/chunked_frame.hpp, version 4), which decompress_frame reads as well.
template <class ExecSpace, class ValuesView, class FrameView>
std::size_t compress_frame(const ExecSpace& exec, const ValuesView& values, const FrameView& frame,
                           codec_mode mode = codec_mode::ndzip,
                           folding fold = folding::automatic) {
  using T = std::remove_const_t<typename ValuesView::value_type>;
  constexpr int Dims = static_cast<int>(ValuesView::rank);
  static_assert(!std::is_const_v<typename FrameView::value_type>,
                "ndzip::compress_frame writes into the frame View");
  detail::check_frame_view(frame);
  const extent<Dims> grid = grid_of(values);
  detail::check_frame_output(grid.size(), detail::view_label(values), frame.size());
  detail::check_frame_disjoint<T>(values, grid, frame);
  if (!detail::one_stream_holds<T>(grid, Dims))
    return compress_chunked_frame(exec, values, frame, 0, mode);

  std::byte* const out = reinterpret_cast<std::byte*>(frame.data());
  std::byte* const stream = out + frame_header_bytes;
  const int coded_rank = detail::coded_rank<T>(grid, fold);
  const std::size_t stream_bytes = detail::with_coded_view(
      values, grid, coded_rank, [&](const auto& coded_values, const auto& coded_grid) {
        constexpr int Rank = std::decay_t<decltype(coded_grid)>::dimensions;
        compressor<T, Rank, ExecSpace> codec(exec, coded_grid, mode);
        return detail::compress_into_frame<typename FrameView::memory_space>(
            codec, coded_values, stream, frame.size() - frame_header_bytes);
      });
  exec.fence();  // the header's checksum reads the stream on the host

  const auto header = encode_frame_header(element_type_of<T>(), Dims, detail::frame_extents(grid),
                                          stream, stream_bytes, mode, coded_rank);
  std::copy(header.begin(), header.end(), out);
  return frame_header_bytes + stream_bytes;
}

// Decompresses the frame `frame` (a contiguous rank-1 View of bytes in host-accessible memory,
// holding exactly one frame, of version 1 to 3, or a chunked frame: decompress_chunked_frame)
// into `values` on `exec`. Before decoding, throws ndzip::frame_error
// if the frame is damaged (inspect_frame, verify_frame_checksum) or if `values` differs from the
// array it holds in element type, rank or extents (slowest first, as grid_of gives them; a
// LayoutLeft View's are reversed; a frame of a folded array decodes into a View of the array),
// and std::invalid_argument if `values` overlaps the frame
// View (header or stream). A stream inconsistent with its array throws
// ndzip::stream_error, as decompress does; the contents of `values` are then unspecified.
template <class ExecSpace, class FrameView, class ValuesView>
void decompress_frame(const ExecSpace& exec, const FrameView& frame, const ValuesView& values) {
  using T = std::remove_const_t<typename ValuesView::value_type>;
  constexpr int Dims = static_cast<int>(ValuesView::rank);
  static_assert(!std::is_const_v<typename ValuesView::value_type>,
                "ndzip::decompress_frame needs a writable values View");
  detail::check_frame_view(frame);
  const std::byte* const data = reinterpret_cast<const std::byte*>(frame.data());
  if (frame.size() > 4 && std::to_integer<std::uint8_t>(data[4]) == frame_version_chunked)
    return decompress_chunked_frame(exec, frame, values);
  verify_frame_checksum(data, frame.size());
  const frame_info info = inspect_frame(data, frame.size());
  const extent<Dims> grid = grid_of(values);
  detail::check_frame_holds(info, element_type_of<T>(), Dims, detail::frame_extents(grid),
                            detail::view_label(values));
  detail::check_frame_disjoint<T>(values, grid, frame);

  const std::size_t consumed = detail::with_coded_view(
      values, grid, info.coded_dimensions, [&](const auto& coded_values, const auto& coded_grid) {
        constexpr int Rank = std::decay_t<decltype(coded_grid)>::dimensions;
        compressor<T, Rank, ExecSpace> codec(exec, coded_grid, info.mode);
        return detail::decompress_from_frame<typename FrameView::memory_space>(
            codec, data + frame_header_bytes, static_cast<std::size_t>(info.stream_bytes),
            coded_values);
      });
  detail::check_frame_stream_consumed(info, consumed);
}

}  // namespace ndzip
