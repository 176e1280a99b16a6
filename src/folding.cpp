// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Folding a grid into a grid of lower rank (ndzip/folding.hpp).

#include "ndzip/folding.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <string>

#include "ndzip/format.hpp"

namespace ndzip {

namespace {

std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, const array_shape& shape) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
    throw std::overflow_error("ndzip: a " + shape.to_string() + " array is too large to fold");
  return a * b;
}

std::uint64_t element_count(const array_shape& shape) {
  std::uint64_t n = 1;
  for (int a = 0; a < shape.rank(); ++a) n = checked_product(n, shape.extent(a), shape);
  return n;
}

// Whether at least half of the elements of the best folding of `shape` lie in whole hypercubes.
bool best_folding_covers_half(const array_shape& shape) {
  const array_shape coded = folded_shape(shape, folded_rank(shape));
  return 2 * elements_in_hypercubes(coded) >= element_count(coded);
}

}  // namespace

const char* folding_name(folding f) { return f == folding::none ? "none" : "automatic"; }

std::optional<folding> parse_folding(std::string_view name) {
  if (name == "none") return folding::none;
  if (name == "automatic") return folding::automatic;
  return std::nullopt;
}

std::uint64_t hypercube_side(int rank) {
  // The format's own sides (the same for float and double).
  switch (rank) {
    case 1:
      return profile<float, 1>::side_length;
    case 2:
      return profile<float, 2>::side_length;
    case 3:
      return profile<float, 3>::side_length;
    default:
      throw std::invalid_argument("ndzip: no hypercubes of rank " + std::to_string(rank));
  }
}

std::uint64_t elements_in_hypercubes(const array_shape& shape) {
  const std::uint64_t side = hypercube_side(shape.rank());
  std::uint64_t n = 1;
  for (int a = 0; a < shape.rank(); ++a)
    n = checked_product(n, shape.extent(a) / side * side, shape);
  return n;
}

std::uint64_t elements_stored_raw(const array_shape& shape, codec_mode mode) {
  const std::uint64_t border = element_count(shape) - elements_in_hypercubes(shape);
  return mode == codec_mode::high_ratio ? border % profile<float, 1>::hypercube_size : border;
}

array_shape folded_shape(const array_shape& shape, int rank) {
  if (rank < 1 || rank > shape.rank())
    throw std::invalid_argument("ndzip: cannot fold a " + shape.to_string() + " array to rank " +
                                std::to_string(rank) + " (1 to " +
                                std::to_string(shape.rank()) + ")");
  const int merged = shape.rank() - rank + 1;  // the slowest `merged` extents become one
  std::array<std::uint64_t, 3> extents{};
  extents[0] = 1;
  for (int a = 0; a < merged; ++a) extents[0] = checked_product(extents[0], shape.extent(a), shape);
  for (int a = merged; a < shape.rank(); ++a) extents[a - merged + 1] = shape.extent(a);
  return array_shape(shape.type(), rank, extents.data());
}

int folded_rank(const array_shape& shape) {
  const std::uint64_t n = element_count(shape);
  // At least 3/4 in hypercubes (4·H >= 3·N, without the products' overflow): as it is.
  if (elements_in_hypercubes(shape) >= n - n / 4) return shape.rank();
  int best = shape.rank();
  std::uint64_t most = elements_in_hypercubes(shape);
  for (int rank = shape.rank() - 1; rank >= 1; --rank) {
    const std::uint64_t covered = elements_in_hypercubes(folded_shape(shape, rank));
    if (covered > most) {  // strictly more: a tie keeps the higher rank
      best = rank;
      most = covered;
    }
  }
  return best;
}

array_shape coded_shape(const array_shape& shape, folding f) {
  return f == folding::none ? shape : folded_shape(shape, folded_rank(shape));
}

array_shape coded_shape_of(const frame_info& info) {
  return folded_shape(array_shape::of(info), info.coded_dimensions);
}

array_shape suggested_chunk_shape(const array_shape& chunk) {
  std::array<std::uint64_t, 3> unbounded{};
  unbounded.fill(std::numeric_limits<std::uint64_t>::max());
  return suggested_chunk_shape(chunk, array_shape(chunk.type(), chunk.rank(), unbounded.data()));
}

array_shape suggested_chunk_shape(const array_shape& chunk, const array_shape& array) {
  if (array.rank() != chunk.rank())
    throw std::invalid_argument("ndzip: a chunk of " + chunk.to_string() + " in an array of " +
                                array.to_string());
  const std::uint64_t side = hypercube_side(chunk.rank());
  std::array<std::uint64_t, 3> rounded{};
  for (int a = 0; a < chunk.rank(); ++a) {
    const std::uint64_t c = chunk.extent(a), n = array.extent(a);
    if (n <= side) {
      rounded[a] = n;  // taken whole; folding merges it with its neighbours
    } else {
      const std::uint64_t nearest = std::max(side, (c / side + (c % side >= side / 2)) * side);
      rounded[a] = nearest > n ? n / side * side : nearest;
    }
  }
  const array_shape suggestion(chunk.type(), chunk.rank(), rounded.data());
  if (best_folding_covers_half(suggestion)) return suggestion;
  // Array extents below the side: grow the chunk from its fastest dimension, each up to the
  // array's extent, until it holds a 1-D hypercube.
  constexpr std::uint64_t hypercube = profile<float, 1>::hypercube_size;
  std::array<std::uint64_t, 3> grown = chunk.extents();
  for (int a = chunk.rank() - 1; a >= 0; --a) {
    std::uint64_t rest = 1;
    for (int b = 0; b < chunk.rank(); ++b)
      if (b != a) rest = checked_product(rest, grown[b], chunk);
    const std::uint64_t wanted = (hypercube + rest - 1) / rest;
    grown[a] = std::min(array.extent(a), std::max(grown[a], wanted));
    if (element_count(array_shape(chunk.type(), chunk.rank(), grown.data())) >= hypercube) break;
  }
  return array_shape(chunk.type(), chunk.rank(), grown.data());
}

}  // namespace ndzip
