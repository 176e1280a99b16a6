// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A box of a grid, and the kernel that copies it out of decoded values and the stream's border
// (core/region_decoder.hpp decodes the hypercubes it touches; a mode that cannot decode part of
// its stream decodes the whole grid, core/engine.hpp). The border is stored raw, so the box's
// border elements are read straight from the stream, in runs along the last axis.

#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "ndzip/decompress_outcome.hpp"
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

// Copies a box out of decoded values into `out` (the box's shape, C order). Teams take pieces
// of the box's rows along the last axis: a segment of up to `segment` elements of one long row,
// its threads an element each, or up to `segment` elements of short rows, its threads a row each
// (a thread per row of any length left a GPU one thread for a 1-D box, and a team per row of one
// element 262144 teams for a slice across the fastest axis: 150x and 9x a whole array's decode,
// H200). Elements inside the hypercubes come from `decoded`, a C-order grid of `decoded_grid`
// whose first element is the grid's `decoded_origin`; the others (past `covered` along some
// axis) from the stream's raw border, found from the bytes of `stream` that the decoder's
// `outcome` says it checked. The copy runs behind the decoder on its instance, with no wait
// between them: where the decoder found a failure, no border is read. With the whole grid
// decoded (the high-ratio mode), `covered` is the grid and `outcome` null.
template <class T, int Dims, class ExecSpace>
struct copy_region {
  using bits_type = typename profile<T, Dims>::bits_type;
  using policy_type = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
  using member_type = typename policy_type::member_type;
  static constexpr std::size_t segment = 4096;

  stream_layout<T, Dims> layout;
  region_box<Dims> box;
  std::size_t covered[Dims];
  std::size_t decoded_origin[Dims];
  extent<Dims> decoded_grid;
  const bits_type* decoded;
  const std::byte* stream;
  const decompress_outcome* outcome;
  bits_type* out;
  // Set by policy(): a team's share, segments of a long row or whole short rows.
  std::size_t segments_per_row = 1;
  std::size_t rows_per_team = 1;
  std::size_t rows = 1;

  // The copy's teams, on `exec`.
  policy_type policy(const ExecSpace& exec) {
    rows = 1;
    for (int a = 0; a + 1 < Dims; ++a) rows *= box.count[a];
    const std::size_t row = box.count[Dims - 1];
    segments_per_row = (row + segment - 1) / segment;
    rows_per_team = row >= segment ? 1 : segment / row;
    const std::size_t teams =
        rows_per_team > 1 ? (rows + rows_per_team - 1) / rows_per_team : rows * segments_per_row;
    return policy_type(exec, static_cast<std::int64_t>(teams), Kokkos::AUTO);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const std::size_t team = static_cast<std::size_t>(member.league_rank());
    const std::size_t row_start = box.start[Dims - 1], row_end = row_start + box.count[Dims - 1];
    if (rows_per_team == 1) {
      const std::size_t x0 = row_start + team % segments_per_row * segment;
      copy_piece(team / segments_per_row, x0, x0 + segment < row_end ? x0 + segment : row_end,
                 [&](std::size_t n, const auto& f) {
                   Kokkos::parallel_for(Kokkos::TeamVectorRange(member, static_cast<int>(n)),
                                        [&](int k) { f(static_cast<std::size_t>(k)); });
                 });
    } else {
      const std::size_t first = team * rows_per_team;
      const std::size_t count = rows - first < rows_per_team ? rows - first : rows_per_team;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(member, static_cast<int>(count)), [&](int r) {
        copy_piece(first + static_cast<std::size_t>(r), row_start, row_end,
                   [&](std::size_t n, const auto& f) {
                     for (std::size_t k = 0; k < n; ++k) f(k);
                   });
      });
    }
  }

  // Elements [x0, x1) of box row `row`, each copied by for_elements(n, f): f(k) for k < n.
  template <class ForElements>
  KOKKOS_INLINE_FUNCTION void copy_piece(std::size_t row, std::size_t x0, std::size_t x1,
                                         const ForElements& for_elements) const {
    constexpr int last = Dims - 1;
    std::size_t c[Dims];
    std::size_t rest = row;
    bool inside = true;  // whether the row's outer coordinates lie in the hypercubes
    for (int a = last - 1; a >= 0; --a) {
      c[a] = box.start[a] + rest % box.count[a];
      rest /= box.count[a];
    }
    for (int a = 0; a < last; ++a) inside = inside && c[a] < covered[a];
    bits_type* const target = out + row * box.count[last] + (x0 - box.start[last]);
    // [x0, split) from the decoded hypercubes, [split, x1) from the border.
    std::size_t split = x0;
    if (inside) split = x1 < covered[last] ? x1 : (x0 > covered[last] ? x0 : covered[last]);
    if (split > x0) {
      std::size_t at = 0;
      for (int a = 0; a < last; ++a) at = at * decoded_grid[a] + (c[a] - decoded_origin[a]);
      at = at * decoded_grid[last] + (x0 - decoded_origin[last]);
      for_elements(split - x0, [&](std::size_t k) { target[k] = decoded[at + k]; });
    }
    if (split < x1 && outcome != nullptr &&
        outcome->failure == decompress_outcome::no_failure) {
      // The rest of the piece is border, contiguous in the stream's border, which ends the
      // stream of outcome->stream_bytes checked bytes.
      const auto* border = reinterpret_cast<const bits_type*>(stream + outcome->stream_bytes) -
                           layout.border_size;
      c[last] = split;
      const std::size_t at = border_position(layout, c);
      for_elements(x1 - split, [&](std::size_t k) { target[split - x0 + k] = border[at + k]; });
    }
  }
};

}  // namespace ndzip::core
