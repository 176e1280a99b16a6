// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A box of a grid, and the kernel that copies it out of decoded values and the stream's border
// (core/region_decoder.hpp decodes the hypercubes it touches; a mode that cannot decode part of
// its stream decodes the whole grid, core/engine.hpp). The border is stored raw, so the box's
// border elements are read straight from the stream, in runs along the last axis.

#include <cstddef>

#include <Kokkos_Core.hpp>

#include "ndzip/extent.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// A box of a grid: its first element and its extents, slowest dimension first.
template <int Dims>
struct region_box {
  std::size_t start[Dims] = {};
  extent<Dims> count;
};

// Position in the stream's border of the grid element at `coordinates`, or border_size where the
// element lies in a hypercube: the inverse of border_element (core/border.hpp). Along axis a, a
// slice across the faster axes holds its covered slices' borders first, then the trailing slab
// past the hypercubes in full, in C order.
template <class T, int Dims>
KOKKOS_INLINE_FUNCTION std::size_t border_position(const stream_layout<T, Dims>& layout,
                                                   const std::size_t (&coordinates)[Dims]) {
  constexpr std::size_t s = profile<T, Dims>::side_length;
  std::size_t position = 0;
  for (int a = 0; a < Dims; ++a) {
    std::size_t inner_size = 1, inner_cubes = 1;
    for (int b = a + 1; b < Dims; ++b) {
      inner_size *= layout.grid[b];
      inner_cubes *= layout.hypercubes_per_axis[b] * s;
    }
    const std::size_t covered = layout.hypercubes_per_axis[a] * s;
    const std::size_t border_per_slice = inner_size - inner_cubes;
    if (coordinates[a] >= covered) {
      std::size_t inner = 0;  // the element's C-order position across the faster axes
      for (int b = a + 1; b < Dims; ++b) inner = inner * layout.grid[b] + coordinates[b];
      return position + covered * border_per_slice + (coordinates[a] - covered) * inner_size +
             inner;
    }
    position += coordinates[a] * border_per_slice;
  }
  return layout.border_size;
}

// Copies a box out of decoded values into `out` (the box's shape, C order), a thread per row of
// the box along the last axis. Elements inside the hypercubes come from `decoded`, a C-order grid
// of `decoded_grid` whose first element is the grid's `decoded_origin`; the others (past
// `covered` along some axis) from the raw border at `border`. With the whole grid decoded (the
// high-ratio mode), `covered` is the grid and no border is read.
template <class T, int Dims, class ExecSpace>
struct copy_region {
  using bits_type = typename profile<T, Dims>::bits_type;
  stream_layout<T, Dims> layout;
  region_box<Dims> box;
  std::size_t covered[Dims];
  std::size_t decoded_origin[Dims];
  extent<Dims> decoded_grid;
  const bits_type* decoded;
  const bits_type* border;
  bits_type* out;

  // The number of rows of the box.
  std::size_t rows() const {
    std::size_t r = 1;
    for (int a = 0; a + 1 < Dims; ++a) r *= box.count[a];
    return r;
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t row) const {
    constexpr int last = Dims - 1;
    std::size_t c[Dims];
    std::size_t rest = row;
    bool inside = true;  // whether the row's outer coordinates lie in the hypercubes
    for (int a = last - 1; a >= 0; --a) {
      c[a] = box.start[a] + rest % box.count[a];
      rest /= box.count[a];
    }
    for (int a = 0; a < last; ++a) inside = inside && c[a] < covered[a];
    const std::size_t x0 = box.start[last], x1 = x0 + box.count[last];
    bits_type* const target = out + row * box.count[last];
    std::size_t x = x0;
    if (inside) {
      const std::size_t end = x1 < covered[last] ? x1 : covered[last];
      if (x < end) {
        std::size_t at = 0;
        for (int a = 0; a < last; ++a) at = at * decoded_grid[a] + (c[a] - decoded_origin[a]);
        at = at * decoded_grid[last] + (x - decoded_origin[last]);
        for (; x < end; ++x) target[x - x0] = decoded[at++];
      }
    }
    if (x < x1) {
      // The rest of the row is border, contiguous in the stream's border.
      c[last] = x;
      std::size_t at = border_position(layout, c);
      for (; x < x1; ++x) target[x - x0] = border[at++];
    }
  }
};

}  // namespace ndzip::core
