// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The border: every grid element outside the hypercube-covered region, stored raw after the
// blocks in row-major order of the grid. border_element() maps a border position to its grid
// offset in closed form, so the copy is one independent load/store per element.

#include <cstddef>

#include <Kokkos_Core.hpp>

#include "backends/host_inline.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// Grid offset of border element `index` (0 <= index < layout.border_size). Along axis a, the
// first C_a*s positions hold hypercubes in their sub-grid and then border; the rest is a slab
// that is border in full.
template <class T, int Dims>
KOKKOS_INLINE_FUNCTION std::size_t border_element(const stream_layout<T, Dims>& layout,
                                                  std::size_t index) {
  constexpr std::size_t s = profile<T, Dims>::side_length;
  std::size_t offset = 0;
  for (int a = 0; a < Dims; ++a) {
    std::size_t inner_size = 1;    // elements in one slice across the faster axes
    std::size_t inner_cubes = 1;   // hypercube elements in such a slice
    for (int b = a + 1; b < Dims; ++b) {
      inner_size *= layout.grid[b];
      inner_cubes *= layout.hypercubes_per_axis[b] * s;
    }
    const std::size_t covered = layout.hypercubes_per_axis[a] * s;
    const std::size_t border_per_slice = inner_size - inner_cubes;
    if (index >= covered * border_per_slice) {
      // In the trailing slab: the rest of the grid from slice `covered` on is border.
      index -= covered * border_per_slice;
      return (offset * layout.grid[a] + covered) * inner_size + index;
    }
    // Slice i < covered: only its own border counts, so descend into it.
    const std::size_t slice = index / border_per_slice;
    index %= border_per_slice;
    offset = offset * layout.grid[a] + slice;
  }
  // Unreachable for valid indices: the innermost axis always ends in its slab.
  return offset;
}

// The border is copied by extra teams of the block kernels (fused, so no launch of its own):
// each takes a slice of up to border_slice_size (ndzip/format.hpp) border elements.

enum class border_direction { grid_to_stream, stream_to_grid };

// Copies border slice `slice` between the grid and the stream's border area, over the team.
// Lane groups map every element by itself (one independent load and store per lane). A host
// thread copies runs: border elements that follow each other in a grid row are contiguous, so
// it maps only the first of each run (a row's border part: the whole row, or its tail past the
// hypercubes) and copies the run in one loop. Mapped one by one, with two divisions per axis
// each, the border cost 3-D arrays with a border of 10-23 % of their elements more than their
// hypercubes (2-core host: ocean_levitus_temp, wind_navy_uwnd, mri_inia19_t1).
template <border_direction Direction, class LaneOps, class T, int Dims, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void copy_border_slice(const Member& member,
                                              const stream_layout<T, Dims>& layout, Bits* grid,
                                              Bits* border, std::size_t slice) {
  const std::size_t first = slice * border_slice_size;
  const std::size_t count = layout.border_size - first < border_slice_size
                                ? layout.border_size - first
                                : border_slice_size;
  const auto copy = [&](std::size_t i, std::size_t at) NDZIP_INLINE_LAMBDA {
    if constexpr (Direction == border_direction::grid_to_stream)
      border[i] = grid[at];
    else
      grid[at] = border[i];
  };
  if constexpr (LaneOps::group_lanes == 1) {
    const std::size_t row = layout.grid[Dims - 1];
    for (std::size_t i = first; i < first + count;) {
      const std::size_t at = border_element(layout, i);
      const std::size_t run_end = at - at % row + row;  // the run ends with its grid row
      const std::size_t run =
          run_end - at < first + count - i ? run_end - at : first + count - i;
      for (std::size_t k = 0; k < run; ++k) copy(i + k, at + k);
      i += run;
    }
  } else {
    Kokkos::parallel_for(Kokkos::TeamVectorRange(member, static_cast<int>(count)),
                         [&](int j) NDZIP_INLINE_LAMBDA {
                           const std::size_t i = first + j;
                           copy(i, border_element(layout, i));
                         });
  }
}

}  // namespace ndzip::core
