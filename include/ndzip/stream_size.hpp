// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How long a stream of a grid can be in each mode: the largest (what to allocate for a
// compression) and the smallest (what a reader checks an untrusted stream's length against
// before allocating anything of the grid's size). Every bound of the library is one of these.

#include <cstddef>

#include "ndzip/codec_mode.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/format.hpp"

namespace ndzip {

// The largest stream of `grid` in `mode`: the ndzip stream's bound (ndzip/format.hpp) and the
// mode's header. Throws std::invalid_argument as check_grid_representable.
template <class T, int Dims>
constexpr std::size_t compressed_size_bound(const extent<Dims>& grid, codec_mode mode) {
  return stream_header_bytes(mode) + compressed_size_bound<T>(grid);
}

template <class T, int Dims>
constexpr std::size_t high_ratio_size_bound(const extent<Dims>& grid) {
  return compressed_size_bound<T>(grid, codec_mode::high_ratio);
}

// The shortest high-ratio stream of a grid: the header, a byte per code table, the block table
// (8 bytes per hypercube and per 4096 border elements) and the border's last elements raw, or
// the header and the shortest ndzip stream where that is shorter.
template <class T, int Dims>
constexpr std::size_t high_ratio_smallest_stream_bytes(const extent<Dims>& grid) {
  const stream_layout<T, Dims> layout(grid);
  const std::size_t blocks = layout.hypercube_count + layout.border_size / 4096;
  const std::size_t coded =
      high_ratio_header_bytes + sizeof(T) + 4 + 8 * blocks + layout.border_size % 4096 * sizeof(T);
  const std::size_t stored = high_ratio_header_bytes + layout.smallest_stream_bytes();
  return coded < stored ? coded : stored;
}

// The shortest stream of `grid` in `mode`.
template <class T, int Dims>
constexpr std::size_t smallest_stream_bytes(const extent<Dims>& grid, codec_mode mode) {
  return mode == codec_mode::high_ratio ? high_ratio_smallest_stream_bytes<T>(grid)
                                        : stream_layout<T, Dims>(grid).smallest_stream_bytes();
}

}  // namespace ndzip
