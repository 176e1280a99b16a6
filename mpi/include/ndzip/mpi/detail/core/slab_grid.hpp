// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The grid a segment's slab is compressed with (docs/FORMAT.md "MPI messages"), on every link.
// Not part of the API.
//
// A slab of `rows` rows of a View's slowest dimension has the extents (rows, extent(1),
// extent(2)), up to the View's rank. It is compressed with those extents less every extent of
// 1 (rank 1 at least): ndzip's hypercubes span every axis of a grid, so a 3-D grid one cell
// thick, such as the face (1, n, m) of a block, holds none and would travel raw, while as the
// n x m grid it is, it compresses. A slab whose grid holds no whole hypercube would not shrink
// (its stream is a header and the values), so it travels raw without being compressed.

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ndzip/extent.hpp"
#include "ndzip/format.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"

namespace ndzip::mpi::detail {

struct slab_shape {
  int dims = 1;
  std::array<std::uint64_t, 3> extents = {0, 1, 1};  // 1 past `dims`
};

// `extents` (1 past `dims`) less its extents of 1.
constexpr slab_shape squeeze(int dims, const std::array<std::uint64_t, 3>& extents) {
  slab_shape shape;
  shape.dims = 0;
  for (int a = 0; a < dims; ++a)
    if (extents[a] != 1) shape.extents[shape.dims++] = extents[a];
  if (shape.dims == 0) shape.extents[shape.dims++] = 1;
  for (int a = shape.dims; a < 3; ++a) shape.extents[a] = 1;
  return shape;
}

template <int Dims>
extent<Dims> grid_of(const slab_shape& shape) {
  extent<Dims> grid;
  for (int a = 0; a < Dims; ++a) grid[a] = shape.extents[a];
  return grid;
}

// f(grid) with the slab's grid as an extent of its rank; f returns the same type for every rank.
template <class F>
auto with_grid(const slab_shape& shape, F&& f) {
  switch (shape.dims) {
    case 1:
      return f(grid_of<1>(shape));
    case 2:
      return f(grid_of<2>(shape));
    default:
      return f(grid_of<3>(shape));
  }
}

// Whether the grid holds a whole hypercube of T, so that its stream can be smaller than its
// values.
template <class T>
bool holds_hypercube(const slab_shape& shape) {
  return with_grid(shape, [](const auto& grid) {
    constexpr int dims = std::decay_t<decltype(grid)>::dimensions;
    return stream_layout<T, dims>(grid).hypercube_count > 0;
  });
}

// The most bytes a stream of the grid can take (compressed_size_bound).
template <class T>
std::size_t stream_bound(const slab_shape& shape) {
  return with_grid(shape, [](const auto& grid) { return compressed_size_bound<T>(grid); });
}

// The grid segment k's slab is compressed with.
inline slab_shape slab_of(const transfer_head& head, std::uint64_t k) {
  return squeeze(static_cast<int>(head.dims), {head.rows_of(k), head.extents[1], head.extents[2]});
}

}  // namespace ndzip::mpi::detail
