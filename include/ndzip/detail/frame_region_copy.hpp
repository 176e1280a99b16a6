// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A box of an array whose frame codes it folded (ndzip/folding.hpp: its slowest dimensions
// merged into one): the box of the coded grid around it, decoded into a buffer, and the kernel
// that gathers the array's box out of that buffer (ndzip/frame_region.hpp). Along the array's
// last axis a row of the box is contiguous in the coded grid too, so the gather copies rows, a
// team each.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <cstdint>

#include "ndzip/extent.hpp"

namespace ndzip::detail {

template <int Dims, int Rank>
struct folded_region {
  static_assert(Rank < Dims);
  // The array's axes 0 .. merged-1 are the coded grid's axis 0.
  static constexpr int merged = Dims - Rank + 1;
  // Plain arrays and extents, which device code can index.
  extent<Dims> grid, count;
  std::size_t start[Dims];
  std::size_t coded_start[Rank];
  extent<Rank> coded_count;

  folded_region(const extent<Dims>& array, const std::array<std::size_t, Dims>& box_start,
                const extent<Dims>& box_count)
      : grid(array), count(box_count) {
    for (int a = 0; a < Dims; ++a) start[a] = box_start[a];
    std::size_t first = 0, last = 0;
    for (int a = 0; a < merged; ++a) {
      first = first * grid[a] + start[a];
      last = last * grid[a] + start[a] + count[a] - 1;
    }
    coded_start[0] = first;
    coded_count[0] = last - first + 1;
    for (int k = 1; k < Rank; ++k) {
      coded_start[k] = start[merged - 1 + k];
      coded_count[k] = count[merged - 1 + k];
    }
  }

  std::array<std::size_t, Rank> coded_box_start() const {
    std::array<std::size_t, Rank> s{};
    for (int k = 0; k < Rank; ++k) s[k] = coded_start[k];
    return s;
  }

  // The buffer of the coded box, in Space.
  template <class T, class Space>
  auto make_buffer() const {
    using data_type = std::conditional_t<Rank == 1, T*, T**>;
    return Kokkos::View<data_type, Kokkos::LayoutRight, Space>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::folded_region"), coded_count[0],
        Rank > 1 ? coded_count[Rank - 1] : KOKKOS_INVALID_INDEX);
  }

  // A team per row of the box: the row's place in the buffer, then its elements, a thread each.
  template <class T, class Member>
  struct gather_rows {
    folded_region region;
    const T* coded;
    T* out;
    KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
      const std::size_t row = static_cast<std::size_t>(member.league_rank());
      std::size_t c[Dims];
      std::size_t rest = row;
      c[Dims - 1] = region.start[Dims - 1];
      for (int a = Dims - 2; a >= 0; --a) {
        c[a] = region.start[a] + rest % region.count[a];
        rest /= region.count[a];
      }
      std::size_t at = 0;
      for (int a = 0; a < merged; ++a) at = at * region.grid[a] + c[a];
      at -= region.coded_start[0];
      for (int k = 1; k < Rank; ++k)
        at = at * region.coded_count[k] + (c[merged - 1 + k] - region.coded_start[k]);
      const std::size_t n = region.count[Dims - 1];
      Kokkos::parallel_for(Kokkos::TeamVectorRange(member, static_cast<int>(n)),
                           [&](int x) { out[row * n + x] = coded[at + x]; });
    }
  };

  template <class ExecSpace, class T>
  void gather(const ExecSpace& exec, const T* coded, T* out) const {
    using policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>;
    std::size_t rows = 1;
    for (int a = 0; a + 1 < Dims; ++a) rows *= count[a];
    Kokkos::parallel_for("ndzip::gather_folded_region",
                         policy(exec, static_cast<std::int64_t>(rows), Kokkos::AUTO),
                         gather_rows<T, typename policy::member_type>{*this, coded, out});
  }
};

}  // namespace ndzip::detail
