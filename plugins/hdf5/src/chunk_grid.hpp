// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// From the run-time description of a chunk to the compile-time types of the ndzip API: the
// element type and an ndzip::extent of the chunk's rank.

#include <stdexcept>
#include <utility>

#include "chunk_parameters.hpp"
#include "ndzip/extent.hpp"

namespace ndzip::hdf5_plugin {

template <class T>
struct type_tag {
  using type = T;
};

// Calls f(type_tag<T>{}, ndzip::extent<Rank>) for the chunk's element type T and extents.
template <class F>
decltype(auto) with_chunk_grid(const chunk_parameters& chunk, F&& f) {
  auto with_type = [&](auto tag) -> decltype(auto) {
    const auto& e = chunk.extents;
    switch (chunk.rank) {
      case 1:
        return std::forward<F>(f)(tag, extent<1>(e[0]));
      case 2:
        return std::forward<F>(f)(tag, extent<2>(e[0], e[1]));
      case 3:
        return std::forward<F>(f)(tag, extent<3>(e[0], e[1], e[2]));
    }
    throw std::logic_error("ndzip HDF5 filter: chunk rank outside 1-3");
  };
  if (chunk.type == element_type::float32) return with_type(type_tag<float>{});
  return with_type(type_tag<double>{});
}

}  // namespace ndzip::hdf5_plugin
