// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Neighbor exchange over the MPI link: the implementation of ndzip::mpi::neighbor_exchange
// (ndzip/mpi/neighbor_exchange.hpp). Not part of the API.

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ndzip/batch_compressor.hpp"
#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/segment_slots.hpp"
#include "ndzip/mpi/detail/core/send_choice.hpp"
#include "ndzip/mpi/detail/core/slab_grid.hpp"
#include "ndzip/mpi/detail/core/view_support.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"
#include "ndzip/mpi/detail/mpi/progress.hpp"
#include "ndzip/mpi/detail/mpi/runtime.hpp"
#include "ndzip/mpi/detail/mpi/transport.hpp"
#include "ndzip/mpi/options.hpp"
#include "ndzip/mpi/piece.hpp"
#include "ndzip/mpi/point_to_point.hpp"
#include "ndzip/mpi/request.hpp"

namespace ndzip::mpi::detail {

// The neighbor_exchange of ndzip/mpi/neighbor_exchange.hpp over MPI (that header says what it
// does): one message of one segment per piece, every piece packed and those that shrink
// compressed in one batch_compressor launch per grid rank, then posted together; the receives
// are a communicator's irecv().
template <class ExecSpace, class View>
class neighbor_exchange_mpi {
 public:
  using value_type = std::remove_const_t<typename View::value_type>;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr int dims = static_cast<int>(View::rank);

  neighbor_exchange_mpi(const ExecSpace& exec, MPI_Comm comm, std::vector<piece<View>> sends,
                    std::vector<piece<View>> receives, const options& opts = {})
      : m_exec(exec),
        m_comm(comm),
        m_opts(opts),
        m_channel(exec, comm, opts),
        m_sends(std::move(sends)),
        m_receives(std::move(receives)) {
    check_view_type<View, ExecSpace>();
    static_assert(!std::is_const_v<typename View::value_type>,
                  "ndzip::mpi::neighbor_exchange receives into its pieces: use non-const Views");
    // Sizes first, checked before anything is allocated: each piece is one message.
    std::vector<slab_shape> shapes;
    std::vector<std::size_t> bounds;  // 0: the piece travels raw
    std::size_t packed = 0;
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const auto& values = m_sends[i].values;
      shapes.push_back(squeeze(dims, extents_of(values)));
      bounds.push_back(holds_hypercube<value_type>(shapes.back())
                           ? stream_bound<value_type>(shapes.back())
                           : 0);
      const std::uint64_t bytes =
          one_segment_message_bytes(values.size() * sizeof(value_type), bounds.back());
      if (bytes > largest_message)
        throw std::invalid_argument(
            "ndzip::mpi::neighbor_exchange: send piece " + std::to_string(i) + " may take " +
            std::to_string(bytes) + " bytes, more than one message carries (" +
            std::to_string(largest_message) + "); send it with ndzip::mpi::isend");
      m_packed_offsets.push_back(packed);
      packed += values.size();
    }
    m_packed = Kokkos::View<value_type*, memory_space>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi exchange values"), packed);
    // Each message is assembled where it stays between exchanges, its transfer head written
    // once (a piece's extents do not change).
    const auto heads = m_transport->memory().staging_buffer(m_sends.size() * payload_offset);
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      m_messages.push_back(m_transport->assembly(one_segment_message_bytes(
          m_sends[i].values.size() * sizeof(value_type), bounds[i])));
      write_transfer_head(head_of(i), heads.data() + i * payload_offset);
      m_transport->copy_from_host(m_messages[i].data(), heads.data() + i * payload_offset,
                               transfer_head_bytes);
    }
    for_each_batch([&](auto& batch) { make_batch(batch, shapes, bounds); });
    m_exec.fence();
  }

  std::size_t send_count() const { return m_sends.size(); }
  std::size_t receive_count() const { return m_receives.size(); }

  // Sends every send piece and receives every receive piece; returns once all are complete.
  // Throws as ndzip::mpi::recv does (ndzip::mpi::mismatch_error, ndzip::stream_error), the
  // first error of any piece, once every message of the exchange is complete.
  exchange_stats exchange() {
    require_mpi_ready("neighbor_exchange::exchange");
    const auto started = std::chrono::steady_clock::now();
    const std::uint64_t send_bytes = m_packed.size() * sizeof(value_type);
    const send_mode mode = choose(send_bytes);
    exchange_stats stats;
    stats.sent.plain = mode == send_mode::plain;
    std::vector<request> receives;
    for (const auto& p : m_receives) receives.push_back(m_channel.irecv(p.values, p.peer, p.tag));
    std::vector<MPI_Request> sends(m_sends.size(), MPI_REQUEST_NULL);
    std::exception_ptr failure;
    try {
      const auto compressing = std::chrono::steady_clock::now();
      segment_slots<ExecSpace> slots(m_transport->memory(), m_sends.size());
      try {
        compress_sends(slots, mode == send_mode::compressed);
        post_sends(slots, sends, stats.sent);
      } catch (...) {
        m_exec.fence();  // no queued work may still use the slots
        throw;
      }
      stats.sent.codec_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - compressing).count();
    } catch (...) {
      failure = std::current_exception();
    }
    for (auto& r : receives) {
      try {
        r.wait();
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
      accumulate(stats.received, r.stats());
    }
    const int rc = MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
    m_staged.clear();
    if (failure) std::rethrow_exception(failure);
    check(rc, "MPI_Waitall");
    if (adaptive())
      m_history->record(-1, -1, send_bytes, mode,
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
                           .count());
    return stats;
  }

 private:
  // The send pieces whose grids (of rank Rank) hold a hypercube, compressed in one launch.
  template <int Rank>
  struct batch {
    std::vector<std::size_t> pieces;  // indices of m_sends
    std::optional<batch_compressor<value_type, Rank, ExecSpace>> codec;
    Kokkos::View<batch_item<value_type>*, memory_space> items;
    Kokkos::View<std::uint64_t*, memory_space> sizes;
  };

  template <class F>
  void for_each_batch(F&& f) {
    std::apply([&](auto&... batches) { (f(batches), ...); }, m_batches);
  }

  template <int Rank>
  void make_batch(batch<Rank>& b, const std::vector<slab_shape>& shapes,
                  const std::vector<std::size_t>& bounds) {
    std::vector<extent<Rank>> grids;
    for (std::size_t i = 0; i < shapes.size(); ++i)
      if (bounds[i] > 0 && shapes[i].dims == Rank) {
        b.pieces.push_back(i);
        grids.push_back(grid_of<Rank>(shapes[i]));
      }
    if (b.pieces.empty()) return;
    b.codec.emplace(m_exec, grids);
    b.items = Kokkos::View<batch_item<value_type>*, memory_space>("ndzip::mpi exchange items",
                                                                  b.pieces.size());
    b.sizes =
        Kokkos::View<std::uint64_t*, memory_space>("ndzip::mpi exchange sizes", b.pieces.size());
    auto items = Kokkos::create_mirror_view(b.items);
    for (std::size_t j = 0; j < b.pieces.size(); ++j) {
      const std::size_t i = b.pieces[j];
      items(j) = {m_packed.data() + m_packed_offsets[i], m_messages[i].data() + payload_offset, 0};
    }
    Kokkos::deep_copy(b.items, items);
  }

  // The transfer head of send piece i: one segment of all its rows.
  transfer_head head_of(std::size_t i) const {
    transfer_head head;
    head.type = element_code_of<value_type>();
    head.dims = dims;
    head.checksummed = m_opts.checksum;
    head.extents = extents_of(m_sends[i].values);
    head.segment_rows = std::max<std::uint64_t>(head.extents[0], 1);
    return head;
  }

  bool adaptive() const {
    return m_opts.compression == compression_choice::adaptive && !m_opts.checksum;
  }

  // How this exchange's pieces go (options::compression): with the checksum on, always
  // compressed (raw pieces would carry no checksums).
  send_mode choose(std::uint64_t send_bytes) {
    if (m_opts.checksum) return send_mode::compressed;
    return choose_send_mode(m_opts, [&] { return m_history->choose(-1, -1, send_bytes, false); });
  }

  // Packs every send piece in C order, compresses those that can shrink (one launch per
  // batch, into their messages; none unless `compress`) and finishes every message
  // (core/segment_slots.hpp), all queued.
  void compress_sends(segment_slots<ExecSpace>& slots, bool compress) {
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const View& v = m_sends[i].values;
      Kokkos::deep_copy(m_exec, c_order_over(m_packed.data() + m_packed_offsets[i], v), v);
    }
    std::vector<const std::uint64_t*> stream_sizes(m_sends.size(), nullptr);
    for_each_batch([&](auto& b) {
      if (b.pieces.empty() || !compress) return;
      b.codec->compress_async(b.items, b.sizes);
      for (std::size_t j = 0; j < b.pieces.size(); ++j)
        stream_sizes[b.pieces[j]] = b.sizes.data() + j;
    });
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      if (m_sends[i].values.size() == 0) continue;
      const std::uint64_t raw = m_sends[i].values.size() * sizeof(value_type);
      if (!stream_sizes[i]) slots.set_stream_bytes(i, raw);
      slots.template finish<value_type>(i, 0, m_packed.data() + m_packed_offsets[i], raw,
                                        m_messages[i].data() + transfer_head_bytes,
                                        stream_sizes[i]);
    }
  }

  // Waits for each message (calling MPI for those already posted), stages the messages where
  // the transport does, with one wait for all, and posts them.
  void post_sends(segment_slots<ExecSpace>& slots, std::vector<MPI_Request>& sends,
                  transfer_stats& stats) {
    std::lock_guard<std::mutex> lock(matching_mutex());
    std::vector<MPI_Request> posted;  // none yet: the exchange posts its sends together
    std::vector<segment_head> segments(m_sends.size());
    std::vector<std::byte*> out(m_sends.size());
    std::vector<buffer> staged(m_sends.size());
    const auto fence = [this] { m_exec.fence(); };
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const std::uint64_t raw = m_sends[i].values.size() * sizeof(value_type);
      stats.raw_bytes += raw;
      std::size_t bytes = transfer_head_bytes;
      if (raw > 0) {
        const std::uint64_t payload = wait_progressing(slots, i, posted);
        // A stream is always smaller than its values.
        segments[i] = {payload == raw ? segment_kind::raw : segment_kind::stream, 0,
                       payload};
        bytes = payload_offset + payload;
        ++stats.segments;
        if (payload == raw) ++stats.raw_segments;
        if (m_opts.checksum && !m_transport->host_reads_messages())
          write_checksum_on_device(
              *m_transport, m_messages[i].data() + transfer_head_bytes, segments[i], fence);
      }
      stats.wire_bytes += bytes;
      out[i] = m_transport->outgoing(m_messages[i], bytes, staged[i], [] {});
    }
    fence();  // one wait for every message's staging
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const bool empty = m_sends[i].values.size() == 0;
      if (m_opts.checksum && m_transport->host_reads_messages() && !empty)
        write_segment_head(segments[i], true, out[i] + transfer_head_bytes);
      const std::size_t bytes =
          empty ? transfer_head_bytes : payload_offset + segments[i].payload_bytes;
      check(MPI_Isend(out[i], static_cast<int>(bytes), MPI_BYTE, m_sends[i].peer,
                              m_sends[i].tag, m_comm, &sends[i]),
                    "MPI_Isend");
    }
    m_staged = std::move(staged);
  }

  static constexpr std::size_t payload_offset =
      transfer_head_bytes + segment_head_bytes;

  ExecSpace m_exec;
  MPI_Comm m_comm;
  options m_opts;
  communicator<ExecSpace> m_channel;  // the receives, with their memory kept between exchanges
  // The sends' transport (options::transport) and the memory their messages are assembled in.
  std::unique_ptr<transport<ExecSpace>> m_transport = make_transport(
      std::make_shared<buffer_pool<ExecSpace>>(m_exec), m_channel.transport(true));
  std::vector<piece<View>> m_sends, m_receives;
  std::vector<std::size_t> m_packed_offsets;
  Kokkos::View<value_type*, memory_space> m_packed;
  std::tuple<batch<1>, batch<2>, batch<3>> m_batches;
  std::vector<buffer> m_messages;  // assembled, one per send piece
  std::vector<buffer> m_staged;    // where the transport staged them, until they are sent
  // Whole exchanges timed (options::compression).
  std::shared_ptr<send_history> m_history = std::make_shared<send_history>();
};

}  // namespace ndzip::mpi::detail
