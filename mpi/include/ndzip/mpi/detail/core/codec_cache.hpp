// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The codecs a communicator (of any link) keeps between transfers, one per slab grid it has
// seen, made on first use: a compressor allocates its scratch once, and a halo exchange or a
// few message sizes need only a few grids. Not part of the API.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>

#include "ndzip/compressor.hpp"
#include "ndzip/mpi/detail/core/slab_grid.hpp"

namespace ndzip::mpi::detail {

template <class ExecSpace>
class codec_cache {
 public:
  explicit codec_cache(const ExecSpace& exec) : m_exec(exec) {}

  // The codec of one grid. Shared, so that an entry dropped from the cache stays alive while a
  // transfer still uses it.
  template <class T, int Dims>
  std::shared_ptr<compressor<T, Dims, ExecSpace>> codec(const extent<Dims>& grid) {
    const std::array<std::uint64_t, 5> key = {sizeof(T), Dims, grid[0], Dims > 1 ? grid[1] : 1,
                                              Dims > 2 ? grid[Dims - 1] : 1};
    std::lock_guard<std::mutex> lock(m_mutex);
    if (auto found = m_codecs.find(key); found != m_codecs.end())
      return std::static_pointer_cast<compressor<T, Dims, ExecSpace>>(found->second);
    if (m_codecs.size() >= max_codecs) m_codecs.clear();
    auto made = std::make_shared<compressor<T, Dims, ExecSpace>>(m_exec, grid);
    m_codecs.emplace(key, made);
    return made;
  }

  // f(codec) with the codec of the slab's grid, whatever its rank; f returns the same type for
  // every rank.
  template <class T, class F>
  auto with_codec(const slab_shape& shape, F&& f) {
    return with_grid(shape, [&](const auto& grid) {
      constexpr int dims = std::decay_t<decltype(grid)>::dimensions;
      return f(codec<T, dims>(grid));
    });
  }

 private:
  // A program sending ever new shapes starts over when the cache is full.
  static constexpr std::size_t max_codecs = 64;

  ExecSpace m_exec;
  std::mutex m_mutex;
  std::map<std::array<std::uint64_t, 5>, std::shared_ptr<void>> m_codecs;
};

}  // namespace ndzip::mpi::detail
