// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Reading part of an array from a frame: a box, given by its first element and the extents of
// the View that receives it, decoded from a frame of any version (1-3: ndzip/frame.hpp; 4, the
// chunked frame: ndzip/chunked_frame.hpp). Only what the box touches is decoded: in a chunked
// frame the slabs its rows lie in, and in each stream of the default mode the hypercubes it
// touches (ndzip::compressor::decompress_region). What is decoded is checked first: a version
// 1-3 frame's checksum (it covers the whole stream), each touched slab's checksum; a damaged
// slab elsewhere does not stop a box that does not touch it.
//
//   // The 2-D slice k = 100 of a 3-D float field of 512 x 512 x 512, from a frame in memory:
//   Kokkos::View<float***, Kokkos::LayoutRight> slice("slice", 1, 512, 512);
//   ndzip::decompress_frame_region(exec, frame, {100, 0, 0}, slice);
//
// The frame lies in host memory; the View may lie in any memory space the execution space can
// access. Each call builds the codecs it needs and completes before it returns.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "ndzip/chunked_frame.hpp"
#include "ndzip/chunked_frame_format.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/detail/frame_region_copy.hpp"
#include "ndzip/detail/frame_views.hpp"
#include "ndzip/error.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/frame.hpp"
#include "ndzip/frame_format.hpp"
#include "ndzip/view_checks.hpp"

namespace ndzip {

namespace detail {

// Throws ndzip::frame_error unless an array of this element type and rank holds the box at
// `start` of extents `count` (the message names the View `view`).
template <int Dims>
void check_frame_region(element_type type, int dimensions,
                        const std::array<std::uint64_t, 3>& extents, element_type view_type,
                        const std::array<std::size_t, static_cast<std::size_t>(Dims)>& start,
                        const extent<Dims>& count, const std::string& view) {
  if (type != view_type || dimensions != Dims)
    throw frame_error("ndzip: the frame holds a " + std::to_string(dimensions) + "-D " +
                      element_type_name(type) + " array, but " + view + " is a " +
                      std::to_string(Dims) + "-D " + element_type_name(view_type) + " View");
  std::string box;
  bool inside = true, empty = false;
  for (int a = 0; a < Dims; ++a) {
    box += (a ? ", " : "[") + std::to_string(start[a]) + ":" + std::to_string(start[a] + count[a]);
    empty = empty || count[a] == 0;
    inside = inside && start[a] <= extents[a] && count[a] <= extents[a] - start[a];
  }
  box += "]";
  if (empty) throw std::invalid_argument("ndzip: the region " + box + " of " + view + " is empty");
  if (!inside) {
    std::string array;
    for (int a = 0; a < Dims; ++a) array += (a ? "x" : "") + std::to_string(extents[a]);
    throw std::invalid_argument("ndzip: the region " + box + " does not lie inside the frame's " +
                                array + " array (slowest first)");
  }
}

// Decodes the box at `start` of `out`'s shape (a contiguous LayoutRight View) from the stream
// of `bytes` bytes at `stream` (in FrameSpace) that codes the grid `grid` in `mode` as the grid
// of `coded_rank` its slowest dimensions merge into; returns the bytes the stream takes. A
// folded grid's box is decoded as the coded grid's box around it, then gathered into `out`.
template <class FrameSpace, class T, class ExecSpace, int Dims, class OutView>
std::size_t decode_stream_region(slab_codecs<T, ExecSpace>& codecs, const std::byte* stream,
                                 std::size_t bytes, const extent<Dims>& grid, int coded_rank,
                                 codec_mode mode,
                                 const std::array<std::size_t, static_cast<std::size_t>(Dims)>& start,
                                 const OutView& out) {
  return with_coded_grid<T>(grid, coded_rank, [&](const auto& coded_grid) -> std::size_t {
    constexpr int Rank = std::decay_t<decltype(coded_grid)>::dimensions;
    auto& codec = codecs.get(coded_grid, mode);
    const auto decode = [&](const std::array<std::size_t, Rank>& coded_start, const auto& into) {
      using frame_stream = unmanaged_bytes<const std::byte, FrameSpace>;
      if constexpr (Kokkos::SpaceAccessibility<ExecSpace, FrameSpace>::accessible) {
        if (reinterpret_cast<std::uintptr_t>(stream) % codec.alignment() == 0)
          return codec.decompress_region(frame_stream(stream, bytes), coded_start, into);
      }
      const Kokkos::View<std::byte*, typename ExecSpace::memory_space> copy(
          Kokkos::view_alloc(codec.execution_space_instance(), Kokkos::WithoutInitializing,
                             "ndzip::frame_stream"),
          bytes);
      Kokkos::deep_copy(codec.execution_space_instance(), copy, frame_stream(stream, bytes));
      return codec.decompress_region(copy, coded_start, into);
    };
    if constexpr (Rank == Dims) {
      return decode(start, out);
    } else {
      const folded_region<Dims, Rank> folded(grid, start, grid_of(out));
      const auto coded = folded.template make_buffer<T, typename OutView::memory_space>();
      const std::size_t consumed = decode(folded.coded_box_start(), coded);
      folded.gather(codec.execution_space_instance(), coded.data(), out.data());
      return consumed;
    }
  });
}

// An unmanaged LayoutRight View of `rows` rows of the box `out` from row `first` on.
template <class OutView>
auto box_rows(const OutView& out, std::size_t first, std::size_t rows) {
  constexpr int Dims = static_cast<int>(OutView::rank);
  using element = typename OutView::value_type;
  using data_type = std::conditional_t<Dims == 1, element*,
                                       std::conditional_t<Dims == 2, element**, element***>>;
  std::size_t row = 1;
  for (int a = 1; a < Dims; ++a) row *= out.extent(a);
  return Kokkos::View<data_type, Kokkos::LayoutRight, typename OutView::memory_space,
                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
      out.data() + first * row, rows, Dims > 1 ? out.extent(1) : KOKKOS_INVALID_INDEX,
      Dims > 2 ? out.extent(2) : KOKKOS_INVALID_INDEX);
}

}  // namespace detail

// Decompresses the box of the array held by `frame` (a contiguous rank-1 View of bytes in
// host-accessible memory, holding exactly one frame of version 1 to 4) whose first element is
// at `start` (slowest first) and whose extents are those of `values` (a contiguous LayoutRight
// View, receiving the box in C order) on `exec`. Throws ndzip::frame_error if the frame is
// damaged where it is read (header, index, the checksum of a version 1-3 frame, of each slab
// the box touches) or holds another element type or rank than `values`; std::invalid_argument
// if the box is empty or does not lie inside the array, or `values` overlaps the frame;
// ndzip::stream_error for a stream inconsistent with its grid where it is decoded.
template <class ExecSpace, class FrameView, class ValuesView>
void decompress_frame_region(const ExecSpace& exec, const FrameView& frame,
                             const std::array<std::size_t, ValuesView::rank>& start,
                             const ValuesView& values) {
  using T = std::remove_const_t<typename ValuesView::value_type>;
  constexpr int Dims = static_cast<int>(ValuesView::rank);
  static_assert(!std::is_const_v<typename ValuesView::value_type>,
                "ndzip::decompress_frame_region needs a writable values View");
  static_assert(std::is_same_v<typename ValuesView::array_layout, Kokkos::LayoutRight>,
                "ndzip::decompress_frame_region writes the box in C order: a LayoutRight View");
  using frame_space = typename FrameView::memory_space;
  detail::check_frame_view(frame);
  const std::byte* const data = reinterpret_cast<const std::byte*>(frame.data());
  const extent<Dims> count = grid_of(values);
  detail::check_frame_disjoint<T>(values, count, frame);
  const std::string label = detail::view_label(values);
  detail::slab_codecs<T, ExecSpace> codecs(exec);

  if (frame.size() > 4 && std::to_integer<std::uint8_t>(data[4]) == frame_version_chunked) {
    const chunked_frame_layout layout = inspect_chunked_frame(data, frame.size());
    const chunked_frame_info& info = layout.frame;
    detail::check_frame_region(info.type, info.dimensions, info.extents, element_type_of<T>(),
                               start, count, label);
    const std::uint64_t first_row = start[0], end_row = start[0] + count[0];
    for (std::uint64_t s = first_row / info.slab_rows; s * info.slab_rows < end_row; ++s) {
      const slab_info& head = layout.slabs[s];
      const std::uint64_t at = layout.offsets[s];
      verify_slab(head, data + at, static_cast<std::size_t>(head.record_bytes()));
      const std::uint64_t slab_first = info.first_row(s);
      const auto slab_extents = info.slab_extents(s);
      const std::uint64_t from = first_row > slab_first ? first_row : slab_first;
      const std::uint64_t to =
          end_row < slab_first + slab_extents[0] ? end_row : slab_first + slab_extents[0];
      extent<Dims> slab_grid;
      for (int a = 0; a < Dims; ++a) slab_grid[a] = static_cast<std::size_t>(slab_extents[a]);
      std::array<std::size_t, Dims> slab_start = start;
      slab_start[0] = static_cast<std::size_t>(from - slab_first);
      const std::size_t consumed = detail::decode_stream_region<frame_space, T>(
          codecs, data + at + slab_head_bytes, static_cast<std::size_t>(head.stream_bytes),
          slab_grid, head.coded_dimensions, head.mode, slab_start,
          detail::box_rows(values, static_cast<std::size_t>(from - first_row),
                           static_cast<std::size_t>(to - from)));
      if (consumed != head.stream_bytes)
        throw frame_error("ndzip: chunked frame, slab " + std::to_string(s) +
                          ": its stream ends after " + std::to_string(consumed) + " of its " +
                          std::to_string(head.stream_bytes) + " bytes");
    }
  } else {
    verify_frame_checksum(data, frame.size());
    const frame_info info = inspect_frame(data, frame.size());
    detail::check_frame_region(info.type, info.dimensions, info.extents, element_type_of<T>(),
                               start, count, label);
    extent<Dims> grid;
    for (int a = 0; a < Dims; ++a) grid[a] = static_cast<std::size_t>(info.extents[a]);
    const std::size_t consumed = detail::decode_stream_region<frame_space, T>(
        codecs, data + frame_header_bytes, static_cast<std::size_t>(info.stream_bytes), grid,
        info.coded_dimensions, info.mode, start, values);
    detail::check_frame_stream_consumed(info, consumed);
  }
  exec.fence();
}

}  // namespace ndzip
