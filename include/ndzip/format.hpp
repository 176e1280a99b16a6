// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Facts of the ndzip stream format (see docs/ and the stream format specification): the
// per-type/per-dimensionality profile, the hypercube grid of an extent, and stream sizes.
// Everything here is constexpr arithmetic, callable from host and device code.

#include <climits>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <Kokkos_Macros.hpp>

#include "ndzip/extent.hpp"

namespace ndzip {

template <class T, int Dims>
struct profile {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "ndzip compresses float and double");
  static_assert(Dims >= 1 && Dims <= 3, "ndzip supports 1-, 2- and 3-D grids");

  using value_type = T;
  // Unsigned word that holds one element's bit pattern.
  using bits_type = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

  static constexpr int dimensions = Dims;
  static constexpr int word_bits = static_cast<int>(sizeof(T) * 8);  // W
  static constexpr int word_bytes = static_cast<int>(sizeof(T));     // U
  static constexpr int side_length = Dims == 1 ? 4096 : Dims == 2 ? 64 : 16;
  static constexpr int hypercube_size = 4096;                          // side_length^Dims
  static constexpr int chunk_size = word_bits;                         // rows per chunk
  static constexpr int chunks_per_hypercube = hypercube_size / chunk_size;  // H
  // Heads plus every bit plane of every chunk present.
  static constexpr int max_block_words = chunks_per_hypercube + hypercube_size;
};

// Where the hypercubes of a grid are and how big the pieces of its stream are.
template <class T, int Dims>
struct stream_layout {
  using profile_type = profile<T, Dims>;

  extent<Dims> grid;
  std::size_t hypercubes_per_axis[Dims] = {};  // C_a
  std::size_t hypercube_count = 0;             // n
  std::size_t border_size = 0;                 // B, elements outside every hypercube

  KOKKOS_INLINE_FUNCTION constexpr explicit stream_layout(const extent<Dims>& g) : grid(g) {
    std::size_t n = 1;
    for (int a = 0; a < Dims; ++a) {
      hypercubes_per_axis[a] = grid[a] / profile_type::side_length;
      n *= hypercubes_per_axis[a];
    }
    hypercube_count = n;
    border_size = grid.size() - n * profile_type::hypercube_size;
  }

  // P: the offset table is n 32-bit entries, padded to a whole word for double.
  KOKKOS_INLINE_FUNCTION constexpr std::size_t header_bytes() const {
    constexpr std::size_t u = profile_type::word_bytes;
    return (4 * hypercube_count + u - 1) / u * u;
  }

  // Stream size once the block area (the last offset-table entry) is known, in words.
  KOKKOS_INLINE_FUNCTION constexpr std::size_t stream_bytes(std::size_t block_area_words) const {
    constexpr std::size_t u = profile_type::word_bytes;
    return header_bytes() + (block_area_words + border_size) * u;
  }

  // The shortest stream of this grid: every block holds just its chunk heads. At most the
  // array's byte size, so it cannot overflow where the array can be addressed.
  KOKKOS_INLINE_FUNCTION constexpr std::size_t smallest_stream_bytes() const {
    return stream_bytes(hypercube_count *
                        static_cast<std::size_t>(profile_type::chunks_per_hypercube));
  }

  // Largest block area any input can produce, in words.
  KOKKOS_INLINE_FUNCTION constexpr std::size_t max_block_area_words() const {
    return hypercube_count * static_cast<std::size_t>(profile_type::max_block_words);
  }

  // The offset table holds 32-bit word offsets, so a larger block area is not representable.
  static constexpr std::size_t max_representable_block_area_words = 0xffffffffu;

  // Hypercube index -> grid coordinate of its first element.
  KOKKOS_INLINE_FUNCTION constexpr void hypercube_origin(std::size_t index,
                                                         std::size_t (&origin)[Dims]) const {
    for (int a = Dims - 1; a >= 0; --a) {
      origin[a] = index % hypercubes_per_axis[a] * profile_type::side_length;
      index /= hypercubes_per_axis[a];
    }
  }
};

// The kernels run one Kokkos team per hypercube and one per slice of this many border elements
// (the fused border copy); Kokkos counts the teams of a launch in an int.
inline constexpr std::size_t border_slice_size = 4096;

template <class T, int Dims>
KOKKOS_INLINE_FUNCTION constexpr std::size_t border_slices(const stream_layout<T, Dims>& layout) {
  return (layout.border_size + border_slice_size - 1) / border_slice_size;
}

// Throws std::invalid_argument unless the ndzip format can hold a grid of this extent and its
// sizes can be computed in std::size_t: the element count times 4 * sizeof(T) must not
// overflow, the worst-case block area must fit the 32-bit offset table, and the hypercubes plus
// border slices must fit the int team count of one kernel launch (grids of 2^43 elements and
// more, nearly all border, could otherwise wrap it).
template <class T, int Dims>
constexpr void check_grid_representable(const extent<Dims>& grid) {
  constexpr std::size_t max_elements = ~std::size_t{0} / 4 / sizeof(T);
  std::size_t elements = 1;
  for (int a = 0; a < Dims; ++a) {
    if (grid[a] != 0 && elements > max_elements / grid[a])
      throw std::invalid_argument("ndzip: a grid of " + to_string(grid) +
                                  " elements is too large to address");
    elements *= grid[a];
  }
  const stream_layout<T, Dims> layout(grid);
  if (layout.max_block_area_words() > layout.max_representable_block_area_words)
    throw std::invalid_argument("ndzip: a grid of " + to_string(grid) +
                                " elements is too large for the ndzip format (its 32-bit offset "
                                "table cannot address the worst-case block area)");
  if (layout.hypercube_count + border_slices(layout) > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument("ndzip: a grid of " + to_string(grid) +
                                " elements is too large for one kernel launch (more than " +
                                std::to_string(INT_MAX) + " hypercubes and border slices)");
}

// The exact worst case of the stream size for a grid, including the double header padding.
// Throws std::invalid_argument as check_grid_representable.
template <class T, int Dims>
constexpr std::size_t compressed_size_bound(const extent<Dims>& grid) {
  check_grid_representable<T>(grid);
  const stream_layout<T, Dims> layout(grid);
  return layout.stream_bytes(layout.max_block_area_words());
}

}  // namespace ndzip
