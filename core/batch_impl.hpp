// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Definitions of ndzip::batch_compressor's members and its kernels: the single-grid team bodies
// (encode_team, decode_team) run for every grid of the batch in one launch, each team finding
// its grid from its team number.

#include <Kokkos_Core.hpp>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "backends/host_inline.hpp"
#include "backends/lane_ops.hpp"
#include "core/batch_checks.hpp"
#include "core/block_placement.hpp"
#include "core/call_guard.hpp"
#include "core/decoder.hpp"
#include "core/encoder.hpp"
#include "core/high_ratio/engine.hpp"
#include "core/stream_status.hpp"
#include "ndzip/batch_compressor.hpp"

namespace ndzip {

namespace core {

// The grid that batch team `team` works for: the last whose first team is not after it (every
// grid has a team at least, so first teams increase strictly).
template <class T, int Dims>
KOKKOS_INLINE_FUNCTION std::size_t array_of_team(const batch_array<T, Dims>* arrays,
                                                 std::size_t count, std::uint64_t team) {
  std::size_t low = 0, high = count;
  while (high - low > 1) {
    const std::size_t middle = low + (high - low) / 2;
    if (arrays[middle].first_team <= team)
      low = middle;
    else
      high = middle;
  }
  return low;
}

// Single-pass compression of every grid: tickets are taken in start order across the batch, so
// within each grid too, and each grid's look-back runs over its own published words.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct encode_batch {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  using member_type = typename base::member_type;

  const batch_array<T, Dims>* arrays;
  std::size_t count;
  batch_item<T>* items;
  std::uint64_t* sizes;       // a copy of every stream size, or null
  block_placement placement;  // over the whole batch's published words

  // Grid `a`'s look-back, made when the team needs it: a block_placement held through the whole
  // encoding spilled registers (H200: 56 bytes of stack in the 3-D float batch encoder).
  struct grid_look_back {
    const encode_batch& kernel;
    std::size_t a;
    KOKKOS_INLINE_FUNCTION block_placement of_grid() const {
      const block_placement& all = kernel.placement;
      return {all.published + kernel.arrays[a].first_hypercube, all.tickets, all.ticket_base,
              all.epoch, all.teams_at_once};
    }
    KOKKOS_INLINE_FUNCTION std::uint64_t exclusive_prefix(std::uint64_t index,
                                                          std::uint64_t length) const {
      return of_grid().exclusive_prefix(index, length);
    }
    KOKKOS_INLINE_FUNCTION std::uint64_t inclusive_prefix_of(std::uint64_t index) const {
      return of_grid().inclusive_prefix_of(index);
    }
    KOKKOS_INLINE_FUNCTION std::uint64_t ticket_distance() const {
      return kernel.placement.ticket_distance();
    }
  };

  // Grid `a`'s stream size goes into its item, and into the sizes View if there is one.
  struct grid_size_sink {
    const encode_batch& kernel;
    std::size_t a;
    friend KOKKOS_INLINE_FUNCTION void store_stream_size(const grid_size_sink& to,
                                                         std::uint64_t size) {
      to.kernel.items[to.a].stream_bytes = size;
      if (to.kernel.sizes != nullptr) to.kernel.sizes[to.a] = size;
    }
  };

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    std::uint64_t ticket = 0;
    Kokkos::single(
        Kokkos::PerTeam(member),
        [&](std::uint64_t& taken) NDZIP_INLINE_LAMBDA { taken = placement.take_ticket(); }, ticket);
    const std::size_t a = array_of_team(arrays, count, ticket);
    // By reference: the grid's layout is read where it is used (as a single grid's kernel reads
    // its own from the kernel parameters), not held in registers for the whole team.
    const batch_array<T, Dims>& array = arrays[a];
    encode_team<T, Dims, ExecSpace, LaneOps>(
        member, array.layout, reinterpret_cast<const bits_type*>(items[a].values), items[a].stream,
        grid_look_back{*this, a}, grid_size_sink{*this, a}, ticket - array.first_team);
  }
};

// Decompression of every grid, each gathering its own outcome.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct decode_batch {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  using member_type = typename base::member_type;

  const batch_array<T, Dims>* arrays;
  std::size_t count;
  const batch_item<T>* items;
  decompress_outcome* outcomes;
  std::uint64_t* status;  // three words per grid

  // Grid `a`'s outcome gatherer, made when the team is done: one held through the whole decoding
  // spilled registers (H200: 104 bytes of stack in the 3-D float batch decoder).
  struct grid_gatherer {
    const decode_batch& kernel;
    std::size_t a;
    KOKKOS_INLINE_FUNCTION void finish_team(std::size_t index, std::uint64_t key,
                                            std::uint64_t checked_bytes,
                                            std::uint64_t given_bytes) const {
      std::uint64_t* words = kernel.status + 3 * a;
      const outcome_gatherer gatherer{words, words + 1, words + 2, kernel.outcomes + a,
                                      kernel.arrays[a].teams};
      gatherer.finish_team(index, key, checked_bytes, given_bytes);
    }
  };

  // Grid `a` as decode_team reads it: from its descriptor and item, where it is used (held
  // through the decoding, they spilled registers: H200, 48-64 bytes of stack in the float
  // batch decoders).
  struct grid_reader {
    const decode_batch& kernel;
    std::size_t a;
    KOKKOS_INLINE_FUNCTION const stream_layout<T, Dims>& layout() const {
      return kernel.arrays[a].layout;
    }
    KOKKOS_INLINE_FUNCTION const std::byte* stream() const { return kernel.items[a].stream; }
    KOKKOS_INLINE_FUNCTION std::size_t stream_size() const { return kernel.items[a].stream_bytes; }
    KOKKOS_INLINE_FUNCTION bits_type* values() const {
      return reinterpret_cast<bits_type*>(kernel.items[a].values);
    }
  };

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const std::uint64_t team = member.league_rank();
    const std::size_t a = array_of_team(arrays, count, team);
    const grid_gatherer gatherer{*this, a};
    const std::size_t index = team - arrays[a].first_team;
    // The table is read only from a stream that can hold it (a single compressor checks this
    // on the host).
    const std::uint64_t smallest = arrays[a].layout.smallest_stream_bytes();
    const std::uint64_t given = items[a].stream_bytes;
    if (given < smallest) {
      Kokkos::single(Kokkos::PerTeam(member), [&]() NDZIP_INLINE_LAMBDA {
        gatherer.finish_team(
            index,
            index == 0 ? failure_key(0, stream_failure::shorter_than_smallest) : no_stream_failure,
            smallest, given);
      });
      return;
    }
    decode_team<T, Dims, ExecSpace, LaneOps>(member, grid_reader{*this, a}, index, gatherer);
  }
};

// The host side of batch_compressor's calls. Compression takes the single pass on every backend,
// host ones too (where a single compressor prefers three kernels): its look-back needs no
// scratch blocks, and a host team that waits for a predecessor yields its thread.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct batch_codec {
  using batch_type = batch_compressor<T, Dims, ExecSpace>;
  using kernels = kernel_types<T, Dims, ExecSpace, LaneOps>;

  static void compress(batch_type& self, batch_item<T>* items, std::uint64_t* sizes) {
    const call_guard<ExecSpace> guard(self.m_mutex.get());
    if (self.size() == 0) return;
    if constexpr (batch_type::checks_items_on_host)
      check_items_on_host(batch_call::compression, codec_mode::ndzip, self.m_grids, items, sizes,
                          self.size() * sizeof(std::uint64_t), self.m_ranges);
    // Counted once launched: a launch that throws takes no tickets.
    const std::uint64_t call = self.m_calls + 1;
    const block_placement placement{self.m_published.data(), self.m_tickets.data(),
                                    (call - 1) * self.m_teams, block_placement::epoch_of_call(call),
                                    static_cast<std::uint64_t>(self.m_exec.concurrency())};
    const encode_batch<T, Dims, ExecSpace, LaneOps> encode{self.m_arrays.data(), self.size(), items,
                                                           sizes, placement};
    kernels::template launch<backend::kernel_role::encode>("ndzip::encode_batch", self.m_exec,
                                                           self.m_teams, encode);
    self.m_calls = call;
  }

  static void decompress(batch_type& self, const batch_item<T>* items,
                         decompress_outcome* outcomes) {
    const call_guard<ExecSpace> guard(self.m_mutex.get());
    if (self.size() == 0) return;
    if constexpr (batch_type::checks_items_on_host)
      check_items_on_host(batch_call::decompression, codec_mode::ndzip, self.m_grids, items,
                          outcomes, self.size() * sizeof(decompress_outcome), self.m_ranges);
    const decode_batch<T, Dims, ExecSpace, LaneOps> decode{self.m_arrays.data(), self.size(), items,
                                                           outcomes, self.m_decode_status.data()};
    kernels::template launch<backend::kernel_role::decode>("ndzip::decode_batch", self.m_exec,
                                                           self.m_teams, decode);
  }
};

}  // namespace core

template <class T, int Dims, class ExecSpace>
batch_compressor<T, Dims, ExecSpace>::batch_compressor(const ExecSpace& exec,
                                                       const std::vector<extent<Dims>>& grids,
                                                       codec_mode mode)
    : m_exec(exec), m_grids(grids) {
  if (mode == codec_mode::high_ratio) {
    for (const extent<Dims>& grid : grids) check_grid_representable<T>(grid);
    // Without the library's lock, which its compressors take themselves.
    m_high_ratio = std::make_unique<core::high_ratio::engine<T, Dims, ExecSpace>>(exec, grids);
    if constexpr (checks_items_on_host) m_ranges.reserve(2 * grids.size() + 2);
    return;
  }
  if (mode != codec_mode::ndzip)
    throw std::invalid_argument("ndzip: unknown codec mode " +
                                std::to_string(static_cast<unsigned>(mode)));
  const core::call_guard<ExecSpace> guard(nullptr);
  std::uint64_t hypercubes = 0;
  m_arrays = decltype(m_arrays)(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::batch_arrays"), grids.size());
  auto arrays = Kokkos::create_mirror_view(m_arrays);
  for (std::size_t i = 0; i < grids.size(); ++i) {
    check_grid_representable<T>(grids[i]);
    const stream_layout<T, Dims> layout(grids[i]);
    const std::uint64_t slices = layout.hypercube_count + border_slices(layout);
    const std::uint64_t teams = slices > 0 ? slices : 1;
    arrays(i) = core::batch_array<T, Dims>{layout, m_teams, teams, hypercubes};
    m_teams += teams;
    hypercubes += layout.hypercube_count;
    if (m_teams > static_cast<std::uint64_t>(INT_MAX))
      throw std::invalid_argument(
          "ndzip: a batch of these grids needs more than INT_MAX teams "
          "(grids 0.." +
          std::to_string(i) + "); split it");
  }
  Kokkos::deep_copy(exec, m_arrays, arrays);
  // Zeroed on the instance, ahead of every call in its queue.
  m_published =
      decltype(m_published)(Kokkos::view_alloc(exec, "ndzip::batch_published"), hypercubes);
  m_tickets = decltype(m_tickets)(Kokkos::view_alloc(exec, "ndzip::batch_tickets"));
  m_decode_status = decltype(m_decode_status)(
      Kokkos::view_alloc(exec, "ndzip::batch_decode_status"), 3 * grids.size());
  // A values and a stream range per grid, the items and the sizes or outcomes.
  if constexpr (checks_items_on_host) m_ranges.reserve(2 * grids.size() + 2);
  // The host copy of the descriptors must outlive the queued copy.
  exec.fence();
}

template <class T, int Dims, class ExecSpace>
batch_compressor<T, Dims, ExecSpace>::~batch_compressor() = default;
template <class T, int Dims, class ExecSpace>
batch_compressor<T, Dims, ExecSpace>::batch_compressor(batch_compressor&&) noexcept = default;
template <class T, int Dims, class ExecSpace>
batch_compressor<T, Dims, ExecSpace>& batch_compressor<T, Dims, ExecSpace>::operator=(
    batch_compressor&&) noexcept = default;

template <class T, int Dims, class ExecSpace>
void batch_compressor<T, Dims, ExecSpace>::check_count(std::size_t count, const char* what) const {
  if (count != size())
    throw std::invalid_argument("ndzip: the batch has " + std::to_string(size()) +
                                " grids but the " + what + " View holds " + std::to_string(count));
}

template <class T, int Dims, class ExecSpace>
void batch_compressor<T, Dims, ExecSpace>::check_contiguous(bool contiguous,
                                                            const char* what) const {
  if (!contiguous)
    throw std::invalid_argument(std::string("ndzip: the batch's ") + what +
                                " View must be contiguous");
}

template <class T, int Dims, class ExecSpace>
std::size_t batch_compressor<T, Dims, ExecSpace>::check_outcome(
    std::size_t i, const decompress_outcome& outcome) const {
  using profile_type = profile<T, Dims>;
  if (outcome.failure != decompress_outcome::no_failure) {
    const std::string message =
        m_high_ratio
            ? m_high_ratio->describe(outcome, i)
            : core::describe_stream_failure(outcome, profile_type::chunks_per_hypercube,
                                            profile_type::max_block_words, to_string(grid(i)));
    // "ndzip: invalid stream: ..." -> "ndzip: array i: invalid stream: ..."
    throw stream_error("ndzip: array " + std::to_string(i) + ": " + message.substr(7));
  }
  return outcome.stream_bytes;
}

template <class T, int Dims, class ExecSpace>
void batch_compressor<T, Dims, ExecSpace>::compress_raw_async(item_type* items,
                                                              std::uint64_t* sizes) {
  if (m_high_ratio) {
    // The high-ratio mode: checked as the default mode's items, then handed to its engine.
    const std::lock_guard<std::mutex> lock(*m_mutex);
    if (size() == 0) return;
    if constexpr (checks_items_on_host)
      core::check_items_on_host(core::batch_call::compression, codec_mode::high_ratio, m_grids,
                                items, sizes, size() * sizeof(std::uint64_t), m_ranges);
    m_high_ratio->compress_batch(items, sizes);
    return;
  }
  core::batch_codec<T, Dims, ExecSpace, backend::lane_ops_for_t<ExecSpace>>::compress(*this, items,
                                                                                      sizes);
}

template <class T, int Dims, class ExecSpace>
void batch_compressor<T, Dims, ExecSpace>::decompress_raw_async(const item_type* items,
                                                                decompress_outcome* outcomes) {
  if (m_high_ratio) {
    const std::lock_guard<std::mutex> lock(*m_mutex);
    if (size() == 0) return;
    if constexpr (checks_items_on_host)
      core::check_items_on_host(core::batch_call::decompression, codec_mode::high_ratio, m_grids,
                                items, outcomes, size() * sizeof(decompress_outcome), m_ranges);
    m_high_ratio->decompress_batch(items, outcomes);
    return;
  }
  core::batch_codec<T, Dims, ExecSpace, backend::lane_ops_for_t<ExecSpace>>::decompress(
      *this, items, outcomes);
}

}  // namespace ndzip
