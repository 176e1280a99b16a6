// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Kokkos Views to and from chunked frames (ndzip/chunked_frame_format.hpp: an array of any size
// in independent slabs of rows, each its own stream with its own checksum, behind a header and
// before an index). The frame lies in host memory; the values may lie in any memory space the
// execution space can access.
//
//   const std::uint64_t rows = 0;  // slab rows: 0 takes default_slab_rows (about 64 MiB a slab)
//   Kokkos::View<std::byte*, Kokkos::HostSpace> frame(
//       "frame", ndzip::chunked_frame_size_bound(field, rows));
//   const std::size_t bytes = ndzip::compress_chunked_frame(exec, field, frame, rows);
//   ndzip::decompress_chunked_frame(exec, Kokkos::subview(frame, std::make_pair(0, bytes)), out);
//
// Each call builds the codecs it needs (one per distinct slab grid: at most two) and completes
// before it returns. Both are a chunked_frame_writer and a chunked_frame_reader
// (ndzip/chunked_frame_stream.hpp, included here) over one frame in memory; those code a frame
// a slab at a time, for arrays larger than memory and for pipes.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ndzip/array_shape.hpp"
#include "ndzip/chunked_frame_format.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/detail/frame_views.hpp"
#include "ndzip/error.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/folding.hpp"
#include "ndzip/view_checks.hpp"

namespace ndzip {

namespace detail {

// The slab rows a call takes: `asked`, or default_slab_rows where it is 0.
template <class T, int Dims>
std::uint64_t slab_rows_for(const extent<Dims>& grid, std::uint64_t asked, codec_mode mode) {
  return asked != 0 ? asked
                    : default_slab_rows(element_type_of<T>(), Dims, frame_extents(grid), mode);
}

// f(s, slab, slab_grid) for every slab s of `frame` over `values` (a contiguous View of the
// C-order grid `grid`): `slab` an unmanaged LayoutRight View of the slab's rows, in the values'
// own memory.
template <class ValuesView, class F>
void for_each_slab(const ValuesView& values, const extent<static_cast<int>(ValuesView::rank)>& grid,
                   const chunked_frame_info& frame, F&& f) {
  constexpr int Dims = static_cast<int>(ValuesView::rank);
  using element = typename ValuesView::value_type;
  using data_type = std::conditional_t<Dims == 1, element*,
                                       std::conditional_t<Dims == 2, element**, element***>>;
  using slab_view = Kokkos::View<data_type, Kokkos::LayoutRight, typename ValuesView::memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  std::size_t row = 1;
  for (int a = 1; a < Dims; ++a) row *= grid[a];
  for (std::uint64_t s = 0; s < frame.slab_count; ++s) {
    extent<Dims> slab_grid = grid;
    slab_grid[0] = static_cast<std::size_t>(frame.slab_extents(s)[0]);
    element* first = values.data() + static_cast<std::size_t>(frame.first_row(s)) * row;
    const slab_view slab(first, slab_grid[0], Dims > 1 ? slab_grid[1] : KOKKOS_INVALID_INDEX,
                         Dims > 2 ? slab_grid[2] : KOKKOS_INVALID_INDEX);
    f(s, slab, slab_grid);
  }
}

// The codecs of a call, one per slab grid coded and mode (the full slabs' and the last one's,
// each folded or not).
template <class T, class ExecSpace>
class slab_codecs {
 public:
  explicit slab_codecs(const ExecSpace& exec) : m_exec(exec) {}
  template <int Rank>
  compressor<T, Rank, ExecSpace>& get(const extent<Rank>& grid, codec_mode mode) {
    auto& made = std::get<Rank - 1>(m_codecs);
    for (auto& c : made)
      if (c->grid() == grid && c->mode() == mode) return *c;
    return *made.emplace_back(std::make_unique<compressor<T, Rank, ExecSpace>>(m_exec, grid, mode));
  }

 private:
  template <int Rank>
  using codecs_of = std::vector<std::unique_ptr<compressor<T, Rank, ExecSpace>>>;
  ExecSpace m_exec;
  std::tuple<codecs_of<1>, codecs_of<2>, codecs_of<3>> m_codecs;
};

}  // namespace detail

// Defined in ndzip/chunked_frame_stream.hpp (included at the end of this header).
template <class T, int Dims, class ExecSpace = Kokkos::DefaultExecutionSpace>
class chunked_frame_writer;
template <class T, int Dims, class ExecSpace = Kokkos::DefaultExecutionSpace>
class chunked_frame_reader;

// The most bytes compress_chunked_frame writes for `values` in slabs of `slab_rows` rows (0:
// default_slab_rows) in `mode`.
template <class ValuesView>
std::size_t chunked_frame_size_bound(const ValuesView& values, std::uint64_t slab_rows = 0,
                                     codec_mode mode = codec_mode::ndzip) {
  using T = std::remove_const_t<typename ValuesView::value_type>;
  constexpr int Dims = static_cast<int>(ValuesView::rank);
  const auto grid = grid_of(values);
  if (grid.size() == 0)
    throw std::invalid_argument("ndzip: " + detail::view_label(values) +
                                " is empty; a frame holds arrays of at least one element");
  const std::uint64_t rows = detail::slab_rows_for<T>(grid, slab_rows, mode);
  return static_cast<std::size_t>(
      chunked_frame_bound(element_type_of<T>(), Dims, detail::frame_extents(grid), rows, mode));
}

// Compresses `values` (a contiguous View, not empty) on `exec` into a chunked frame at the start
// of `frame` (a contiguous rank-1 View of bytes in host-accessible memory) in slabs of
// `slab_rows` rows of the slowest dimension (0: default_slab_rows; else 1 to its extent, or
// std::invalid_argument), each slab coded in `mode`, folded as folding::automatic folds a
// frame's array (ndzip/folding.hpp). Returns the frame's size. Throws ndzip::capacity_error if
// `frame` is too small (chunked_frame_size_bound always suffices) and std::invalid_argument if
// the values overlap it, before anything is written.
template <class ExecSpace, class ValuesView, class FrameView>
std::size_t compress_chunked_frame(const ExecSpace& exec, const ValuesView& values,
                                   const FrameView& frame, std::uint64_t slab_rows = 0,
                                   codec_mode mode = codec_mode::ndzip) {
  using T = std::remove_const_t<typename ValuesView::value_type>;
  constexpr int Dims = static_cast<int>(ValuesView::rank);
  static_assert(!std::is_const_v<typename FrameView::value_type>,
                "ndzip::compress_chunked_frame writes into the frame View");
  detail::check_frame_view(frame);
  const extent<Dims> grid = grid_of(values);
  detail::check_frame_output(grid.size(), detail::view_label(values), frame.size());
  detail::check_frame_disjoint<T>(values, grid, frame);
  const std::uint64_t rows = detail::slab_rows_for<T>(grid, slab_rows, mode);
  chunked_frame_writer<T, Dims, ExecSpace> writer(exec, grid, rows, mode);
  const auto& header = writer.header();
  if (chunked_header_bytes > frame.size())
    throw capacity_error("ndzip: a chunked frame needs " + std::to_string(chunked_header_bytes) +
                         " bytes for its header alone, but the output holds only " +
                         std::to_string(frame.size()));

  std::byte* const out = reinterpret_cast<std::byte*>(frame.data());
  std::copy(header.begin(), header.end(), out);
  const auto room = [&](std::uint64_t bytes, const std::string& what) {
    if (writer.bytes_written() + bytes > frame.size())
      throw capacity_error("ndzip: the chunked frame needs more than the " +
                           std::to_string(frame.size()) + " bytes of the output at " + what +
                           " (chunked_frame_size_bound is " +
                           std::to_string(chunked_frame_size_bound(values, rows, mode)) + ")");
  };
  detail::for_each_slab(values, grid, writer.info(), [&](std::uint64_t s, const auto& slab,
                                                         const extent<Dims>&) {
    room(slab_head_bytes, "slab " + std::to_string(s));
    const auto at = static_cast<std::size_t>(writer.bytes_written());
    writer.encode_slab(slab, Kokkos::subview(frame, std::make_pair(at, frame.size())));
  });
  const std::vector<std::byte> end = writer.finish();
  room(end.size(), "its index");
  std::copy(end.begin(), end.end(), out + writer.bytes_written());
  return static_cast<std::size_t>(writer.bytes_written() + end.size());
}

// Decompresses the chunked frame `frame` (a contiguous rank-1 View of bytes in host-accessible
// memory, holding exactly one chunked frame) into `values` on `exec`, slab by slab. Throws
// ndzip::frame_error, naming the slab, if the frame is damaged (inspect_chunked_frame before
// anything is decoded, then verify_slab before each slab is) or
// if `values` differs from the array it holds in element type, rank or extents (slowest first),
// and std::invalid_argument if `values` overlaps the frame. A stream inconsistent with its slab
// throws ndzip::stream_error; the contents of `values` are then unspecified.
template <class ExecSpace, class FrameView, class ValuesView>
void decompress_chunked_frame(const ExecSpace& exec, const FrameView& frame,
                              const ValuesView& values) {
  using T = std::remove_const_t<typename ValuesView::value_type>;
  constexpr int Dims = static_cast<int>(ValuesView::rank);
  static_assert(!std::is_const_v<typename ValuesView::value_type>,
                "ndzip::decompress_chunked_frame needs a writable values View");
  detail::check_frame_view(frame);
  const std::byte* const data = reinterpret_cast<const std::byte*>(frame.data());
  const chunked_frame_layout layout = inspect_chunked_frame(data, frame.size());
  const chunked_frame_info& info = layout.frame;
  const extent<Dims> grid = grid_of(values);
  frame_info array;
  array.type = info.type;
  array.dimensions = info.dimensions;
  array.extents = info.extents;
  detail::check_frame_holds(array, element_type_of<T>(), Dims, detail::frame_extents(grid),
                            detail::view_label(values));
  detail::check_frame_disjoint<T>(values, grid, frame);

  chunked_frame_reader<T, Dims, ExecSpace> reader(exec, data, frame.size());
  detail::for_each_slab(values, grid, info, [&](std::uint64_t s, const auto& slab,
                                                const extent<Dims>&) {
    const auto at = static_cast<std::size_t>(layout.offsets[s]);
    const auto record_end = at + static_cast<std::size_t>(layout.slabs[s].record_bytes());
    reader.decode_slab(Kokkos::subview(frame, std::make_pair(at, record_end)), slab);
  });
  const std::size_t index = frame.size() - reader.end_bytes();
  reader.finish(data + index, reader.end_bytes());
  exec.fence();
}

}  // namespace ndzip

#include "ndzip/chunked_frame_stream.hpp"  // the writer and reader declared above
