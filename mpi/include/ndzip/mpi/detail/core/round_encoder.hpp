// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How a collective (of any link) codes the pieces a rank sends, round by round: round r holds
// segment r of every piece that has one (docs/FORMAT.md "Collectives"), compressed in one
// batch_compressor launch per grid rank and finished in one more launch (raw values copied where
// a stream would not be smaller), whatever the number of pieces; then the payload sizes are
// published to the host, which waits for that round alone while the instance codes the next.
// Not part of the API.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ndzip/batch_compressor.hpp"
#include "ndzip/mpi/detail/core/batch_cache.hpp"
#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/collective_layout.hpp"
#include "ndzip/mpi/detail/core/slab_grid.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"

namespace ndzip::mpi::detail {

// A piece a rank sends: its values in C order in the execution space's memory, and the
// transfer head that says how they are cut into segments.
template <class T>
struct outgoing_piece {
  const T* values;
  transfer_head head;
};

// One segment to finish: its stream size (null: sent raw without compression), its values, and
// where its payload goes and its size.
template <class T>
struct finish_entry {
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  const std::uint64_t* stream_bytes;
  const bits* slab;
  std::byte* payload;
  std::uint64_t raw_bytes;
  std::uint64_t* payload_bytes;
};

// Finishes every segment of a round, a team each: the raw values where the stream is not smaller
// (values as bits: no float load or store may touch a NaN's payload), and the payload size.
template <class T, class ExecSpace>
struct finish_round {
  using bits = typename finish_entry<T>::bits;
  using member = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  const finish_entry<T>* entries;

  KOKKOS_FUNCTION void operator()(const member& team) const {
    const finish_entry<T>& e = entries[team.league_rank()];
    const bool raw = !e.stream_bytes || *e.stream_bytes >= e.raw_bytes;
    if (raw)
      Kokkos::parallel_for(
          Kokkos::TeamThreadRange(team, e.raw_bytes / sizeof(bits)),
          [&](std::size_t i) { reinterpret_cast<bits*>(e.payload)[i] = e.slab[i]; });
    Kokkos::single(Kokkos::PerTeam(team),
                   [&] { *e.payload_bytes = raw ? e.raw_bytes : *e.stream_bytes; });
  }
};

// Raises a round's mark in host-visible memory after the work queued before it.
struct raise_round_mark {
  volatile std::uint64_t* mark;
  KOKKOS_FUNCTION void operator()(int) const { *mark = 1; }
};

template <class T, class ExecSpace>
class round_encoder {
  using memory_space = typename ExecSpace::memory_space;
  using staging_space = typename staging<ExecSpace>::space;
  // Where the device can write host memory, the finishing kernel writes the sizes there and a
  // mark says when; otherwise (Kokkos 3 with a device) the host fences and copies them.
  static constexpr bool device_writes_host =
      Kokkos::SpaceAccessibility<ExecSpace, staging_space>::accessible;
  using sizes_space = std::conditional_t<device_writes_host, staging_space, memory_space>;

 public:
  round_encoder(const ExecSpace& exec, batch_cache<T, ExecSpace>& batches,
                std::vector<outgoing_piece<T>> pieces, std::uint64_t rounds)
      : m_exec(exec), m_batches(batches), m_pieces(std::move(pieces)), m_rounds(rounds) {
    const std::size_t n = m_pieces.size(), slots = rounds * n;
    const auto noinit = [](const char* label) {
      return Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label));
    };
    m_items = Kokkos::View<batch_item<T>*, memory_space>(noinit("ndzip::mpi round items"), slots);
    m_items_host = Kokkos::create_mirror_view(m_items);
    m_entries =
        Kokkos::View<finish_entry<T>*, memory_space>(noinit("ndzip::mpi round entries"), slots);
    m_entries_host = Kokkos::create_mirror_view(m_entries);
    m_stream_bytes = Kokkos::View<std::uint64_t*, memory_space>("ndzip::mpi round streams", slots);
    m_sizes =
        Kokkos::View<std::uint64_t*, sizes_space>("ndzip::mpi round sizes", slots + 2 * rounds);
    m_sizes_host = Kokkos::create_mirror_view(m_sizes);
    for (std::uint64_t r = 0; r < rounds; ++r) {
      std::size_t offset = 0;
      for (const auto& p : m_pieces) {
        m_offsets.push_back(offset);
        if (r < p.head.segments()) {
          const slab_shape shape = slab_of(p.head, r);
          const std::uint64_t raw = p.head.slab_bytes(r);
          const std::uint64_t bound = holds_hypercube<T>(shape) ? stream_bound<T>(shape) : 0;
          offset += round_up_to_unit(bound > raw ? bound : raw);
        }
      }
      m_region_bytes.push_back(offset);
    }
  }

  std::uint64_t rounds() const { return m_rounds; }
  const std::vector<outgoing_piece<T>>& pieces() const { return m_pieces; }
  // The bytes round r's payloads take room for, and where piece p's lies among them.
  std::size_t region_bytes(std::uint64_t r) const { return m_region_bytes[r]; }
  std::size_t payload_offset(std::uint64_t r, std::size_t p) const {
    return m_offsets[r * m_pieces.size() + p];
  }

  // Starts a call: no round is published yet (the previous call's work is complete).
  void reset() {
    if constexpr (device_writes_host) {
      for (std::size_t i = 0; i < m_sizes.size(); ++i) m_sizes(i) = 0;
    } else {
      Kokkos::deep_copy(m_exec, m_sizes, std::uint64_t{0});
    }
  }

  // Queues round r into `region` (region_bytes(r) bytes in the execution space's memory):
  // every piece's segment r compressed (`compress`: where its slab holds a hypercube) or raw,
  // and its payload size published. Returns at once.
  void queue(std::uint64_t r, bool compress, std::byte* region) {
    constexpr std::size_t none = ~std::size_t{0};
    const std::size_t n = m_pieces.size(), base = r * n;
    std::vector<slab_shape> shapes[3];
    std::vector<std::size_t> members[3];
    for (std::size_t p = 0; p < n; ++p) {
      if (r >= m_pieces[p].head.segments()) continue;
      const slab_shape shape = slab_of(m_pieces[p].head, r);
      if (compress && holds_hypercube<T>(shape)) {
        shapes[shape.dims - 1].push_back(shape);
        members[shape.dims - 1].push_back(p);
      }
    }
    // A batch reads consecutive items: those of one grid rank lie together.
    std::vector<std::size_t> item_of(n, none);
    std::size_t items = 0;
    for (const auto& list : members)
      for (std::size_t p : list) {
        item_of[p] = items;
        m_items_host(base + items++) = {const_cast<T*>(slab_values(p, r)),
                                        region + payload_offset(r, p), 0};
      }
    std::size_t entries = 0;
    for (std::size_t p = 0; p < n; ++p) {
      if (r >= m_pieces[p].head.segments()) continue;
      m_entries_host(base + entries++) = {
          item_of[p] != none ? m_stream_bytes.data() + base + item_of[p] : nullptr,
          reinterpret_cast<const typename finish_entry<T>::bits*>(slab_values(p, r)),
          region + payload_offset(r, p), m_pieces[p].head.slab_bytes(r), m_sizes.data() + base + p};
    }
    copy_items(m_exec, m_items, m_items_host, base, items);
    copy_items(m_exec, m_entries, m_entries_host, base, entries);
    std::size_t first = base;
    for_each_grid_rank([&](auto rank) {
      constexpr int dims = decltype(rank)::value;
      if (members[dims - 1].empty()) return;
      m_batches.template batch<dims>(shapes[dims - 1])
          ->compress_raw_async(m_items.data() + first, m_stream_bytes.data() + first);
      first += members[dims - 1].size();
    });
    if (entries > 0)
      Kokkos::parallel_for("ndzip::mpi finish round",
                           Kokkos::TeamPolicy<ExecSpace>(m_exec, static_cast<int>(entries),
                                                         Kokkos::AUTO),
                           finish_round<T, ExecSpace>{m_entries.data() + base});
    queue_mark(r, published);
  }

  // Waits for round r (queued); returns its payload sizes, one per piece (0 for pieces without
  // a segment r), in host memory.
  const std::uint64_t* wait(std::uint64_t r) {
    wait_for_mark(r, published);
    if constexpr (device_writes_host) {
      return m_sizes.data() + r * m_pieces.size();
    } else {
      Kokkos::deep_copy(m_sizes_host, m_sizes);
      return m_sizes_host.data() + r * m_pieces.size();
    }
  }

  // Marks the work queued after round r's publication (the link's copies of its payloads), and
  // waits for that mark: unlike a fence, not for the rounds queued after it.
  void queue_staged_mark(std::uint64_t r) { queue_mark(r, staged); }
  void wait_staged(std::uint64_t r) { wait_for_mark(r, staged); }

 private:
  enum mark_kind : std::size_t { published = 0, staged = 1 };

  std::uint64_t* mark_of(std::uint64_t r, mark_kind kind) const {
    return m_sizes.data() + m_rounds * m_pieces.size() + 2 * r + kind;
  }
  void queue_mark(std::uint64_t r, mark_kind kind) {
    if constexpr (device_writes_host)
      Kokkos::parallel_for("ndzip::mpi round mark", Kokkos::RangePolicy<ExecSpace>(m_exec, 0, 1),
                           raise_round_mark{mark_of(r, kind)});
  }
  void wait_for_mark(std::uint64_t r, mark_kind kind) {
    if constexpr (device_writes_host) {
      const volatile std::uint64_t* mark = mark_of(r, kind);
      while (*mark == 0) {
      }
    } else {
      m_exec.fence();
    }
  }

  const T* slab_values(std::size_t p, std::uint64_t r) const {
    return m_pieces[p].values + m_pieces[p].head.slab_offset(r);
  }

  ExecSpace m_exec;
  batch_cache<T, ExecSpace>& m_batches;
  std::vector<outgoing_piece<T>> m_pieces;
  std::uint64_t m_rounds;
  std::vector<std::size_t> m_offsets;       // [r * pieces + p]
  std::vector<std::size_t> m_region_bytes;  // per round
  Kokkos::View<batch_item<T>*, memory_space> m_items;
  typename Kokkos::View<batch_item<T>*, memory_space>::HostMirror m_items_host;
  Kokkos::View<finish_entry<T>*, memory_space> m_entries;
  typename Kokkos::View<finish_entry<T>*, memory_space>::HostMirror m_entries_host;
  Kokkos::View<std::uint64_t*, memory_space> m_stream_bytes;  // [r * pieces + p]
  Kokkos::View<std::uint64_t*, sizes_space> m_sizes;  // payload sizes, then two marks per round
  typename Kokkos::View<std::uint64_t*, sizes_space>::HostMirror m_sizes_host;
};

}  // namespace ndzip::mpi::detail
