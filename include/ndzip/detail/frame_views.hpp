// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The parts of ndzip/frame.hpp behind its View functions: checks of the frame View against the
// values, the values as the grid a frame codes (folded or not), and the codec's stream in place
// in the frame or through a copy.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "ndzip/array_shape.hpp"
#include "ndzip/detail/disjoint.hpp"
#include "ndzip/detail/view_traits.hpp"
#include "ndzip/error.hpp"
#include "ndzip/export.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/folding.hpp"
#include "ndzip/frame_format.hpp"

namespace ndzip::detail {

// Throws ndzip::frame_error unless the frame `info` holds an array of `type` and these extents
// (slowest first, 0 past `dimensions`); the message names `view`.
NDZIP_EXPORT void check_frame_holds(const frame_info& info, element_type type, int dimensions,
                                    const std::array<std::uint64_t, 3>& extents,
                                    const std::string& view);
// Throws, before anything is written, std::invalid_argument if `values` (named so in the
// message) has no element (a frame's extents are at least 1) and ndzip::capacity_error if an
// output of `capacity` bytes cannot hold even the header.
NDZIP_EXPORT void check_frame_output(std::size_t elements, const std::string& values,
                                     std::size_t capacity);
// Throws ndzip::frame_error unless decoding the frame `info` consumed its whole stream.
NDZIP_EXPORT void check_frame_stream_consumed(const frame_info& info, std::size_t consumed);

template <int Dims>
std::array<std::uint64_t, 3> frame_extents(const extent<Dims>& grid) {
  std::array<std::uint64_t, 3> extents{};
  for (int a = 0; a < Dims; ++a) extents[a] = grid[a];
  return extents;
}

// The rank compress_frame codes a grid of T in (ndzip/folding.hpp).
template <class T, int Dims>
int coded_rank(const extent<Dims>& grid, folding f) {
  return coded_shape(array_shape(element_type_of<T>(), grid), f).rank();
}

// f(coded) for `grid` coded as the grid `coded` of `rank` dimensions that its slowest
// dimensions merge into (an extent<rank>, as ndzip::folded_shape gives it; `grid` itself in its
// own rank). Every return of f must have one type.
template <class T, int Dims, class F>
decltype(auto) with_coded_grid(const extent<Dims>& grid, int rank, F&& f) {
  auto folded = [&](auto coded_dims) -> decltype(auto) {
    constexpr int Rank = decltype(coded_dims)::value;
    const array_shape shape = folded_shape(array_shape(element_type_of<T>(), grid), Rank);
    extent<Rank> coded;
    for (int a = 0; a < Rank; ++a) coded[a] = shape.addressable_extent(a);
    return f(coded);
  };
  if (rank == Dims) return f(grid);
  if constexpr (Dims == 3)
    if (rank == 2) return folded(std::integral_constant<int, 2>{});
  return folded(std::integral_constant<int, 1>{});
}

// f(view, coded) for `values` (a contiguous View of the C-order grid `grid`) coded as `coded`
// (with_coded_grid): `values` itself in its own rank, else an unmanaged LayoutRight View of the
// same memory (C order is the memory of either layout's grid, so folding moves nothing).
template <class ValuesView, class F>
decltype(auto) with_coded_view(const ValuesView& values,
                               const extent<static_cast<int>(ValuesView::rank)>& grid, int rank,
                               F&& f) {
  constexpr int Dims = static_cast<int>(ValuesView::rank);
  using T = std::remove_const_t<typename ValuesView::value_type>;
  return with_coded_grid<T>(grid, rank, [&](const auto& coded) -> decltype(auto) {
    constexpr int Rank = std::decay_t<decltype(coded)>::dimensions;
    if constexpr (Rank == Dims) {
      return f(values, coded);
    } else {
      using pointer = std::add_pointer_t<typename ValuesView::value_type>;
      using data_type =
          std::conditional_t<Rank == 1, pointer, std::add_pointer_t<pointer>>;
      const Kokkos::View<data_type, Kokkos::LayoutRight, typename ValuesView::memory_space,
                         Kokkos::MemoryTraits<Kokkos::Unmanaged>>
          view(values.data(), coded[0], Rank > 1 ? coded[Rank - 1] : KOKKOS_INVALID_INDEX);
      return f(view, coded);
    }
  });
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
      Kokkos::view_alloc(codec.execution_space_instance(), Kokkos::WithoutInitializing,
                         "ndzip::frame_stream"),
      codec.size_bound());
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
      Kokkos::view_alloc(codec.execution_space_instance(), Kokkos::WithoutInitializing,
                         "ndzip::frame_stream"),
      stream_bytes);
  Kokkos::deep_copy(codec.execution_space_instance(), scratch, frame_stream(stream, stream_bytes));
  return codec.decompress(scratch, values);
}

}  // namespace ndzip::detail
