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

#include "ndzip/compressor.hpp"
#include "ndzip/detail/disjoint.hpp"
#include "ndzip/error.hpp"
#include "ndzip/export.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/frame_format.hpp"
#include "ndzip/view_api.hpp"
#include "ndzip/view_checks.hpp"

namespace ndzip {

namespace detail {

// Throws ndzip::frame_error unless the frame `info` holds an array of `type` and these extents
// (slowest first, 0 past `dimensions`); the message names `view`.
NDZIP_EXPORT void check_frame_holds(const frame_info& info, element_type type, int dimensions,
                                    const std::array<std::uint64_t, 3>& extents,
                                    const std::string& view);
// Throws ndzip::frame_error unless decoding the frame `info` consumed its whole stream.
NDZIP_EXPORT void check_frame_stream_consumed(const frame_info& info, std::size_t consumed);

template <int Dims>
std::array<std::uint64_t, 3> frame_extents(const extent<Dims>& grid) {
  std::array<std::uint64_t, 3> extents{};
  for (int a = 0; a < Dims; ++a) extents[a] = grid[a];
  return extents;
}

template <class FrameView>
void check_frame_view(const FrameView& frame) {
  static_assert(Kokkos::is_view<FrameView>::value && FrameView::rank == 1 &&
                    sizeof(typename FrameView::value_type) == 1 &&
                    std::is_trivially_copyable_v<typename FrameView::value_type>,
                "ndzip: a frame is a rank-1 View of bytes (std::byte, char, unsigned char)");
  static_assert(Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace,
                                           typename FrameView::memory_space>::accessible,
                "ndzip: a frame lies in memory the host can access");
  if (frame.size() > 1 && frame.stride(0) != 1)
    throw std::invalid_argument("ndzip: " + view_label(frame) + " is not contiguous");
}

// The whole frame (header and stream) and the values must be disjoint: the header is written
// on the host after the codec ran, and a frame whose stream goes through a copy escapes the
// codec's own check; so a frame over the values would overwrite them silently, and values over
// the frame would overwrite the caller's frame. Addresses only: the values may lie on a device.
template <class T, int Dims, class ValuesView, class FrameView>
void check_frame_disjoint(const ValuesView& values, const extent<Dims>& grid,
                          const FrameView& frame) {
  check_disjoint(values.data(), grid.size() * sizeof(T), frame.data(), frame.size(),
                 "frame buffer");
}

template <class Byte, class MemorySpace>
using unmanaged_bytes = Kokkos::View<Byte*, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The codec reads and writes a frame's stream where it lies if the execution space can access
// that memory and the stream is aligned to the element size, as the codec needs (it starts 48
// bytes into the frame); otherwise through a copy in the space's own memory.
template <class FrameSpace, class Codec, class ValuesView>
std::size_t compress_into_frame(Codec& codec, const ValuesView& values, std::byte* stream,
                                std::size_t capacity) {
  using ExecSpace = typename Codec::execution_space;
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, FrameSpace>::accessible) {
    if (reinterpret_cast<std::uintptr_t>(stream) % codec.alignment() == 0)
      return codec.compress(values, unmanaged_bytes<std::byte, FrameSpace>(stream, capacity));
  }
  const Kokkos::View<std::byte*, typename ExecSpace::memory_space> scratch(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::frame_stream"), codec.size_bound());
  const std::size_t stream_bytes = codec.compress(values, scratch);
  if (stream_bytes > capacity)
    throw capacity_error(
        "ndzip: the frame needs " + std::to_string(frame_header_bytes + stream_bytes) +
        " bytes but the output holds only " + std::to_string(frame_header_bytes + capacity) +
        " (frame_size_bound is " + std::to_string(frame_header_bytes + codec.size_bound()) + ")");
  Kokkos::deep_copy(codec.execution_space_instance(),
                    unmanaged_bytes<std::byte, FrameSpace>(stream, stream_bytes),
                    Kokkos::subview(scratch, std::make_pair(std::size_t{0}, stream_bytes)));
  return stream_bytes;
}

// Decodes a frame's stream into `values`, in place or through a copy as above; returns the
// bytes consumed.
template <class FrameSpace, class Codec, class ValuesView>
std::size_t decompress_from_frame(Codec& codec, const std::byte* stream, std::size_t stream_bytes,
                                  const ValuesView& values) {
  using ExecSpace = typename Codec::execution_space;
  using frame_stream = unmanaged_bytes<const std::byte, FrameSpace>;
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, FrameSpace>::accessible) {
    if (reinterpret_cast<std::uintptr_t>(stream) % codec.alignment() == 0)
      return codec.decompress(frame_stream(stream, stream_bytes), values);
  }
  const Kokkos::View<std::byte*, typename ExecSpace::memory_space> scratch(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::frame_stream"), stream_bytes);
  Kokkos::deep_copy(codec.execution_space_instance(), scratch, frame_stream(stream, stream_bytes));
  return codec.decompress(scratch, values);
}

}  // namespace detail

// The most bytes compress_frame writes for `values` in `mode`: the header and
// compressed_size_bound in that mode.
template <class ValuesView>
std::size_t frame_size_bound(const ValuesView& values, codec_mode mode = codec_mode::ndzip) {
  return frame_header_bytes + compressed_size_bound(values, mode);
}

// Compresses `values` (a contiguous View, as for compress; not empty: a frame's extents are at
// least 1, else std::invalid_argument) on `exec` into a frame at the start of `frame`, a
// contiguous rank-1 View of bytes in host-accessible memory, and returns the frame's size.
// Throws ndzip::capacity_error if `frame` holds fewer bytes than the frame needs
// (frame_size_bound always suffices), and std::invalid_argument if the values overlap the
// frame View (header or stream), before anything is written. `mode`: the stream's coding, the
// original ndzip stream (a version 1 frame) or the high-ratio stream (version 2).
template <class ExecSpace, class ValuesView, class FrameView>
std::size_t compress_frame(const ExecSpace& exec, const ValuesView& values, const FrameView& frame,
                           codec_mode mode = codec_mode::ndzip) {
  using T = std::remove_const_t<typename ValuesView::value_type>;
  constexpr int Dims = static_cast<int>(ValuesView::rank);
  static_assert(!std::is_const_v<typename FrameView::value_type>,
                "ndzip::compress_frame writes into the frame View");
  detail::check_frame_view(frame);
  const extent<Dims> grid = grid_of(values);
  if (grid.size() == 0)
    throw std::invalid_argument("ndzip: " + detail::view_label(values) +
                                " is empty; a frame holds arrays of at least one element");
  if (frame.size() < frame_header_bytes)
    throw capacity_error("ndzip: a frame needs " + std::to_string(frame_header_bytes) +
                         " bytes for its header alone, but the output holds only " +
                         std::to_string(frame.size()));
  detail::check_frame_disjoint<T>(values, grid, frame);

  std::byte* const out = reinterpret_cast<std::byte*>(frame.data());
  std::byte* const stream = out + frame_header_bytes;
  compressor<T, Dims, ExecSpace> codec(exec, grid, mode);
  const std::size_t stream_bytes = detail::compress_into_frame<typename FrameView::memory_space>(
      codec, values, stream, frame.size() - frame_header_bytes);
  exec.fence();  // the header's checksum reads the stream on the host

  const auto header = encode_frame_header(element_type_of<T>(), Dims, detail::frame_extents(grid),
                                          stream, stream_bytes, mode);
  std::copy(header.begin(), header.end(), out);
  return frame_header_bytes + stream_bytes;
}

// Decompresses the frame `frame` (a contiguous rank-1 View of bytes in host-accessible memory,
// holding exactly one frame) into `values` on `exec`. Before decoding, throws ndzip::frame_error
// if the frame is damaged (inspect_frame, verify_frame_checksum) or if `values` differs from the
// array it holds in element type, rank or extents (slowest first, as grid_of gives them; a
// LayoutLeft View's are reversed), and std::invalid_argument if `values` overlaps the frame
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
  verify_frame_checksum(data, frame.size());
  const frame_info info = inspect_frame(data, frame.size());
  const extent<Dims> grid = grid_of(values);
  detail::check_frame_holds(info, element_type_of<T>(), Dims, detail::frame_extents(grid),
                            detail::view_label(values));
  detail::check_frame_disjoint<T>(values, grid, frame);

  compressor<T, Dims, ExecSpace> codec(exec, grid, info.mode);
  const std::size_t consumed = detail::decompress_from_frame<typename FrameView::memory_space>(
      codec, data + frame_header_bytes, static_cast<std::size_t>(info.stream_bytes), values);
  detail::check_frame_stream_consumed(info, consumed);
}

}  // namespace ndzip
