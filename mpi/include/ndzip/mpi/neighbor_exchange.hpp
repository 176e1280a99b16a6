// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::neighbor_exchange: a fixed set of (View, peer, tag) sends and receives, completed
// together, its sends compressed in one batch_compressor launch (ndzip/mpi.hpp).

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "ndzip/batch_compressor.hpp"
#include "ndzip/mpi/point_to_point.hpp"
#include "ndzip/mpi/request.hpp"
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
// staging, the batch's scratch), so that an exchange allocates nothing on the device.
//
// Each send piece travels as an ndzip::mpi message of one segment (docs/FORMAT.md), so a piece
// can also be received by ndzip::mpi::recv, and a receive piece can take what
// ndzip::mpi::send sent. Pieces without elements are allowed.
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
    std::vector<extent<dims>> grids;
    std::size_t packed = 0, streams = 0;
    for (const auto& p : m_sends) {
      extent<dims> grid;
      for (int a = 0; a < dims; ++a) grid[a] = p.values.extent(a);
      // Checked before anything is allocated: each piece is one message.
      const std::uint64_t bytes = detail::one_segment_message_bytes(
          grid.size() * sizeof(value_type), compressed_size_bound<value_type>(grid));
      if (bytes > detail::largest_message)
        throw std::invalid_argument(
            "ndzip::mpi::neighbor_exchange: send piece " + std::to_string(grids.size()) +
            " may take " + std::to_string(bytes) + " bytes, more than one message carries (" +
            std::to_string(detail::largest_message) + "); send it with ndzip::mpi::isend");
      grids.push_back(grid);
      m_packed_offsets.push_back(packed);
      packed += grid.size();
      m_stream_offsets.push_back(streams);
      streams += (compressed_size_bound<value_type>(grid) + 7) / 8 * 8;
    }
    if (!m_sends.empty()) m_batch.emplace(exec, grids);
    m_packed = Kokkos::View<value_type*, memory_space>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi exchange values"), packed);
    m_streams = Kokkos::View<std::byte*, memory_space>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi exchange streams"), streams);
    m_items = Kokkos::View<batch_item<value_type>*, memory_space>("ndzip::mpi exchange items",
                                                                  m_sends.size());
    m_sizes =
        Kokkos::View<std::uint64_t*, memory_space>("ndzip::mpi exchange sizes", m_sends.size());
    m_sizes_host = Kokkos::create_mirror_view(m_sizes);
    auto items = Kokkos::create_mirror_view(m_items);
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      items(i) = {m_packed.data() + m_packed_offsets[i], m_streams.data() + m_stream_offsets[i], 0};
      const std::uint64_t bytes = detail::one_segment_message_bytes(
          grids[i].size() * sizeof(value_type), m_batch->size_bound(i));
      m_messages.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi send"),
                              bytes);
    }
    Kokkos::deep_copy(m_items, items);
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
  // Packs every send piece in C order, compresses all of them in one launch, and stages each
  // stream (or, where it would not be smaller, the values) after its message's heads.
  void compress_sends(transfer_stats& stats) {
    if (m_sends.empty()) return;
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const View& v = m_sends[i].values;
      Kokkos::deep_copy(m_exec, detail::c_order_over(m_packed.data() + m_packed_offsets[i], v), v);
    }
    m_batch->compress_async(m_items, m_sizes);
    Kokkos::deep_copy(m_exec, m_sizes_host, m_sizes);
    m_exec.fence();
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const std::uint64_t raw = m_batch->grid(i).size() * sizeof(value_type);
      detail::segment_head segment{detail::segment_kind::stream, 0, m_sizes_host(i)};
      const std::byte* from = m_streams.data() + m_stream_offsets[i];
      if (segment.payload_bytes >= raw) {
        segment = {detail::segment_kind::raw, 0, raw};
        from = reinterpret_cast<const std::byte*>(m_packed.data() + m_packed_offsets[i]);
        ++stats.raw_segments;
      }
      m_segments.push_back(segment);
      detail::copy_to_staging<ExecSpace>(m_exec, m_messages[i].data() + payload_offset, from,
                                         segment.payload_bytes, false);
    }
    m_exec.fence();
  }

  void post_sends(std::vector<MPI_Request>& sends, transfer_stats& stats) {
    std::lock_guard<std::mutex> lock(detail::matching_mutex());
    for (std::size_t i = 0; i < m_sends.size(); ++i) {
      const detail::segment_head& segment = m_segments[i];
      std::byte* message = m_messages[i].data();
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
      stats.raw_bytes += m_batch->grid(i).size() * sizeof(value_type);
      stats.wire_bytes += bytes;
      detail::check(MPI_Isend(message, static_cast<int>(bytes), MPI_BYTE, m_sends[i].peer,
                              m_sends[i].tag, m_comm, &sends[i]),
                    "MPI_Isend");
    }
    m_segments.clear();
  }

  static constexpr std::size_t payload_offset =
      detail::transfer_head_bytes + detail::segment_head_bytes;

  ExecSpace m_exec;
  MPI_Comm m_comm;
  options m_opts;
  communicator<ExecSpace> m_channel;  // the receives, with their memory kept between exchanges
  std::vector<piece<View>> m_sends, m_receives;
  std::optional<batch_compressor<value_type, dims, ExecSpace>> m_batch;
  std::vector<std::size_t> m_packed_offsets, m_stream_offsets;
  Kokkos::View<value_type*, memory_space> m_packed;
  Kokkos::View<std::byte*, memory_space> m_streams;
  Kokkos::View<batch_item<value_type>*, memory_space> m_items;
  Kokkos::View<std::uint64_t*, memory_space> m_sizes;
  typename Kokkos::View<std::uint64_t*, memory_space>::HostMirror m_sizes_host;
  std::vector<typename detail::staging<ExecSpace>::bytes> m_messages;
  std::vector<detail::segment_head> m_segments;
};

}  // namespace ndzip::mpi
