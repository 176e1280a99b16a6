// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Moving one hypercube between the grid and a team-scratch block of 4096 words: where its
// elements are in the grid, and team-level loads and stores that rotate the sign bit to bit 0
// and back. Written against the profile, so one template serves float/double and 1/2/3-D.

#include <cstddef>

#include <Kokkos_Core.hpp>

#include "backends/host_inline.hpp"
#include "core/bit_mapping.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// A hypercube's elements travel in rows of up to 64 contiguous grid elements: a line along the
// last axis, or a 64-element piece of the single 4096-element 1-D line.
template <class Profile>
inline constexpr int hypercube_row_length = Profile::side_length < 64 ? Profile::side_length : 64;

// log2 of the side length (4096, 64 or 16): a hypercube-local linear position is one bit field
// of this width per axis, the last axis lowest.
template <class Profile>
inline constexpr int side_bits =
    Profile::side_length == 4096 ? 12 : Profile::side_length == 64 ? 6 : 4;

// Distance in a hypercube's linear order between neighbours along `axis`: side_length^(D-1-axis).
template <class Profile>
KOKKOS_FORCEINLINE_FUNCTION constexpr int axis_stride(int axis) {
  return 1 << (side_bits<Profile> * (Profile::dimensions - 1 - axis));
}

// Coordinate along `axis` of the hypercube-local position `local`: a shift and a mask. (A
// division by axis_stride() where the compiler had not unrolled the axis loop was a real
// division: 21 % of the 3-D encoder's instructions and 24 % of the decoder's, H200.)
template <class Profile>
KOKKOS_FORCEINLINE_FUNCTION constexpr int hypercube_coordinate(int local, int axis) {
  return static_cast<int>(static_cast<unsigned>(local) >>
                          (side_bits<Profile> * (Profile::dimensions - 1 - axis))) &
         (Profile::side_length - 1);
}

// Where a hypercube's elements lie in the grid: its first element and the grid's strides,
// computed once per team, so that an element's grid offset costs a multiply-add per outer axis.
template <class Profile>
struct grid_placement {
  static constexpr int dims = Profile::dimensions;
  static_assert(1 << side_bits<Profile> == Profile::side_length);
  std::size_t first = 0;     // grid offset of the hypercube's first element
  std::size_t stride[dims];  // grid distance between neighbours along each axis

  NDZIP_HOST_FORCEINLINE grid_placement(const extent<dims>& grid,
                                        const std::size_t (&origin)[dims]) {
    stride[dims - 1] = 1;
    for (int a = dims - 2; a >= 0; --a) stride[a] = stride[a + 1] * grid[a + 1];
    for (int a = 0; a < dims; ++a) first += origin[a] * stride[a];
  }

  // Grid offset of the hypercube-local position `local`.
  NDZIP_HOST_FORCEINLINE std::size_t offset(int local) const {
    return first + relative_offset(local);
  }

  // Grid offset of `local` from the hypercube's first element. Linear in the coordinates, which
  // are bit fields of `local`: for positions a and b without a common bit, relative_offset(a | b)
  // = relative_offset(a) + relative_offset(b), so that a lane group can form a lane's part once
  // and add a piece's part per access (core/streamed_kernels.hpp).
  NDZIP_HOST_FORCEINLINE std::size_t relative_offset(int local) const {
    std::size_t at = static_cast<std::size_t>(hypercube_coordinate<Profile>(local, dims - 1));
    for (int a = 0; a < dims - 1; ++a)
      at += static_cast<std::size_t>(hypercube_coordinate<Profile>(local, a)) * stride[a];
    return at;
  }
};

// The placement of a hypercube in a grid of its own extent, where every hypercube-local position
// is its own offset: a store through it writes the hypercube in local C order (the
// device-callable decoder's values in team scratch, core/hypercube_decoding.hpp).
template <class Profile>
KOKKOS_INLINE_FUNCTION grid_placement<Profile> own_placement() {
  extent<Profile::dimensions> own;
  std::size_t origin[Profile::dimensions] = {};
  for (int a = 0; a < Profile::dimensions; ++a) own[a] = Profile::side_length;
  return grid_placement<Profile>(own, origin);
}

// Calls f(local, at) for every element of a hypercube, over a lane group's lanes: its
// hypercube-local position and its grid offset. Lane groups take 32 consecutive positions per
// item (in 3-D two rows side by side: one row per item left half the lanes idle, and the 3-D
// decoder's store took 45 % of its time, H200). Host threads walk rows instead (below).
template <class Profile, class LaneOps, class Member, class F>
KOKKOS_INLINE_FUNCTION void for_each_hypercube_element(const Member& member,
                                                       const grid_placement<Profile>& placement,
                                                       const F& f) {
  constexpr int lanes = LaneOps::group_lanes;
  LaneOps::for_each_group(member, Profile::hypercube_size / lanes,
                          [&](const typename LaneOps::lanes& held, int first) NDZIP_INLINE_LAMBDA {
                            for (int s = 0; s < LaneOps::held_lanes; ++s) {
                              const int local = (first + held.group(s)) * lanes + held.lane(s);
                              f(local, placement.offset(local));
                            }
                          });
}

// Calls f(first, at, continued) for every row of a hypercube (host threads, one lane): the
// hypercube-local position of its first element, that element's grid offset, and whether the
// row continues a line along the last axis (1-D: the 64-element rows of the 4096-element line),
// so that the element before the row is the last element of the previous row, in the grid at
// at - 1.
template <class Profile, class F>
NDZIP_HOST_FORCEINLINE void for_each_hypercube_row(const grid_placement<Profile>& placement,
                                                   const F& f) {
  constexpr int row = hypercube_row_length<Profile>;
  for (int g = 0; g < Profile::hypercube_size / row; ++g)
    f(g * row, placement.offset(g * row),
      hypercube_coordinate<Profile>(g * row, Profile::dimensions - 1) != 0);
}

// Host encoders: asks the caches for the grid rows of a hypercube that this thread is likely to
// read next, while it works on the current one. A 2-D or 3-D hypercube's rows lie far apart in
// the grid, where the hardware prefetchers do not follow, and each would otherwise be a wait on
// memory. 1-D hypercubes are contiguous and left to the hardware. A hint only: it changes no
// result. Not for the decoder's stores: prefetching the rows it writes made it slower (2-core
// Zen 4, corpus, Serial: 5.01 -> 5.22 GB/s without; dem_etopo5 4.05 -> 4.54; with prefetchw
// instead of a read prefetch, 6.5 % slower than without).
template <class Profile, class Bits>
NDZIP_HOST_FORCEINLINE void prefetch_hypercube_rows([[maybe_unused]] const Bits* values,
                                                    [[maybe_unused]] const grid_placement<Profile>& placement) {
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__)
  if constexpr (Profile::dimensions > 1) {
    constexpr int row = hypercube_row_length<Profile>;
    constexpr int line_words = 64 / sizeof(Bits);
    for_each_hypercube_row(placement, [&](int, std::size_t at, bool) NDZIP_INLINE_LAMBDA {
      // Every cache line the row touches (a row need not start on a line).
      for (int x = 0; x < row + line_words - 1; x += line_words)
        __builtin_prefetch(values + at + (x < row ? x : row - 1), 0, 3);
    });
  }
#endif
}

// The differences of a row of the grid, sign bits rotated to bit 0, `before` taking the place of
// the element before it. Grid and scratch as restrict parameters: with the row read between
// stores to scratch the compiler could not tell apart, it loaded it element by element.
template <int Row, class Bits>
NDZIP_HOST_FORCEINLINE void row_differences(const Bits* __restrict row, Bits before,
                                            Bits* __restrict out) {
  out[0] = rotate_left_1(row[0]) - before;
  for (int x = 1; x < Row; ++x) out[x] = rotate_left_1(row[x]) - rotate_left_1(row[x - 1]);
}

// Host threads: loads a hypercube into `cube` with the sign bit rotated to bit 0 and the
// differences along the last axis taken on the way in (the first step of the forward Lorenzo
// transform). Each row is a contiguous run, the left neighbours read from the grid, so the
// compiler vectorises it; a sweep over scratch along the last axis could not be.
template <class Profile, class Bits>
NDZIP_HOST_FORCEINLINE void load_hypercube_row_differences(const Bits* values,
                                                           const grid_placement<Profile>& placement,
                                                           Bits* cube) {
  for_each_hypercube_row(placement, [&](int first, std::size_t at, bool continued)
                                        NDZIP_INLINE_LAMBDA {
    row_differences<hypercube_row_length<Profile>>(
        values + at, continued ? rotate_left_1(values[at - 1]) : Bits{0}, cube + first);
  });
}

// Stores a hypercube from `cube`, rotating bit 0 back to the sign position (lane groups). With
// CarryRun > 0, each element first adds run_carry[local / CarryRun] (1-D decoding: the line's
// carry into each run of prefix sums, see unpack_columns).
template <class Profile, class LaneOps, int CarryRun = 0, class Member, class Bits>
KOKKOS_INLINE_FUNCTION void store_hypercube(const Member& member, const Bits* cube,
                                            const grid_placement<Profile>& placement, Bits* values,
                                            [[maybe_unused]] const Bits* run_carry = nullptr) {
  for_each_hypercube_element<Profile, LaneOps>(
      member, placement, [&](int local, std::size_t at) NDZIP_INLINE_LAMBDA {
        if constexpr (CarryRun > 0)
          values[at] = rotate_right_1(static_cast<Bits>(cube[local] + run_carry[local / CarryRun]));
        else
          values[at] = rotate_right_1(cube[local]);
      });
}

}  // namespace ndzip::core
