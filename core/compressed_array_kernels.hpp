// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The kernels of ndzip::compressed_array (ndzip/compressed_array.hpp), over its
// hypercube_decoder: a team per hypercube, and in the element-wise kernels a team per border
// slice after them, so that every call is one launch and the border needs none of its own.

#include <cstddef>

#include <Kokkos_Core.hpp>

#include "ndzip/format.hpp"

namespace ndzip::core {

// A team per hypercube: f(member, h, decoded hypercube h).
template <class Decoder, class Functor>
struct visit_hypercubes {
  Decoder decoder;
  Functor f;

  KOKKOS_INLINE_FUNCTION void operator()(const typename Decoder::member_type& member) const {
    const auto h = static_cast<std::size_t>(member.league_rank());
    f(member, h, decoder.decode(member, h));
  }
};

// f(index, value) for border element i (a range over the border).
template <class Decoder, class Functor>
struct visit_border {
  Decoder decoder;
  Functor f;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    f(decoder.border_coordinates(i), decoder.border_value(i));
  }
};

// Teams of an element-wise kernel: every hypercube, then every border slice.
template <class Decoder>
std::size_t element_teams(const Decoder& decoder) {
  return decoder.hypercube_count() +
         (decoder.border_count() + border_slice_size - 1) / border_slice_size;
}

// An element as the element-wise kernels pass it on.
template <class Decoder>
struct grid_element {
  typename Decoder::index_type index;
  typename Decoder::value_type value;
};

// The elements of element-wise team `team`: body(count, element) with element(j) for j in
// [0, count) the team's elements, those of hypercube `team` (the team decodes it first) or,
// past the hypercubes, those of border slice `team - hypercube_count`. Two calls of body rather
// than a choice per element, so that each loop is compiled for its own kind of element.
template <class Decoder, class Body>
KOKKOS_INLINE_FUNCTION void with_team_elements(const Decoder& decoder,
                                               const typename Decoder::member_type& member,
                                               const Body& body) {
  const auto team = static_cast<std::size_t>(member.league_rank());
  const std::size_t n = decoder.hypercube_count();
  if (team < n) {
    const auto cube = decoder.decode(member, team);
    body(cube.size(), [&](int p) { return grid_element<Decoder>{cube.index(p), cube[p]}; });
  } else {
    const std::size_t first = (team - n) * border_slice_size;
    const std::size_t rest = decoder.border_count() - first;
    body(static_cast<int>(rest < border_slice_size ? rest : border_slice_size), [&](int j) {
      return grid_element<Decoder>{decoder.border_coordinates(first + j),
                                   decoder.border_value(first + j)};
    });
  }
}

// f(index, value) for every element, once.
template <class Decoder, class Functor>
struct visit_elements {
  Decoder decoder;
  Functor f;

  KOKKOS_INLINE_FUNCTION void operator()(const typename Decoder::member_type& member) const {
    with_team_elements(decoder, member, [&](int count, const auto& element) {
      Kokkos::parallel_for(Kokkos::TeamVectorRange(member, count), [&](int j) {
        const auto e = element(j);
        f(e.index, e.value);
      });
    });
  }
};

// Reduces body(j, partial) over j in [0, count) into `result` with `reducer`'s init and join,
// over the team. A host team (one thread of one lane) keeps `chains` partial results, element j
// going into partial j % chains: with one, each element waited for the one before it (a double
// addition's latency), and a fused sum took 0.53-0.84 of decompressing and summing instead of
// 0.28-0.45 (one core, ndzip-fused-bench: 512^3 float 0.273 s against 0.124).
template <class LaneOps, class Member, class Reducer, class Body>
KOKKOS_INLINE_FUNCTION void reduce_over_team([[maybe_unused]] const Member& member, int count,
                                             const Reducer& reducer,
                                             typename Reducer::value_type& result,
                                             const Body& body) {
  if constexpr (LaneOps::group_lanes == 1) {
    constexpr int chains = 8;
    typename Reducer::value_type partial[chains];
    for (int c = 0; c < chains; ++c) reducer.init(partial[c]);
    const int whole = count / chains * chains;
    for (int j = 0; j < whole; j += chains)
      for (int c = 0; c < chains; ++c) body(j + c, partial[c]);
    for (int c = 0; c < count - whole; ++c) body(whole + c, partial[c]);
    for (int c = 1; c < chains; ++c) reducer.join(partial[0], partial[c]);
    result = partial[0];
  } else {
    Kokkos::parallel_reduce(Kokkos::TeamVectorRange(member, count), body, Reducer(result));
  }
}

// f(index, value, partial) for every element, once, joined with `reducer` into the kernel's
// result: each team reduces its elements, and its first thread joins them into its own part.
template <class Decoder, class LaneOps, class Functor, class Reducer>
struct reduce_elements {
  using value_type = typename Reducer::value_type;

  Decoder decoder;
  Functor f;
  Reducer reducer;

  KOKKOS_INLINE_FUNCTION void operator()(const typename Decoder::member_type& member,
                                         value_type& result) const {
    value_type team_result;
    with_team_elements(decoder, member, [&](int count, const auto& element) {
      reduce_over_team<LaneOps>(member, count, reducer, team_result,
                                [&](int j, value_type& partial) {
                                  const auto e = element(j);
                                  f(e.index, e.value, partial);
                                });
    });
    Kokkos::single(Kokkos::PerTeam(member), [&]() { reducer.join(result, team_result); });
  }
};

}  // namespace ndzip::core
