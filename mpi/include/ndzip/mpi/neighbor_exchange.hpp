// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::neighbor_exchange: a fixed set of (View, peer, tag) sends and receives, completed
// together, its sends compressed in batch_compressor launches (ndzip/mpi.hpp).

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ndzip/batch_compressor.hpp"
#include "ndzip/mpi/point_to_point.hpp"
#include "ndzip/mpi/request.hpp"
#include "ndzip/mpi/slab_codec.hpp"
#include "ndzip/mpi/transfer.hpp"
#include "ndzip/mpi/view_support.hpp"
#include "ndzip/mpi/wire_format.hpp"

namespace ndzip::mpi {

// One piece of an exchange: the View sent or received (a face, edge or corner of a block, say;
// any layout), the rank it goes to or comes from, and the tag.
template <class View>
struct piece {
  View values;
  int peer;
  int tag;
};

// What one exchange sent and received.
struct exchange_stats {
  transfer_stats sent;
  transfer_stats received;
};

// Made once for the pieces of a halo (up to 26 neighbours of a 3-D block: faces, edges and
// corners, as rank-3 subviews of one type), like a persistent MPI request; exchange() then
// moves the current values of every piece. It owns the scratch (packed values, streams, host
// staging, the batches' scratch), so that an exchange allocates nothing on the device.
//
// Each send piece travels as an ndzip::mpi message of one segment (docs/FORMAT.md), so a piece
// can also be received by ndzip::mpi::recv, and a receive piece can take what
// ndzip::mpi::send sent. A piece is compressed as the grid of its extents other than 1 (a face
// one cell thick as a 2-D grid); the pieces whose grids hold a whole ndzip hypercube are
// compressed in one batch_compressor launch per rank of those grids, the others (edges and
// corners of a thin halo, too small to shrink) travel raw. Pieces without elements are allowed.
template <class ExecSpace, class View>
class neighbor_exchange {
 public:
  using value_type = std::remove_const_t<typename View::value_type>;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr int dims = static_cast<int>(View::rank);

  neighbor_exchange(const ExecSpace& exec, MPI_Comm comm, std::vector<piece<View>> sends,
                    std::vector<piece<View>> receives, const options& opts = {})
      : m_exec(exec),
        m_comm(comm),
        m_opts(opts),
        m_channel(exec, comm, opts),
        m_sends(std::move(sends)),
        m_receives(std::move(receives)) {
    detail::check_view_type<View, ExecSpace>();
    static_assert(!std::is_const_v<typename View::value_type>,
                  "ndzip::mpi::neighbor_exchange receives into its pieces: use non-const Views");
    // Sizes first, checked before anything is allocated: each piece is one message.
    std::vector<detail::slab_shape> shapes;
    std::vector<std::size_t> bounds;  // 0: the piece travels raw
    std::size_t packed = 0, streams = 0;
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const auto& values = m_sends[i].values;
      shapes.push_back(detail::squeeze(dims, detail::extents_of(values)));
      bounds.push_back(detail::holds_hypercube<value_type>(shapes.back())
                           ? detail::stream_bound<value_type>(shapes.back())
                           : 0);
      const std::uint64_t bytes =
          detail::one_segment_message_bytes(values.size() * sizeof(value_type), bounds.back());
      if (bytes > detail::largest_message)
        throw std::invalid_argument(
            "ndzip::mpi::neighbor_exchange: send piece " + std::to_string(i) + " may take " +
            std::to_string(bytes) + " bytes, more than one message carries (" +
            std::to_string(detail::largest_message) + "); send it with ndzip::mpi::isend");
      m_packed_offsets.push_back(packed);
      packed += values.size();
      m_stream_offsets.push_back(streams);
      streams += (bounds.back() + 7) / 8 * 8;
    }
    m_packed = Kokkos::View<value_type*, memory_space>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi exchange values"), packed);
    m_streams = Kokkos::View<std::byte*, memory_space>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi exchange streams"), streams);
    for_each_batch([&](auto& batch) { make_batch(batch, shapes, bounds); });
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const auto label = Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi send");
      const std::size_t bytes = detail::one_segment_message_bytes(
          m_sends[i].values.size() * sizeof(value_type), bounds[i]);
      if (m_direct)
        m_wire_messages.emplace_back(label, bytes);
      else
        m_messages.emplace_back(label, bytes);
    }
  }

  std::size_t send_count() const { return m_sends.size(); }
  std::size_t receive_count() const { return m_receives.size(); }

  // Sends every send piece and receives every receive piece; returns once all are complete.
  // Throws as ndzip::mpi::recv does (ndzip::mpi::mismatch_error, ndzip::stream_error), the
  // first error of any piece, once every message of the exchange is complete.
  exchange_stats exchange() {
    detail::require_mpi_ready("neighbor_exchange::exchange");
    exchange_stats stats;
    std::vector<request> receives;
    for (const auto& p : m_receives) receives.push_back(m_channel.irecv(p.values, p.peer, p.tag));
    std::vector<MPI_Request> sends(m_sends.size(), MPI_REQUEST_NULL);
    std::exception_ptr failure;
    try {
      const auto started = std::chrono::steady_clock::now();
      compress_sends(stats.sent);
      stats.sent.codec_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      post_sends(sends, stats.sent);
    } catch (...) {
      failure = std::current_exception();
    }
    for (auto& r : receives) {
      try {
        r.wait();
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
      const auto& s = r.stats();
      stats.received.raw_bytes += s.raw_bytes;
      stats.received.wire_bytes += s.wire_bytes;
      stats.received.segments += s.segments;
      stats.received.raw_segments += s.raw_segments;
      stats.received.codec_seconds += s.codec_seconds;
    }
    const int rc = MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
    if (failure) std::rethrow_exception(failure);
    detail::check(rc, "MPI_Waitall");
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
    typename Kokkos::View<std::uint64_t*, memory_space>::HostMirror sizes_host;
  };

  template <class F>
  void for_each_batch(F&& f) {
    std::apply([&](auto&... batches) { (f(batches), ...); }, m_batches);
  }

  template <int Rank>
  void make_batch(batch<Rank>& b, const std::vector<detail::slab_shape>& shapes,
                  const std::vector<std::size_t>& bounds) {
    std::vector<extent<Rank>> grids;
    for (std::size_t i = 0; i < shapes.size(); ++i)
      if (bounds[i] > 0 && shapes[i].dims == Rank) {
        b.pieces.push_back(i);
        grids.push_back(detail::grid_of<Rank>(shapes[i]));
      }
    if (b.pieces.empty()) return;
    b.codec.emplace(m_exec, grids);
    b.items = Kokkos::View<batch_item<value_type>*, memory_space>("ndzip::mpi exchange items",
                                                                  b.pieces.size());
    b.sizes =
        Kokkos::View<std::uint64_t*, memory_space>("ndzip::mpi exchange sizes", b.pieces.size());
    b.sizes_host = Kokkos::create_mirror_view(b.sizes);
    auto items = Kokkos::create_mirror_view(b.items);
    for (std::size_t j = 0; j < b.pieces.size(); ++j) {
      const std::size_t i = b.pieces[j];
      items(j) = {m_packed.data() + m_packed_offsets[i], m_streams.data() + m_stream_offsets[i], 0};
    }
    Kokkos::deep_copy(b.items, items);
  }

  // Packs every send piece in C order, compresses those that can shrink (one launch per
  // batch), and stages each stream (or, where it would not be smaller, the values) after its
  // message's heads.
  void compress_sends(transfer_stats& stats) {
    m_segments.clear();  // an exchange that failed part way may have left some
    if (m_sends.empty()) return;
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const View& v = m_sends[i].values;
      Kokkos::deep_copy(m_exec, detail::c_order_over(m_packed.data() + m_packed_offsets[i], v), v);
    }
    for_each_batch([&](auto& b) {
      if (b.pieces.empty()) return;
      b.codec->compress_async(b.items, b.sizes);
      Kokkos::deep_copy(m_exec, b.sizes_host, b.sizes);
    });
    m_exec.fence();
    // Raw values unless a stream was made and is smaller.
    std::vector<std::uint64_t> stream_bytes(m_sends.size(), ~std::uint64_t{0});
    for_each_batch([&](auto& b) {
      for (std::size_t j = 0; j < b.pieces.size(); ++j) stream_bytes[b.pieces[j]] = b.sizes_host(j);
    });
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const std::uint64_t raw = m_sends[i].values.size() * sizeof(value_type);
      detail::segment_head segment{detail::segment_kind::stream, 0, stream_bytes[i]};
      const std::byte* from = m_streams.data() + m_stream_offsets[i];
      if (segment.payload_bytes >= raw) {
        segment = {detail::segment_kind::raw, 0, raw};
        from = reinterpret_cast<const std::byte*>(m_packed.data() + m_packed_offsets[i]);
        ++stats.raw_segments;
      }
      m_segments.push_back(segment);
      if (m_direct)
        detail::copy_to_wire(m_exec, m_wire_messages[i].data() + payload_offset, from,
                             segment.payload_bytes);
      else
        detail::copy_to_staging<ExecSpace>(m_exec, m_messages[i].data() + payload_offset, from,
                                           segment.payload_bytes, false);
    }
    m_exec.fence();
  }

  // Writes each message's heads and posts it. On the direct path the messages are in device
  // memory: the heads are written on the host (after the payload, where the checksum needs it)
  // and copied in front of the payload.
  void post_sends(std::vector<MPI_Request>& sends, transfer_stats& stats) {
    std::lock_guard<std::mutex> lock(detail::matching_mutex());
    std::vector<std::vector<std::byte>> heads(m_direct ? m_sends.size() : 0);
    if (m_direct && m_opts.checksum) {
      for (std::size_t i = 0; i < m_sends.size(); ++i) {
        const std::size_t payload = m_sends[i].values.size() > 0 ? m_segments[i].payload_bytes : 0;
        heads[i].resize(payload_offset + payload);
        detail::copy_bytes<Kokkos::HostSpace, wire_space>(
            m_exec, heads[i].data() + payload_offset, m_wire_messages[i].data() + payload_offset,
            payload);
      }
      m_exec.fence();
    }
    std::vector<std::size_t> message_bytes(m_sends.size());
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const detail::segment_head& segment = m_segments[i];
      if (m_direct && heads[i].empty()) heads[i].resize(payload_offset);
      std::byte* message = m_direct ? heads[i].data() : m_messages[i].data();
      detail::transfer_head head;
      head.type = detail::element_code_of<value_type>();
      head.dims = dims;
      head.checksummed = m_opts.checksum;
      head.extents = detail::extents_of(m_sends[i].values);
      head.segment_rows = std::max<std::uint64_t>(head.extents[0], 1);
      detail::write_transfer_head(head, message);
      std::size_t bytes = detail::transfer_head_bytes;
      if (head.segments() > 0) {
        detail::write_segment_head(segment, m_opts.checksum, message + detail::transfer_head_bytes);
        bytes = payload_offset + segment.payload_bytes;
        ++stats.segments;
      }
      stats.raw_bytes += m_sends[i].values.size() * sizeof(value_type);
      stats.wire_bytes += bytes;
      message_bytes[i] = bytes;
      if (m_direct)
        detail::copy_bytes<wire_space, Kokkos::HostSpace>(
            m_exec, m_wire_messages[i].data(), heads[i].data(), std::min(bytes, payload_offset));
    }
    if (m_direct) m_exec.fence();
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      std::byte* message = m_direct ? m_wire_messages[i].data() : m_messages[i].data();
      detail::check(MPI_Isend(message, static_cast<int>(message_bytes[i]), MPI_BYTE,
                              m_sends[i].peer, m_sends[i].tag, m_comm, &sends[i]),
                    "MPI_Isend");
    }
    m_segments.clear();
  }

  using wire_space = typename detail::wire<ExecSpace>::space;
  static constexpr std::size_t payload_offset =
      detail::transfer_head_bytes + detail::segment_head_bytes;

  ExecSpace m_exec;
  MPI_Comm m_comm;
  options m_opts;
  communicator<ExecSpace> m_channel;  // the receives, with their memory kept between exchanges
  bool m_direct = m_channel.direct_path(true);  // sends from device memory (options::path)
  std::vector<piece<View>> m_sends, m_receives;
  std::vector<std::size_t> m_packed_offsets, m_stream_offsets;
  Kokkos::View<value_type*, memory_space> m_packed;
  Kokkos::View<std::byte*, memory_space> m_streams;
  std::tuple<batch<1>, batch<2>, batch<3>> m_batches;
  std::vector<typename detail::staging<ExecSpace>::bytes> m_messages;
  std::vector<typename detail::wire<ExecSpace>::bytes> m_wire_messages;  // on the direct path
  std::vector<detail::segment_head> m_segments;
};

}  // namespace ndzip::mpi
