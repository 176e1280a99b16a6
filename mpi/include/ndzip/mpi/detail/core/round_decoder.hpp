// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How a collective (of any link) decodes the pieces a rank receives, round by round: the
// streams of round r in one batch_compressor launch per grid rank, the raw segments in one copy
// launch, whatever the number of pieces; every outcome checked once the instance has been
// fenced after the last round. Not part of the API.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "ndzip/batch_compressor.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/error.hpp"
#include "ndzip/mpi/detail/core/batch_cache.hpp"
#include "ndzip/mpi/detail/core/slab_grid.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"

namespace ndzip::mpi::detail {

// A piece a rank receives: where its values go (C order, the execution space's memory) and the
// transfer head it expects (its View's type and extents), then the one that arrived; `decode`
// once that head has been checked against the View.
template <class T>
struct incoming_piece {
  T* values = nullptr;
  transfer_head expected;
  transfer_head arrived;
  bool decode = false;
};

// Raw values copied into a View, a team each.
template <class T>
struct copy_entry {
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  const bits* from;
  bits* to;
  std::uint64_t words;
};

template <class T, class ExecSpace>
struct copy_raw_segments {
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const copy_entry<T>* entries;
  KOKKOS_FUNCTION void operator()(const member& team) const {
    const copy_entry<T>& e = entries[team.league_rank()];
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, e.words),
                         [&](std::size_t i) { e.to[i] = e.from[i]; });
  }
};

template <class T, class ExecSpace>
class round_decoder {
  using memory_space = typename ExecSpace::memory_space;

 public:
  round_decoder(const ExecSpace& exec, batch_cache<T, ExecSpace>& batches)
      : m_exec(exec), m_batches(batches) {}

  // Starts a call of `rounds` rounds over `pieces` pieces (growing the scratch only where the
  // call needs more than any before).
  void reset(std::size_t pieces, std::uint64_t rounds) {
    m_pieces = pieces;
    m_launches.clear();
    const std::size_t slots = pieces * rounds;
    if (m_items.size() < slots) {
      const auto noinit = [](const char* label) {
        return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
      };
      m_items =
          Kokkos::View<batch_item<T>*, memory_space>(noinit("ndzip::mpi decode items"), slots);
      m_items_host = Kokkos::create_mirror_view(m_items);
      m_copies = Kokkos::View<copy_entry<T>*, memory_space>(noinit("ndzip::mpi raw copies"), slots);
      m_copies_host = Kokkos::create_mirror_view(m_copies);
      m_outcomes = Kokkos::View<decompress_outcome*, memory_space>(noinit("ndzip::mpi outcomes"),
                                                                   slots);
      m_outcomes_host = Kokkos::create_mirror_view(m_outcomes);
    }
  }

  // Queues the decoding of round r: segment r of every piece with `decode`, its head `heads[q]`
  // (checked against its slab) and its payload at `payloads[q]` (the execution space's memory).
  void queue(std::uint64_t r, const std::vector<incoming_piece<T>>& pieces,
             const std::vector<segment_head>& heads,
             const std::vector<const std::byte*>& payloads) {
    const std::size_t base = r * m_pieces;
    std::vector<slab_shape> shapes[3];
    std::vector<std::size_t> members[3];
    std::size_t copies = 0;
    for (std::size_t q = 0; q < pieces.size(); ++q) {
      const auto& p = pieces[q];
      if (!p.decode || r >= p.arrived.segments()) continue;
      T* slab = p.values + p.arrived.slab_offset(r);
      if (heads[q].kind == segment_kind::raw) {
        using bits = typename copy_entry<T>::bits;
        m_copies_host(base + copies++) = {reinterpret_cast<const bits*>(payloads[q]),
                                          reinterpret_cast<bits*>(slab),
                                          heads[q].payload_bytes / sizeof(T)};
      } else {
        const slab_shape shape = slab_of(p.arrived, r);
        shapes[shape.dims - 1].push_back(shape);
        members[shape.dims - 1].push_back(q);
      }
    }
    std::size_t items = 0;
    for (const auto& list : members)
      for (std::size_t q : list)
        m_items_host(base + items++) = {pieces[q].values + pieces[q].arrived.slab_offset(r),
                                        const_cast<std::byte*>(payloads[q]),
                                        heads[q].payload_bytes};
    copy_items(m_exec, m_items, m_items_host, base, items);
    copy_items(m_exec, m_copies, m_copies_host, base, copies);
    std::size_t first = base;
    for_each_grid_rank([&](auto rank) {
      constexpr int dims = decltype(rank)::value;
      const auto& list = members[dims - 1];
      if (list.empty()) return;
      auto batch = m_batches.template batch<dims>(shapes[dims - 1]);
      batch->decompress_raw_async(m_items.data() + first, m_outcomes.data() + first);
      for (std::size_t j = 0; j < list.size(); ++j)
        m_launches.push_back({r, list[j], first + j, heads[list[j]].payload_bytes,
                              [batch, j](const decompress_outcome& o) {
                                return batch->check_outcome(j, o);
                              }});
      first += list.size();
    });
    if (copies > 0)
      Kokkos::parallel_for("ndzip::mpi raw segments",
                           Kokkos::TeamPolicy<ExecSpace>(m_exec, static_cast<int>(copies),
                                                         Kokkos::AUTO),
                           copy_raw_segments<T, ExecSpace>{m_copies.data() + base});
  }

  // After the instance has been fenced past the last round: the first piece whose stream did
  // not decode to exactly its slab, as ndzip::stream_error prefixed by `where(piece, round)`;
  // -1 and null if none. `failed` is set for every such piece.
  template <class Where>
  std::exception_ptr check(std::vector<bool>& failed, Where&& where) const {
    if (m_launches.empty()) return nullptr;
    const auto& outcomes = m_outcomes_host;
    Kokkos::deep_copy(outcomes, m_outcomes);
    std::exception_ptr first;
    for (const auto& l : m_launches) {
      try {
        const std::size_t consumed = l.check(outcomes(l.slot));
        if (consumed != l.payload_bytes)
          throw stream_error("ndzip: its stream takes " + std::to_string(consumed) + " of the " +
                             std::to_string(l.payload_bytes) + " bytes that arrived");
      } catch (const stream_error& e) {
        failed[l.piece] = true;
        if (!first)
          first = std::make_exception_ptr(stream_error(where(l.piece, l.round) + e.what()));
      }
    }
    return first;
  }

 private:
  struct launch {
    std::uint64_t round;
    std::size_t piece;
    std::size_t slot;
    std::uint64_t payload_bytes;
    std::function<std::size_t(const decompress_outcome&)> check;
  };

  ExecSpace m_exec;
  batch_cache<T, ExecSpace>& m_batches;
  std::size_t m_pieces = 0;
  std::vector<launch> m_launches;
  Kokkos::View<batch_item<T>*, memory_space> m_items;
  typename Kokkos::View<batch_item<T>*, memory_space>::HostMirror m_items_host;
  Kokkos::View<copy_entry<T>*, memory_space> m_copies;
  typename Kokkos::View<copy_entry<T>*, memory_space>::HostMirror m_copies_host;
  Kokkos::View<decompress_outcome*, memory_space> m_outcomes;
  typename Kokkos::View<decompress_outcome*, memory_space>::HostMirror m_outcomes_host;
};

}  // namespace ndzip::mpi::detail
