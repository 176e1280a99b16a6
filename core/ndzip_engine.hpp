// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The default mode's engine (core/engine.hpp): the original ndzip stream, with the kernels over
// LaneOps (the space's own lane-ops in the library, an emulation of GPU lane groups in tests).
// Its host side is the sequence of kernel launches, size reads and error reports.
//   One grid: single-pass compression (core/block_placement.hpp) where teams progress
//   independently and the stream has room for the worst case; otherwise three kernels (every
//   hypercube into a worst-case scratch block, a scan of the lengths, the blocks into the stream),
//   whose stream size is read back before anything is written where the stream is smaller than
//   the bound. Its scratch is allocated by the first compression that needs it.
//   A batch: single pass on every backend, host ones too (its look-back needs no scratch blocks,
//   and a host team that waits for a predecessor yields its thread), a team per hypercube and
//   border slice of every grid; all of its scratch is allocated when it is made.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/lane_ops.hpp"
#include "core/batch_kernels.hpp"
#include "core/block_placement.hpp"
#include "core/border.hpp"
#include "core/call_guard.hpp"
#include "core/decoder.hpp"
#include "core/encoder.hpp"
#include "core/engine.hpp"
#include "core/region_decoder.hpp"
#include "core/stream_status.hpp"
#include "core/streamed_kernels.hpp"
#include "ndzip/detail/result_space.hpp"

namespace ndzip::core {

template <class T, int Dims, class ExecSpace, class LaneOps = backend::lane_ops_for_t<ExecSpace>>
class ndzip_engine final : public engine<T, Dims, ExecSpace> {
  using base = engine<T, Dims, ExecSpace>;
  using item_type = typename base::item_type;
  using memory_space = typename ExecSpace::memory_space;
  using bits_type = typename profile<T, Dims>::bits_type;
  using kernels = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using result_memory_space = typename ndzip::detail::result_space<ExecSpace>::type;

 public:
  // For one grid: the result Views of the synchronous calls and the decoder's status words.
  ndzip_engine(const ExecSpace& exec, const extent<Dims>& grid)
      : base(exec, {grid}, codec_mode::ndzip, false) {
    const call_guard<ExecSpace> guard(nullptr);
    m_stream_bytes = decltype(m_stream_bytes)(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "ndzip::stream_bytes"));
    m_stream_bytes_host = Kokkos::create_mirror_view(m_stream_bytes);
    m_outcome = decltype(m_outcome)(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "ndzip::outcome"));
    m_outcome_host = Kokkos::create_mirror_view(m_outcome);
    // Zeroed on the instance, ahead of every decompression in its queue.
    m_decode_status =
        decltype(m_decode_status)(Kokkos::view_alloc(exec, "ndzip::decode_status"), 3);
  }

  // For a batch: every grid's descriptor, and the batch's single-pass and decoder scratch.
  // Throws std::invalid_argument if the batch needs more teams than one launch holds.
  ndzip_engine(const ExecSpace& exec, const std::vector<extent<Dims>>& grids)
      : base(exec, grids, codec_mode::ndzip, true) {
    const call_guard<ExecSpace> guard(nullptr);
    std::uint64_t hypercubes = 0;
    m_arrays = decltype(m_arrays)(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "ndzip::batch_arrays"), grids.size());
    auto arrays = Kokkos::create_mirror_view(m_arrays);
    for (std::size_t i = 0; i < grids.size(); ++i) {
      const stream_layout<T, Dims> layout(grids[i]);
      const std::uint64_t slices = layout.hypercube_count + border_slices(layout);
      const std::uint64_t teams = slices > 0 ? slices : 1;
      arrays(i) = batch_array<T, Dims>{layout, m_batch_teams, teams, hypercubes};
      m_batch_teams += teams;
      hypercubes += layout.hypercube_count;
      if (m_batch_teams > static_cast<std::uint64_t>(INT_MAX))
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
    // The host copy of the descriptors must outlive the queued copy.
    exec.fence();
  }

 private:
  using base::m_exec;
  using base::m_grids;

  std::size_t run_compress(const T* values, std::byte* stream,
                           std::size_t stream_capacity) override {
    const call_guard<ExecSpace> guard(nullptr);
    if (stream_capacity >= this->size_bound(0)) {
      enqueue_compress(values, stream, m_stream_bytes.data());
      return read_stream_bytes();
    }
    // A stream smaller than the bound: the size is read back before anything is written, so
    // that a stream that would not fit is refused (three kernels on every backend).
    const stream_layout<T, Dims> layout(m_grids[0]);
    std::size_t size = layout.stream_bytes(0);
    if (layout.hypercube_count > 0) {
      encode_blocks(values);
      size = read_stream_bytes();
    }
    if (size > stream_capacity)
      throw capacity_error("ndzip: the stream needs " + std::to_string(size) +
                           " bytes but the output holds only " + std::to_string(stream_capacity) +
                           " (compressed_size_bound is " + std::to_string(this->size_bound(0)) +
                           ")");
    compact_blocks_into(values, stream, m_stream_bytes.data());
    return size;
  }

  void run_compress_async(const T* values, std::byte* stream, std::size_t,
                          std::uint64_t* stream_bytes) override {
    const call_guard<ExecSpace> guard(nullptr);
    enqueue_compress(values, stream, stream_bytes);
  }

  std::size_t run_decompress(const std::byte* stream, std::size_t stream_size,
                             T* values) override {
    const call_guard<ExecSpace> guard(nullptr);
    enqueue_decompress(stream, stream_size, values, m_outcome.data());
    if (m_outcome_host.data() != m_outcome.data())
      Kokkos::deep_copy(m_exec, m_outcome_host, m_outcome);
    m_exec.fence();
    return this->check_outcome(m_outcome_host(), 0);
  }

  void run_decompress_async(const std::byte* stream, std::size_t stream_size, T* values,
                            decompress_outcome* outcome) override {
    const call_guard<ExecSpace> guard(nullptr);
    enqueue_decompress(stream, stream_size, values, outcome);
  }

  // Only the hypercubes the box touches are decoded, into the region buffer; the box is then
  // copied out of it and the stream's border (core/region_copy.hpp), behind the decoder on the
  // instance, which is fenced once, to read the outcome.
  std::size_t run_decompress_region(const std::byte* stream, std::size_t stream_size,
                                    const region_box<Dims>& box, T* values) override {
    const stream_layout<T, Dims> layout(m_grids[0]);
    const region_cubes<T, Dims> cubes(layout, box);
    const region_teams<T, Dims> teams(layout, cubes);
    bits_type* buffer = this->region_buffer(cubes.total * profile<T, Dims>::hypercube_size);
    if (m_region_outcome.data() == nullptr) {
      const call_guard<ExecSpace> guard(nullptr);
      m_region_outcome = decltype(m_region_outcome)(
          Kokkos::view_alloc(m_exec, Kokkos::WithoutInitializing, "ndzip::region_outcome"));
    }
    {
      const call_guard<ExecSpace> guard(nullptr);
      const std::size_t team_count = cubes.total > 0 ? cubes.total : 1;
      std::uint64_t* status = m_decode_status.data();
      const decode_hypercubes<T, Dims, ExecSpace, LaneOps, region_teams<T, Dims>> decode{
          layout, stream, stream_size, buffer,
          outcome_gatherer{status, status + 1, status + 2, m_region_outcome.data(), team_count},
          teams};
      kernels::template launch<backend::kernel_role::decode>("ndzip::decode_region", m_exec,
                                                             team_count, decode);
    }
    copy_region<T, Dims, ExecSpace> copy{layout,  box,    {}, {}, cubes.buffer_grid(), buffer,
                                         stream, m_region_outcome.data(),
                                         reinterpret_cast<bits_type*>(values)};
    for (int a = 0; a < Dims; ++a) {
      copy.covered[a] = layout.hypercubes_per_axis[a] * profile<T, Dims>::side_length;
      copy.decoded_origin[a] = cubes.first[a] * profile<T, Dims>::side_length;
    }
    this->launch_region_copy(copy);
    {
      const call_guard<ExecSpace> guard(nullptr);
      Kokkos::deep_copy(m_exec, m_outcome_host, m_region_outcome);
      m_exec.fence();
    }
    return this->check_outcome(m_outcome_host(), 0);
  }

  // Tickets are taken in start order across the batch, so within each grid too, and each grid's
  // look-back runs over its own published words.
  void run_compress_batch(item_type* items, std::uint64_t* sizes) override {
    const call_guard<ExecSpace> guard(nullptr);
    // Counted once launched: a launch that throws takes no tickets.
    const std::uint64_t call = m_compressions + 1;
    const block_placement placement{m_published.data(), m_tickets.data(),
                                    (call - 1) * m_batch_teams,
                                    block_placement::epoch_of_call(call),
                                    static_cast<std::uint64_t>(m_exec.concurrency())};
    const encode_batch<T, Dims, ExecSpace, LaneOps> encode{m_arrays.data(), m_grids.size(), items,
                                                           sizes, placement};
    kernels::template launch<backend::kernel_role::encode>("ndzip::encode_batch", m_exec,
                                                           m_batch_teams, encode);
    m_compressions = call;
  }

  void run_decompress_batch(const item_type* items, decompress_outcome* outcomes) override {
    const call_guard<ExecSpace> guard(nullptr);
    const decode_batch<T, Dims, ExecSpace, LaneOps> decode{m_arrays.data(), m_grids.size(), items,
                                                           outcomes, m_decode_status.data()};
    kernels::template launch<backend::kernel_role::decode>("ndzip::decode_batch", m_exec,
                                                           m_batch_teams, decode);
  }

  std::string describe_failure(const decompress_outcome& outcome, std::size_t g) const override {
    using profile_type = profile<T, Dims>;
    return describe_stream_failure(outcome, profile_type::chunks_per_hypercube,
                                   profile_type::max_block_words, to_string(m_grids[g]));
  }

  std::size_t read_stream_bytes() {
    if (m_stream_bytes_host.data() != m_stream_bytes.data())
      Kokkos::deep_copy(m_exec, m_stream_bytes_host, m_stream_bytes);
    m_exec.fence();
    return m_stream_bytes_host();
  }

  // Teams of the block kernels: one per hypercube and per border slice, and one at least, which
  // writes the stream size (or the outcome) when there are no hypercubes.
  static std::size_t block_kernel_teams(const stream_layout<T, Dims>& layout) {
    const std::size_t teams = layout.hypercube_count + border_slices(layout);
    return teams > 0 ? teams : 1;
  }

  // Compression of the grid into a stream with room for the worst case, writing its size to
  // *stream_bytes. Single pass where teams progress independently, otherwise three kernels.
  void enqueue_compress(const T* values, std::byte* stream, std::uint64_t* stream_bytes) {
    const stream_layout<T, Dims> layout(m_grids[0]);
    if constexpr (LaneOps::groups_progress_independently) {
      if (streamed_kernels_suit(backend::kernel_role::encode, layout)) {
        using types = streamed_types<T, Dims, ExecSpace, LaneOps>;
        const std::size_t teams = types::teams(layout);
        const encode_streamed<T, Dims, ExecSpace, LaneOps> encode{
            layout, reinterpret_cast<const bits_type*>(values), stream,
            next_placement(layout, 1), stream_bytes};
        Kokkos::parallel_for("ndzip::encode_streamed",
                             types::template policy<backend::kernel_role::encode>(m_exec, teams),
                             encode);
        count_compression(teams);
        return;
      }
    }
    if constexpr (LaneOps::teams_progress_independently) {
      const auto teams_at_once = static_cast<std::uint64_t>(m_exec.concurrency());
      const std::size_t run =
          hypercubes_per_team<LaneOps, Dims>(layout.hypercube_count, teams_at_once);
      const std::size_t runs = (layout.hypercube_count + run - 1) / run;
      const std::size_t teams = std::max<std::size_t>(runs + border_slices(layout), 1);
      const encode_into_stream<T, Dims, ExecSpace, LaneOps> encode{
          layout,       reinterpret_cast<const bits_type*>(values),
          stream,       next_placement(layout, teams_at_once),
          stream_bytes, run};
      kernels::template launch<backend::kernel_role::encode>("ndzip::encode_into_stream", m_exec,
                                                             teams, encode);
      count_compression(teams);
    } else {
      if (layout.hypercube_count > 0) encode_blocks(values, stream_bytes);
      compact_blocks_into(values, stream, stream_bytes);
    }
  }

  // Whether the streamed kernels (core/streamed_kernels.hpp) take this grid's `role`.
  bool streamed_kernels_suit(backend::kernel_role role,
                             const stream_layout<T, Dims>& layout) const {
    const auto groups_at_once =
        static_cast<std::uint64_t>(m_exec.concurrency()) / LaneOps::vector_length;
    return streamed_kernels_win<T, Dims>(role, layout.hypercube_count, groups_at_once);
  }

  // The look-back of one grid's next single-pass compression (core/block_placement.hpp): a
  // published word per hypercube, allocated by the first, and the ticket counter, whose
  // tickets of this call follow every earlier call's.
  block_placement next_placement(const stream_layout<T, Dims>& layout,
                                 std::uint64_t teams_at_once) {
    if (m_tickets.data() == nullptr) {
      // Zeroed on the engine's instance, ahead of the kernel in its queue.
      m_published = decltype(m_published)(Kokkos::view_alloc(m_exec, "ndzip::published"),
                                           layout.hypercube_count);
      m_tickets = decltype(m_tickets)(Kokkos::view_alloc(m_exec, "ndzip::tickets"));
    }
    return {m_published.data(), m_tickets.data(), m_tickets_taken,
            block_placement::epoch_of_call(m_compressions + 1), teams_at_once};
  }

  // Counted once launched: a launch that throws takes no tickets.
  void count_compression(std::uint64_t teams) {
    m_tickets_taken += teams;
    ++m_compressions;
  }

  // K1 and K2 (core/encoder.hpp): every hypercube into its worst-case scratch block, the block
  // lengths into offset-table entries, the stream size into *stream_bytes.
  void encode_blocks(const T* values, std::uint64_t* stream_bytes = nullptr) {
    const stream_layout<T, Dims> layout(m_grids[0]);
    const std::size_t n = layout.hypercube_count;
    if (m_blocks.extent(0) == 0) {
      m_blocks = decltype(m_blocks)(
          Kokkos::view_alloc(m_exec, Kokkos::WithoutInitializing, "ndzip::blocks"),
          n * profile<T, Dims>::max_block_words);
      m_block_ends = decltype(m_block_ends)(
          Kokkos::view_alloc(m_exec, Kokkos::WithoutInitializing, "ndzip::block_ends"), n);
    }
    const encode_hypercubes<T, Dims, ExecSpace, LaneOps> encode{
        layout, reinterpret_cast<const bits_type*>(values), m_blocks.data(), m_block_ends.data()};
    Kokkos::parallel_for("ndzip::encode_hypercubes", kernels::hypercube_policy(m_exec, n), encode);
    scan_block_lengths(m_exec, layout, m_block_ends.data(),
                       stream_bytes ? stream_bytes : m_stream_bytes.data());
  }

  // K3: the scratch blocks and the border into the stream.
  void compact_blocks_into(const T* values, std::byte* stream, std::uint64_t* stream_bytes) {
    const stream_layout<T, Dims> layout(m_grids[0]);
    const compact_blocks<T, Dims, ExecSpace, LaneOps> compact{
        layout,
        reinterpret_cast<const bits_type*>(values),
        m_blocks.data(),
        m_block_ends.data(),
        stream,
        stream_bytes};
    Kokkos::parallel_for("ndzip::compact_blocks",
                         kernels::hypercube_policy(m_exec, block_kernel_teams(layout)), compact);
  }

  void enqueue_decompress(const std::byte* stream, std::size_t stream_size, T* values,
                          decompress_outcome* outcome) {
    const stream_layout<T, Dims> layout(m_grids[0]);
    if constexpr (LaneOps::groups_progress_independently) {
      if (streamed_kernels_suit(backend::kernel_role::decode, layout)) {
        using types = streamed_types<T, Dims, ExecSpace, LaneOps>;
        const std::size_t teams = types::teams(layout);
        std::uint64_t* status = m_decode_status.data();
        const decode_streamed<T, Dims, ExecSpace, LaneOps> decode{
            layout, stream, stream_size, reinterpret_cast<bits_type*>(values),
            outcome_gatherer{status, status + 1, status + 2, outcome, teams}};
        Kokkos::parallel_for("ndzip::decode_streamed",
                             types::template policy<backend::kernel_role::decode>(m_exec, teams),
                             decode);
        return;
      }
    }
    const std::size_t teams = block_kernel_teams(layout);
    std::uint64_t* status = m_decode_status.data();
    const outcome_gatherer gatherer{status, status + 1, status + 2, outcome, teams};
    const decode_hypercubes<T, Dims, ExecSpace, LaneOps> decode{
        layout, stream, stream_size, reinterpret_cast<bits_type*>(values), gatherer};
    kernels::template launch<backend::kernel_role::decode>("ndzip::decode_hypercubes", m_exec,
                                                           teams, decode);
  }

  // Single-pass compression: a published word per hypercube (of the grid, or of the batch), the
  // ticket counter, and the number of compressions so far. A grid's are allocated by its first
  // compression that takes the single pass.
  Kokkos::View<std::uint64_t*, memory_space> m_published;
  Kokkos::View<std::uint64_t[1], memory_space> m_tickets;
  std::uint64_t m_compressions = 0;
  std::uint64_t m_tickets_taken = 0;  // by one grid's single-pass compressions so far
  // Decompression: three words per grid (core/stream_status.hpp), zero between calls.
  Kokkos::View<std::uint64_t*, memory_space> m_decode_status;
  // One grid's three-kernel compression, allocated by the first that needs it: every
  // hypercube's block at a fixed worst-case stride (about 1.03x the array's size), and the
  // block lengths (in words) that become the offset table after an inclusive scan.
  Kokkos::View<bits_type*, memory_space> m_blocks;
  Kokkos::View<std::uint64_t*, memory_space> m_block_ends;
  // Where one grid's synchronous calls have their results written, and host copies to read them
  // (the same View where it is host-accessible).
  Kokkos::View<std::uint64_t, result_memory_space> m_stream_bytes;
  typename Kokkos::View<std::uint64_t, result_memory_space>::HostMirror m_stream_bytes_host;
  Kokkos::View<decompress_outcome, result_memory_space> m_outcome;
  typename Kokkos::View<decompress_outcome, result_memory_space>::HostMirror m_outcome_host;
  // A region's decoding writes its outcome where the copy behind it reads it: in the space's
  // own memory (core/region_copy.hpp), allocated by the first region.
  Kokkos::View<decompress_outcome, memory_space> m_region_outcome;
  // A batch: every grid's layout, first team and first hypercube, and the teams of all.
  Kokkos::View<batch_array<T, Dims>*, memory_space> m_arrays;
  std::uint64_t m_batch_teams = 0;
};

}  // namespace ndzip::core
