// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Point-to-point over the MPI link, the sending side (ndzip::mpi::isend, ndzip/mpi.hpp): a View
// cut into segments (core/transfer_plan.hpp), each coded and finished on the instance
// (core/segment_encoder.hpp) and posted as soon as it is ready, with options::pipeline_depth
// segments compressing while the earlier ones are on the wire; or sent plain
// (options::compression), from the View itself where MPI takes its memory and the values stay
// put, else copied as the segments would be. Not part of the API.

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ndzip/mpi/detail/core/codec_cache.hpp"
#include "ndzip/mpi/detail/core/segment_encoder.hpp"
#include "ndzip/mpi/detail/core/segment_slots.hpp"
#include "ndzip/mpi/detail/core/send_choice.hpp"
#include "ndzip/mpi/detail/core/transfer_plan.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"
#include "ndzip/mpi/detail/mpi/progress.hpp"
#include "ndzip/mpi/detail/mpi/runtime.hpp"
#include "ndzip/mpi/detail/mpi/transfer.hpp"
#include "ndzip/mpi/detail/mpi/transport.hpp"

namespace ndzip::mpi::detail {

template <class T, int Dims, class ExecSpace>
class send_transfer final : public transfer {
 public:
  using memory_space = typename ExecSpace::memory_space;

  // Compresses and posts every message before it returns (so that the messages of two
  // transfers to one peer on one tag never interleave). `values` (C order, `extents`) must stay
  // valid until then, or with `values_stay` until the transfer completes (it may then be sent
  // plain from where it is); `keep` holds a packed copy where there is one. `history` is the
  // communicator's record of its sends (options::compression), `codecs` its codecs.
  send_transfer(std::unique_ptr<transport<ExecSpace>> via, codec_cache<ExecSpace>& codecs,
                const T* values, const std::array<std::uint64_t, 3>& extents,
                Kokkos::View<T*, memory_space> keep, bool values_stay, int dest, int tag,
                MPI_Comm comm, const options& opts, std::shared_ptr<send_history> history)
      : m_transport(std::move(via)),
        m_keep(std::move(keep)),
        m_started(std::chrono::steady_clock::now()),
        m_dest(dest),
        m_tag(tag) {
    check(MPI_Comm_rank(comm, &m_rank), "MPI_Comm_rank");
    const std::uint64_t values_bytes = extents[0] * extents[1] * extents[2] * sizeof(T);
    m_mode = choose_send_mode(
        opts, [&] { return history->choose(m_dest, m_tag, values_bytes, m_rank > m_dest); });
    if (opts.compression == compression_choice::adaptive && !opts.checksum)
      m_history = std::move(history);
    const bool plain = m_mode == send_mode::plain && !opts.checksum;
    // Plain values from the View go in the largest messages (each costs the link a rendezvous);
    // copied ones in segments, so that a copy overlaps the messages before it.
    m_in_place = plain && values_stay && m_transport->mpi_takes_views();
    const transfer_head head = plan_transfer<T, Dims>(
        extents,
        m_in_place                 ? largest_message
        : opts.segment_bytes > 0 ? opts.segment_bytes
                                 : m_transport->segment_bytes(values_bytes),
        opts.checksum, plain);
    const std::uint64_t segments = head.segments();
    m_messages_owed = segments + (head.plain ? 1 : 0);
    m_stats.raw_bytes = head.values_bytes();
    m_stats.segments = segments;
    m_stats.plain = head.plain;
    if (head.plain) m_stats.raw_segments = segments;
    std::lock_guard<std::mutex> lock(matching_mutex());
    try {
      if (segments == 0 || head.plain) {
        // The head alone, from host memory.
        m_messages.push_back({});
        m_messages.back().staged =
            buffer(m_transport->memory().staging_buffer(transfer_head_bytes));
        write_transfer_head(head, m_messages.back().staged.data());
        post(m_messages.back().staged.data(), transfer_head_bytes, dest, tag, comm);
        if (segments == 0) return;
      }
      if (m_in_place) {
        // MPI reads the View once the instance's work queued before this send has written it;
        // the head is on its way meanwhile (a 64-byte message needs no progress calls).
        m_transport->exec().fence();
        for (std::uint64_t k = 0; k < segments; ++k)
          post(reinterpret_cast<const std::byte*>(values + head.slab_offset(k)),
               head.slab_bytes(k), dest, tag, comm);
        return;
      }
      segment_slots<ExecSpace> slots(m_transport->memory(), segments);
      // With the checksum on, a transfer sent plain has every segment raw in its checksummed
      // head.
      segment_encoder<T, ExecSpace> encoder(codecs, slots, head, values, opts.raw_after_ratio,
                                            m_mode == send_mode::plain);
      std::deque<message> queued;
      try {
        const std::size_t depth = std::max<std::size_t>(opts.pipeline_depth, 1);
        for (std::uint64_t k = 0; k < segments; ++k) {
          queued.push_back(queue_segment(head, k, values, slots, encoder));
          // The pipeline fills one segment per post: segment 0 leaves as soon as segment 1 is
          // queued (the receiver starts early), and what segment 0 compressed to is known before
          // the next ones are queued (options::raw_after_ratio).
          const std::size_t ahead = std::min<std::size_t>(depth, m_requests.size() + 1);
          if (queued.size() > ahead) {
            send_segment(head, queued.front(), slots, encoder, dest, tag, comm);
            queued.pop_front();
          }
        }
        for (; !queued.empty(); queued.pop_front())
          send_segment(head, queued.front(), slots, encoder, dest, tag, comm);
      } catch (...) {
        // No queued work may still use a buffer that goes back to the pool now.
        m_transport->exec().fence();
        throw;
      }
    } catch (...) {
      give_up(dest, tag, comm);
      throw;
    }
  }

  ~send_transfer() override {
    // A destroyed request still completes: MPI must not read freed buffers. After MPI_Finalize
    // nothing reads them any more, and no MPI call may be made.
    if (!m_requests.empty() && !mpi_finalized())
      MPI_Waitall(static_cast<int>(m_requests.size()), m_requests.data(), MPI_STATUSES_IGNORE);
  }

  // Waiting advances the process's receives too (progress_requests): the peer's messages may
  // need one of them to be matched before it takes this transfer's.
  bool progress(bool block) override {
    if (m_requests.empty()) return true;
    bool done = false;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(matching_mutex());
        done = progress_requests(m_requests);
      }
      if (done || !block) break;
      std::this_thread::yield();  // other threads may take the lock
    }
    if (done) {
      m_requests.clear();
      m_messages.clear();
      m_keep = {};
      if (m_history)
        m_history->record(
            m_dest, m_tag, m_stats.raw_bytes, m_mode,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count());
      m_history = nullptr;
    }
    return done;
  }

 private:
  // A segment's message: assembled in the execution space's memory, and where the transport
  // stages it; kept until MPI has sent it.
  struct message {
    std::uint64_t index = 0;
    buffer assembled, staged, head;  // `head`: the transfer head on its way into message 0
  };

  // Queues the coding of segment k into its message (core/segment_encoder.hpp), or for a plain
  // transfer the copy of its values; returns at once.
  message queue_segment(const transfer_head& head, std::uint64_t k, const T* values,
                        segment_slots<ExecSpace>& slots, segment_encoder<T, ExecSpace>& encoder) {
#ifdef NDZIP_MPI_FAULT_INJECTION
    if (send_fault_at().load() == static_cast<long long>(k)) {
      send_fault_at() = -1;
      throw std::runtime_error("ndzip::mpi: fault injected before segment " + std::to_string(k));
    }
#endif
    const auto started = std::chrono::steady_clock::now();
    message m;
    m.index = k;
    if (head.plain) {
      const std::uint64_t raw = head.slab_bytes(k);
      m.assembled = m_transport->assembly(raw);
      m_transport->pack(m.assembled.data(),
                        reinterpret_cast<const std::byte*>(values + head.slab_offset(k)), raw);
      slots.publish(k, raw);
      return m;
    }
    const std::size_t offset = k == 0 ? transfer_head_bytes : 0;
    const segment_plan plan = encoder.plan(k);
    m.assembled = m_transport->assembly(offset + segment_head_bytes + plan.payload_room);
    if (k == 0) {
      m.head = buffer(m_transport->memory().staging_buffer(transfer_head_bytes));
      write_transfer_head(head, m.head.data());
      m_transport->copy_from_host(m.assembled.data(), m.head.data(), transfer_head_bytes);
    }
    encoder.queue(k, plan, m.assembled.data() + offset);
    m_stats.codec_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return m;
  }

  // Waits for segment m's message (calling MPI for the earlier ones meanwhile), stages it where
  // the transport does, and posts it.
  void send_segment(const transfer_head& head, message& m, segment_slots<ExecSpace>& slots,
                    segment_encoder<T, ExecSpace>& encoder, int dest, int tag, MPI_Comm comm) {
    const auto started = std::chrono::steady_clock::now();
    const std::uint64_t payload = wait_progressing(slots, m.index, m_requests);
    const auto wait = [&] { fence_progressing(m_transport->memory(), m_requests); };
    if (head.plain) {
      std::byte* out = m_transport->outgoing(m.assembled, payload, m.staged, wait);
      m_stats.codec_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      post(out, payload, dest, tag, comm);
      m_messages.push_back(std::move(m));
      return;
    }
    const std::size_t offset = m.index == 0 ? transfer_head_bytes : 0;
    const std::size_t bytes = offset + segment_head_bytes + payload;
    const segment_head segment = encoder.finished(m.index, payload, m_stats);
    std::byte* out = nullptr;
    if (!head.checksummed) {
      out = m_transport->outgoing(m.assembled, bytes, m.staged, wait);
    } else if (m_transport->host_reads_messages()) {
      out = m_transport->outgoing(m.assembled, bytes, m.staged, wait);
      write_segment_head(segment, true, out + offset);
    } else {
      write_checksum_on_device(*m_transport, m.assembled.data() + offset, segment, wait);
      out = m_transport->outgoing(m.assembled, bytes, m.staged, wait);
    }
    m_stats.codec_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    post(out, bytes, dest, tag, comm);
    m_messages.push_back(std::move(m));
  }

  void post(const std::byte* out, std::size_t bytes, int dest, int tag, MPI_Comm comm) {
    MPI_Request request;
    check(MPI_Isend(out, static_cast<int>(bytes), MPI_BYTE, dest, tag, comm, &request),
          "MPI_Isend");
    m_requests.push_back(request);
    m_stats.wire_bytes += bytes;
  }

  // After a failure (an allocation, the codec, MPI) part way through the constructor: once
  // message 0 is posted, the receiver waits for every message its head announces, so each one
  // not yet posted goes out empty (the receiver reports it as given up by the sender: no
  // segment is shorter than its head, and no plain one is empty) instead of leaving the receiver
  // hanging; then every posted message completes before its buffer is freed.
  void give_up(int dest, int tag, MPI_Comm comm) noexcept {
    static const std::byte nothing{};
    for (std::uint64_t k = m_requests.size(); k > 0 && k < m_messages_owed; ++k) {
      MPI_Request request;
      if (MPI_Isend(&nothing, 0, MPI_BYTE, dest, tag, comm, &request) != MPI_SUCCESS) break;
      m_requests.push_back(request);
    }
    if (!m_requests.empty())
      MPI_Waitall(static_cast<int>(m_requests.size()), m_requests.data(), MPI_STATUSES_IGNORE);
    m_requests.clear();
  }

  std::unique_ptr<transport<ExecSpace>> m_transport;
  bool m_in_place = false;      // plain values handed to MPI where they are
  std::uint64_t m_messages_owed = 0;
  Kokkos::View<T*, memory_space> m_keep;
  // For the communicator's record (options::compression): when the transfer started, where
  // and how it went; no record where the choice was not adaptive.
  std::chrono::steady_clock::time_point m_started;
  int m_dest, m_tag, m_rank = 0;
  send_mode m_mode = send_mode::compressed;
  std::shared_ptr<send_history> m_history;
  std::vector<message> m_messages;  // posted, until MPI has sent them
  std::vector<MPI_Request> m_requests;
};

}  // namespace ndzip::mpi::detail
