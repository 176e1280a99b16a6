// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the asynchronous and batch tests share: grids with hypercubes and border, border only, and
// nothing at all; a genuine stream's forgeries; and counters of the fences, allocations and deep
// copies Kokkos reports to tools.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <Kokkos_Core.hpp>

#include "ndzip/extent.hpp"
#include "test_support.hpp"

namespace ndzip_test {

template <int D>
std::vector<ndzip::extent<D>> async_grids() {
  // Hypercubes and border; border only; nothing at all.
  if constexpr (D == 1)
    return {ndzip::extent<1>(3 * 4096 + 1000), ndzip::extent<1>(100), ndzip::extent<1>(0)};
  else if constexpr (D == 2)
    return {ndzip::extent<2>(130, 67), ndzip::extent<2>(63, 200), ndzip::extent<2>(0, 5)};
  else
    return {ndzip::extent<3>(33, 18, 20), ndzip::extent<3>(15, 40, 40), ndzip::extent<3>(4, 0, 2)};
}

// Forgeries of a genuine stream of words of `word_bytes` bytes, named: offset-table entries that
// contradict each other or the stream, and a stream cut short by a word.
inline std::vector<std::pair<const char*, std::vector<unsigned char>>> forged_streams(
    const std::vector<unsigned char>& stream, std::size_t word_bytes) {
  const std::uint32_t e0 = load_u32(stream, 0), e1 = load_u32(stream, 4);
  const auto forged = [&](std::size_t at, std::uint32_t entry, std::size_t keep) {
    auto s = stream;
    store_u32(s, at, entry);
    s.resize(keep);
    return s;
  };
  return {
      {"E0 > E1", forged(0, e1 + 1, stream.size())},
      {"E0 = 0", forged(0, 0, stream.size())},
      {"E1 far beyond the stream", forged(4, 0xffffffffu, stream.size())},
      {"E0 one word long", forged(0, e0 + 1, stream.size())},
      {"last word cut off", forged(0, e0, stream.size() - word_bytes)},
  };
}

// Kokkos tool callbacks that count what a call does. The counters are plain globals: the
// callbacks are function pointers without a context.
struct tool_counts {
  int fences = 0, allocations = 0, deep_copies = 0;
  std::string what;  // the labels Kokkos gave, for failure messages
};
inline tool_counts counted;

inline void count_fence(const char* label, std::uint32_t, std::uint64_t* handle) {
  ++counted.fences;
  counted.what += std::string(" fence:") + label;
  *handle = 0;
}
// Kokkos 4.x on CUDA reports a zero-byte "TeamScratchMemory" allocation for every team launch
// without level-1 scratch (its bookkeeping, no memory is taken): only real allocations count.
inline void count_allocation(Kokkos_Profiling_SpaceHandle space, const char* label, const void*,
                      std::uint64_t bytes) {
  if (bytes > 0) ++counted.allocations;
  counted.what += std::string(" allocation:") + space.name + "/" + label + "/" +
                  std::to_string(bytes);
}
inline void count_deep_copy(Kokkos_Profiling_SpaceHandle, const char* to, const void*,
                     Kokkos_Profiling_SpaceHandle, const char* from, const void*, std::uint64_t) {
  ++counted.deep_copies;
  counted.what += std::string(" deep_copy:") + from + "->" + to;
}

// Counts, while it lives, the fences, allocations and deep copies that Kokkos reports.
class tool_counter {
 public:
  tool_counter() {
    counted = {};
    Kokkos::Tools::Experimental::set_begin_fence_callback(count_fence);
    Kokkos::Tools::Experimental::set_allocate_data_callback(count_allocation);
    Kokkos::Tools::Experimental::set_begin_deep_copy_callback(count_deep_copy);
  }
  ~tool_counter() {
    Kokkos::Tools::Experimental::set_begin_fence_callback(nullptr);
    Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
    Kokkos::Tools::Experimental::set_begin_deep_copy_callback(nullptr);
  }
  tool_counts since_start() const { return counted; }
};


}  // namespace ndzip_test
