// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The batch codecs a collective (of any link) keeps between calls, one per list of slab grids
// it has compressed or decoded in one launch, made on first use: the rounds of a call mostly
// repeat one list (every piece's full segments), so that a collective holds a few. Not part of
// the API.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ndzip/batch_compressor.hpp"
#include "ndzip/mpi/detail/core/slab_grid.hpp"

namespace ndzip::mpi::detail {

// f(std::integral_constant<int, Dims>) for the grid ranks 1, 2 and 3.
template <class F>
void for_each_grid_rank(F&& f) {
  f(std::integral_constant<int, 1>{});
  f(std::integral_constant<int, 2>{});
  f(std::integral_constant<int, 3>{});
}

// Queues on `exec` a copy of `count` items from `host` (its host mirror) into `device`, both
// from index `from` (nothing where the mirror is the View itself).
template <class ExecSpace, class Device, class Host>
void copy_items(const ExecSpace& exec, const Device& device, const Host& host, std::size_t from,
                std::size_t count) {
  if (count == 0 || device.data() == host.data()) return;
  using value = typename Device::value_type;
  Kokkos::View<value*, typename Device::memory_space, Kokkos::MemoryUnmanaged> to(
      device.data() + from, count);
  Kokkos::View<const value*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> source(host.data() + from,
                                                                              count);
  Kokkos::deep_copy(exec, to, source);
}

template <class T, class ExecSpace>
class batch_cache {
 public:
  explicit batch_cache(const ExecSpace& exec) : m_exec(exec) {}

  // The batch codec of these grids of rank Dims, in this order. Shared, so that an entry
  // dropped from a full cache stays alive while queued work still uses it.
  template <int Dims>
  std::shared_ptr<batch_compressor<T, Dims, ExecSpace>> batch(
      const std::vector<slab_shape>& shapes) {
    std::vector<std::array<std::uint64_t, 3>> key;
    for (const auto& s : shapes) key.push_back(s.extents);
    auto& found = std::get<Dims - 1>(m_batches);
    if (auto it = found.find(key); it != found.end()) return it->second;
    // A collective whose pieces keep changing shape (it should not: its Views are fixed)
    // starts over when the cache is full.
    if (found.size() >= max_batches) found.clear();
    std::vector<extent<Dims>> grids;
    for (const auto& s : shapes) grids.push_back(grid_of<Dims>(s));
    auto made = std::make_shared<batch_compressor<T, Dims, ExecSpace>>(m_exec, grids);
    found.emplace(std::move(key), made);
    return made;
  }

 private:
  static constexpr std::size_t max_batches = 32;
  template <int Dims>
  using batches =
      std::map<std::vector<std::array<std::uint64_t, 3>>,
               std::shared_ptr<batch_compressor<T, Dims, ExecSpace>>>;

  ExecSpace m_exec;
  std::tuple<batches<1>, batches<2>, batches<3>> m_batches;
};

}  // namespace ndzip::mpi::detail
