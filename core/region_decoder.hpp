// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Decoding part of a grid: a box of it, into an array of the box's shape. Only the hypercubes the
// box touches are decoded, by the whole grid's decoder (core/decoder.hpp) with its teams mapped
// onto them (region_teams), into a buffer that holds those hypercubes alone; then one kernel copies the box
// out of that buffer and out of the stream's border (core/region_copy.hpp), which is stored raw
// and so read only where the box lies in it. The decoder checks what it reads as the whole
// grid's does: the last offset-table entry, and every block it decodes; blocks outside the box
// are not read.

#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "core/decoder.hpp"
#include "core/encoder.hpp"
#include "core/region_copy.hpp"
#include "core/stream_status.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// The hypercubes a box touches: per axis the first one and how many, and the buffer they are
// decoded into (a grid of exactly those hypercubes, C order).
template <class T, int Dims>
struct region_cubes {
  static constexpr std::size_t side = profile<T, Dims>::side_length;
  std::size_t first[Dims] = {};  // along each axis, in hypercubes
  extent<Dims> count;            // hypercubes along each axis
  std::size_t total = 1;

  region_cubes(const stream_layout<T, Dims>& layout, const region_box<Dims>& box) {
    for (int a = 0; a < Dims; ++a) {
      const std::size_t end = (box.start[a] + box.count[a] + side - 1) / side;
      const std::size_t last = end < layout.hypercubes_per_axis[a] ? end
                                                                   : layout.hypercubes_per_axis[a];
      first[a] = box.start[a] / side;
      count[a] = last > first[a] ? last - first[a] : 0;
      total *= count[a];
    }
  }

  // The buffer's grid: the touched hypercubes' elements.
  extent<Dims> buffer_grid() const {
    extent<Dims> g;
    for (int a = 0; a < Dims; ++a) g[a] = count[a] * side;
    return g;
  }
};

// The region decoder's teams: team t decodes the t-th touched hypercube (C order over the touched
// ones) into the buffer; a region touching none launches one team, which only checks the stream's
// length and reports it.
template <class T, int Dims>
struct region_teams {
  static constexpr bool copies_border = false;
  static constexpr bool decodes_blocks = true;
  static constexpr std::size_t side = profile<T, Dims>::side_length;
  std::size_t first[Dims];        // the first touched hypercube along each axis
  std::size_t count[Dims];        // touched hypercubes along each axis
  std::size_t grid_cubes[Dims];   // the grid's hypercubes along each axis
  std::size_t touched;
  extent<Dims> buffer;            // the buffer's grid

  region_teams(const stream_layout<T, Dims>& layout, const region_cubes<T, Dims>& cubes)
      : touched(cubes.total), buffer(cubes.buffer_grid()) {
    for (int a = 0; a < Dims; ++a) {
      first[a] = cubes.first[a];
      count[a] = cubes.count[a];
      grid_cubes[a] = layout.hypercubes_per_axis[a];
    }
  }

  // The stream's index of team `team`'s hypercube (the grid's hypercube count, no hypercube, for
  // the lone team of a region that touches none).
  KOKKOS_INLINE_FUNCTION std::size_t hypercube_of(std::size_t team) const {
    std::size_t index = 1;
    for (int a = 0; a < Dims; ++a) index *= grid_cubes[a];
    if (team >= touched) return index;
    std::size_t local[Dims];
    for (int a = Dims - 1; a >= 0; --a) {
      local[a] = team % count[a];
      team /= count[a];
    }
    index = 0;
    for (int a = 0; a < Dims; ++a) index = index * grid_cubes[a] + first[a] + local[a];
    return index;
  }

  // Where stream hypercube `index` goes in the buffer.
  NDZIP_HOST_FORCEINLINE grid_placement<profile<T, Dims>> placement(
      const stream_layout<T, Dims>& layout, std::size_t index) const {
    std::size_t origin[Dims];
    layout.hypercube_origin(index, origin);
    for (int a = 0; a < Dims; ++a) origin[a] -= first[a] * side;
    return grid_placement<profile<T, Dims>>(buffer, origin);
  }
};

}  // namespace ndzip::core
