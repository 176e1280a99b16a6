// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// From the run-time description of a chunk to the compile-time types of the ndzip API: the
// element type and an ndzip::extent of the chunk's rank.

#include <utility>

#include "chunk_parameters.hpp"
#include "core/array_dispatch.hpp"
#include "ndzip/extent.hpp"

namespace ndzip::hdf5_plugin {

// Calls f(detail::type_tag<T>{}, ndzip::extent<Rank>) for the chunk's element type T and
// extents (the plugin's type codes are the frame's: 1 float, 2 double).
template <class F>
decltype(auto) with_chunk_grid(const chunk_parameters& chunk, F&& f) {
  const auto type = chunk.type == element_type::float32 ? ndzip::element_type::float32
                                                        : ndzip::element_type::float64;
  return detail::with_array_type(type, chunk.rank, [&](auto tag, auto rank) -> decltype(auto) {
    extent<decltype(rank)::value> grid;
    for (int a = 0; a < decltype(rank)::value; ++a) grid[a] = chunk.extents[a];
    return std::forward<F>(f)(tag, grid);
  });
}

}  // namespace ndzip::hdf5_plugin
