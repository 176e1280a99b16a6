// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Point-to-point over the MPI link, the receiving side (ndzip::mpi::irecv, ndzip/mpi.hpp): the
// messages of a transfer taken as they arrive (matching.hpp), checked, and decoded on the
// instance while the next ones arrive (core/segment_decoder.hpp); the instance is fenced once,
// after the last. A plain transfer's values are received into the View itself where MPI takes
// its memory. Not part of the API.

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "ndzip/error.hpp"
#include "ndzip/mpi/detail/core/codec_cache.hpp"
#include "ndzip/mpi/detail/core/segment_decoder.hpp"
#include "ndzip/mpi/detail/core/send_choice.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"
#include "ndzip/mpi/detail/mpi/matching.hpp"
#include "ndzip/mpi/detail/mpi/runtime.hpp"
#include "ndzip/mpi/detail/mpi/transfer.hpp"
#include "ndzip/mpi/detail/mpi/transport.hpp"
#include "ndzip/mpi/error.hpp"

namespace ndzip::mpi::detail {

template <class T, int Dims, class ExecSpace>
class recv_transfer final : public transfer, private message_sink {
 public:
  using memory_space = typename ExecSpace::memory_space;

  // Receives into `values` (C order, `extents`, in memory_space) through the transport `via`,
  // decoding with `codecs`; `finish` runs once every segment is decoded (copies a packed result
  // into a strided View, say). `label` names the View in errors. `require_checksum`: a message
  // without segment checksums is refused (options::checksum). `history` (or none) learns how
  // the sender sent the transfer (core/send_choice.hpp). The receive is entered in the
  // process's receive queue now, so that it matches before any receive posted after it
  // (matching.hpp).
  recv_transfer(std::unique_ptr<transport<ExecSpace>> via,
                std::shared_ptr<codec_cache<ExecSpace>> codecs, T* values,
                const std::array<std::uint64_t, 3>& extents, std::function<void()> finish,
                std::string label, int source, int tag, MPI_Comm comm, bool require_checksum,
                std::shared_ptr<send_history> history = nullptr)
      : m_transport(std::move(via)),
        m_codecs(std::move(codecs)),
        m_history(std::move(history)),
        m_memory(&m_transport->memory()),
        m_require_checksum(require_checksum),
        m_exec(m_transport->exec()),
        m_values(values),
        m_finish(std::move(finish)),
        m_label(std::move(label)),
        m_source(source),
        m_tag(tag) {
    m_expected.type = element_code_of<T>();
    m_expected.dims = Dims;
    m_expected.extents = extents;
    std::lock_guard<std::mutex> lock(matching_mutex());
    m_ticket = receives().post(comm, source, tag, this);
  }

  ~recv_transfer() override { abandon(); }

  bool progress(bool block) override {
    for (;;) {
      bool moved = false;
      {
        std::lock_guard<std::mutex> lock(matching_mutex());
        if (m_queued) moved = step();
      }
      if (!m_queued) return complete();
      if (!block) return false;
      // Nothing has arrived: MPI is called again (it moves bytes only while called), other
      // threads meanwhile may take the lock.
      if (!moved) std::this_thread::yield();
    }
  }

  // A receive that has not taken its first message is withdrawn: nothing was consumed, no MPI
  // call waits. One that has is completed (the sender sends every message of a transfer, also
  // after an error of its own), so that none of its messages is left to match a later receive.
  void abandon() noexcept override {
    {
      std::lock_guard<std::mutex> lock(matching_mutex());
      if (!m_queued) return;
      if (!receive_queue::matched(m_ticket) || mpi_finalized()) {
        receives().withdraw(m_ticket);
        m_queued = false;
        m_arrivals.clear();  // after MPI_Finalize nothing writes into them any more
        m_failure = nullptr;
        return;
      }
      m_discarding = true;  // nothing more is written into the View
      m_finished = true;
    }
    transfer::abandon();
    // Had completing failed before the receive left the queue (an allocation), the queue must
    // still forget it: it is about to be destroyed.
    std::lock_guard<std::mutex> lock(matching_mutex());
    if (m_queued) {
      drain();
      receives().withdraw(m_ticket);
      m_queued = false;
    }
  }

 private:
  using staging_lease = typename buffer_pool<ExecSpace>::staging_lease;

  // A segment handed over by the queue: in the transport's inbox, at `offset` (message 0 holds
  // the transfer head before segment 0), or a plain one in the View where the inbox is empty;
  // received or still arriving.
  struct arrival {
    std::uint64_t index = 0;
    buffer inbox;
    std::size_t offset = 0, bytes = 0;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  // Decodes the segments that have arrived, in order; once the transfer has handed over every
  // message and all are decoded, and `may_finish`, checks the device's outcomes and leaves the
  // queue. Returns whether anything moved. Called with matching_mutex() held.
  bool step(bool may_finish = true) {
    bool moved = false;
    try {
      if (!receive_queue::matched(m_ticket) || receive_queue::owed(m_ticket) > 0)
        moved = receives().poll(m_ticket);
    } catch (...) {
      // MPI failed to probe: what the transfer is still owed cannot be taken.
      fail(std::current_exception());
      if (may_finish) finish_queued();
      return true;
    }
    while (!m_arrivals.empty()) {
      arrival& a = m_arrivals.front();
      if (a.request != MPI_REQUEST_NULL) {
        int arrived = 0;
        if (MPI_Test(&a.request, &arrived, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
          fail(std::make_exception_ptr(
              error("ndzip::mpi: MPI_Test failed on segment " + std::to_string(a.index))));
          a.request = MPI_REQUEST_NULL;
        } else if (!arrived) {
          break;
        }
      }
      moved = true;
      if (!m_discarding) {
        try {
          if (m_head->plain) {
            ++m_stats.raw_segments;
            if (a.inbox) {
              m_transport->unpack(slab_bytes(a.index), a.inbox.data(), a.bytes);
              m_device_work = true;
            }
          } else {
            // A message 0 of a head alone has no inbox (nor any bytes of segment 0).
            decode(a.index, a.inbox ? a.inbox.data() + a.offset : nullptr, a.bytes);
          }
        } catch (...) {
          fail(std::current_exception());
        }
      }
      // A queued copy or decoder may still read the buffer: kept until settled.
      m_read_by_device.push_back(std::move(a));
      m_arrivals.pop_front();
    }
    if (may_finish && receive_queue::matched(m_ticket) && receive_queue::owed(m_ticket) == 0 &&
        m_arrivals.empty()) {
      finish_queued();
      moved = true;
    }
    return moved;
  }

  void advance() noexcept override {
    if (m_queued) step(false);
  }

  // Every message taken and handled: the device's outcomes are checked (unless the transfer
  // failed already), the buffers go back and the receive leaves the queue.
  void finish_queued() {
    if (!m_failure) {
      try {
        settle();
      } catch (...) {
        fail(std::current_exception());
      }
    }
    drain();
    receives().withdraw(m_ticket);
    m_queued = false;
  }

  // After the queue: the error, named with the peer and the View, or the View completed.
  bool complete() {
    if (m_failure)
      rethrow_received(std::exchange(m_failure, nullptr),
                       "ndzip::mpi: receiving from rank " + std::to_string(m_source) + " (tag " +
                           std::to_string(m_tag) + ") into " + m_label + ": ");
    if (m_finish && !m_finished) {
      m_finished = true;
      m_finish();
    }
    return true;
  }

  void fail(std::exception_ptr e) {
    if (!m_failure) m_failure = std::move(e);
    m_discarding = true;
  }

  // The queue's calls (message_sink): message 0 is received whole (its head says how many
  // messages follow), the others as they arrive.
  std::uint64_t take_first(MPI_Message& message, const MPI_Status& status) noexcept override {
    m_source = status.MPI_SOURCE;
    m_tag = status.MPI_TAG;
    try {
      arrival a;
      const std::size_t count = message_bytes(status);
      // A head alone (a plain transfer's, an empty View's) is received into host memory, where
      // it is read: the transport's inbox may be device memory, which would cost two copies and a
      // fence per transfer.
      const bool head_alone = count <= transfer_head_bytes;
      staging_lease head_copy;
      if (head_alone)
        head_copy = m_memory->staging_buffer(transfer_head_bytes);
      else
        a.inbox = m_transport->inbox(count);
      check(MPI_Mrecv(head_alone ? head_copy.data() : a.inbox.data(), static_cast<int>(count),
                      MPI_BYTE, &message, MPI_STATUS_IGNORE),
            "MPI_Mrecv");
      const std::byte* head_bytes = head_alone ? head_copy.data() : a.inbox.data();
      if (!head_alone && !m_transport->host_reads_messages()) {
        head_copy = m_memory->staging_buffer(std::min(count, transfer_head_bytes));
        m_transport->copy_to_host(head_copy.data(), a.inbox.data(), head_copy.size());
        m_exec.fence();
        head_bytes = head_copy.data();
      }
      m_stats.wire_bytes = count;
      const transfer_head head = read_transfer_head(head_bytes, count);
      m_head = head;
      m_taken = 1;
      if (head.plain && count != transfer_head_bytes) {
        // Not a plain transfer as this library sends it (refused below): which messages follow
        // is in doubt. Where message 0 holds segment 0's values after the head (a compressed
        // transfer's layout), segment 1 comes next; else segment 0 does. Each further message is
        // taken only where it holds exactly the values of the segment it would be (wants()), so
        // that the messages of the next transfer are left to its receive.
        m_doubtful_plain = true;
        m_first_plain_message = count - transfer_head_bytes == plain_bytes(0) ? 1 : 0;
      }
      const std::uint64_t further = head.plain           ? head.segments() - m_first_plain_message
                                    : head.segments() > 1 ? head.segments() - 1
                                                          : 0;
      const std::string sender = "ndzip::mpi: the message from rank " + std::to_string(m_source) +
                                 " (tag " + std::to_string(m_tag) + ")";
      if (auto mismatch = mismatch_of(head, m_expected, sender, m_label, "message")) {
        fail(std::make_exception_ptr(*mismatch));
        return further;
      }
      if (m_require_checksum && !head.checksummed && head.segments() > 0) {
        fail(std::make_exception_ptr(mismatch_error(
            sender + " for the " + m_label +
            " carries no segment checksums, and this receive requires them (options::checksum); "
            "the message was consumed and the View was not written")));
        return further;
      }
      m_stats.raw_bytes = head.values_bytes();
      if (m_history && m_stats.raw_bytes > 0)
        m_history->observe(m_source, m_stats.raw_bytes,
                           head.plain ? send_mode::plain : send_mode::compressed);
      m_stats.segments = head.segments();
      m_stats.plain = head.plain;
      if (!head.plain) m_decoder.emplace(*m_memory, *m_codecs, head, m_values);
      if (head.segments() == 0 || head.plain) {
        if (count != transfer_head_bytes)
          fail(std::make_exception_ptr(stream_error(
              (head.plain ? "the head of the plain transfer" : "the message for the empty View") +
              std::string(" holds ") + std::to_string(count - transfer_head_bytes) +
              " bytes after its head")));
        return further;
      }
      a.offset = transfer_head_bytes;
      a.bytes = count - transfer_head_bytes;
      m_arrivals.push_back(std::move(a));
      return further;
    } catch (...) {
      // Its head unread (damaged, or MPI failed): the messages that follow it cannot be told
      // apart from other transfers' and are left to MPI.
      fail(std::current_exception());
      return 0;
    }
  }

  bool wants(const MPI_Status& status) noexcept override {
    if (!m_doubtful_plain) return true;
    try {
      return message_bytes(status) == plain_bytes(m_taken - 1 + m_first_plain_message);
    } catch (...) {
      return false;  // its size unknown: left to the receive it may begin
    }
  }

  void take_next(MPI_Message& message, const MPI_Status& status) noexcept override {
    const std::uint64_t taken = m_taken++;
    try {
      const std::size_t count = message_bytes(status);
      if (m_discarding) {
        discard(message, count);
        return;
      }
      const transfer_head& head = *m_head;
      if (head.plain) {
        take_plain(message, taken - 1, count);
        return;
      }
      const std::uint64_t k = taken;
      const std::uint64_t room = segment_head_bytes + head.slab_bytes(k);
      if (count > room) {
        discard(message, count);
        fail(std::make_exception_ptr(
            stream_error("segment " + std::to_string(k) + " of the received message is damaged: " +
                         std::to_string(count) + " bytes, more than the " + std::to_string(room) +
                         " that its head and the values of its slab take")));
        return;
      }
      m_stats.wire_bytes += count;
      arrival a;
      a.index = k;
      a.bytes = count;
      a.inbox = m_transport->inbox(count);
      check(MPI_Imrecv(a.inbox.data(), static_cast<int>(count), MPI_BYTE, &message, &a.request),
            "MPI_Imrecv");
      m_arrivals.push_back(std::move(a));
    } catch (...) {
      fail(std::current_exception());
    }
  }

  // Plain segment k of `count` bytes: received into the View where MPI takes its memory, else
  // into an inbox, unpacked by step(). Anything but the slab's values exactly is refused unread.
  void take_plain(MPI_Message& message, std::uint64_t k, std::size_t count) {
    const std::uint64_t raw = plain_bytes(k);
    if (count != raw) {
      discard(message, count);
      fail(std::make_exception_ptr(stream_error(
          count == 0 ? "plain segment " + std::to_string(k) +
                           " of the received message is empty: the sending rank gave the "
                           "transfer up after an error there"
                     : "plain segment " + std::to_string(k) + " of the received message is " +
                           std::to_string(count) + " bytes, its slab's values " +
                           std::to_string(raw))));
      return;
    }
    m_stats.wire_bytes += count;
    arrival a;
    a.index = k;
    a.bytes = count;
    std::byte* to = slab_bytes(k);
    if (!m_transport->mpi_takes_views()) {
      a.inbox = m_transport->inbox(count);
      to = a.inbox.data();
    }
    check(MPI_Imrecv(to, static_cast<int>(count), MPI_BYTE, &message, &a.request), "MPI_Imrecv");
    m_arrivals.push_back(std::move(a));
  }

  // The bytes of plain segment k (its slab's values).
  std::uint64_t plain_bytes(std::uint64_t k) const { return m_head->slab_bytes(k); }

  // Where segment k's values go in the View.
  std::byte* slab_bytes(std::uint64_t k) const {
    return reinterpret_cast<std::byte*>(m_values + m_head->slab_offset(k));
  }

  static std::size_t message_bytes(const MPI_Status& status) {
    int count = 0;
    check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
    return count == MPI_UNDEFINED || count < 0 ? 0 : static_cast<std::size_t>(count);
  }

  // Receives a message nobody reads (a refused transfer's): MPI needs room for all of it.
  static void discard(MPI_Message& message, std::size_t count) {
    std::vector<std::byte> sink(count);
    check(MPI_Mrecv(sink.data(), static_cast<int>(count), MPI_BYTE, &message, MPI_STATUS_IGNORE),
          "MPI_Mrecv");
  }

  // Checks segment k's head (where the host reads the inbox) and queues its decoding, or the
  // copy of its raw values, into the View; settle() checks the outcomes. Where the segment is in
  // device memory (mpi_device) its kind follows from its size (a stream is always smaller than
  // its slab's values, raw values are exactly as large), and its head is copied to the host and
  // checked by settle(), so that no segment waits for the device; a checksummed segment is
  // copied to the host whole and hashed first.
  void decode(std::uint64_t k, const std::byte* segment, std::size_t bytes) {
    const auto started = std::chrono::steady_clock::now();
    struct timed {
      std::chrono::steady_clock::time_point started;
      double& seconds;
      ~timed() {
        seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      }
    } timing{started, m_stats.codec_seconds};
    m_device_work = true;
    const transfer_head& head = *m_head;
    const std::uint64_t raw = head.slab_bytes(k);
    segment_head seg;
    if (m_transport->host_reads_messages() || head.checksummed || bytes < segment_head_bytes) {
      staging_lease host_copy;
      const std::byte* host_segment = segment;
      if (!m_transport->host_reads_messages() && bytes >= segment_head_bytes) {
        host_copy = m_memory->staging_buffer(bytes);
        m_transport->copy_to_host(host_copy.data(), segment, bytes);
        m_exec.fence();
        host_segment = host_copy.data();
      }
      seg = read_segment_head(host_segment, bytes, k, raw, head.checksummed);
    } else {
      seg = {bytes - segment_head_bytes == raw ? segment_kind::raw : segment_kind::stream, k,
             bytes - segment_head_bytes};
      if (m_heads.size() == 0)
        m_heads = m_memory->staging_buffer(head.segments() * segment_head_bytes);
      m_transport->copy_to_host(m_heads.data() + k * segment_head_bytes, segment,
                                segment_head_bytes);
      m_head_checks.push_back({k, bytes});
    }
    const std::byte* payload = segment + segment_head_bytes;
    if (seg.kind == segment_kind::raw) {
      ++m_stats.raw_segments;
      m_transport->unpack(slab_bytes(k), payload, raw);
      return;
    }
    // Queued, not waited for: the host goes back to MPI for the next segment while the
    // instance copies and decodes this one.
    buffer stream;
    const std::byte* codec_payload = m_transport->to_codec(payload, seg.payload_bytes, stream);
    m_decoder->queue(k, codec_payload, seg.payload_bytes);
    m_streams.push_back(std::move(stream));
  }

  // Waits for the copies and decoders queued by decode() and checks the heads copied from
  // device memory, then what the decoders found.
  void settle() {
    const auto started = std::chrono::steady_clock::now();
    // The outcomes' copy is queued after the decoders: one fence waits for both.
    if (m_decoder) m_decoder->copy_outcomes();
    if (m_device_work) m_exec.fence();
    for (const auto& [k, bytes] : m_head_checks)
      read_segment_head(m_heads.data() + k * segment_head_bytes, bytes, k, m_head->slab_bytes(k),
                        false);
    if (m_decoder) m_decoder->check();
    m_stats.codec_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  // Waits for what may still read or write the transfer's buffers (MPI's receives, the
  // device's queued copies and decoders), then gives the buffers back.
  void drain() noexcept {
    for (auto& a : m_arrivals)
      if (a.request != MPI_REQUEST_NULL) MPI_Wait(&a.request, MPI_STATUS_IGNORE);
    if (m_device_work) {
      try {
        m_exec.fence();
      } catch (...) {
        // drain() runs in destructors and while another error is reported: a failing fence (a
        // device fault) has no caller to report to here; such faults are sticky, so the
        // caller's next call on the device reports it.
      }
    }
    m_arrivals.clear();
    m_read_by_device.clear();
    if (m_decoder) m_decoder->clear();
    m_head_checks.clear();
    m_streams.clear();
    m_heads = {};
  }

  std::unique_ptr<transport<ExecSpace>> m_transport;
  std::shared_ptr<codec_cache<ExecSpace>> m_codecs;
  std::shared_ptr<send_history> m_history;
  buffer_pool<ExecSpace>* m_memory;  // the transport's
  bool m_require_checksum;
  ExecSpace m_exec;
  T* m_values;
  std::function<void()> m_finish;
  std::string m_label;
  int m_source, m_tag;  // as posted, then the sender's
  transfer_head m_expected;
  std::optional<transfer_head> m_head;
  receive_queue::ticket m_ticket;
  bool m_queued = true;       // in the receive queue: not yet complete
  bool m_discarding = false;  // refused or failed: further messages are consumed unread
  bool m_finished = false;    // `finish` ran
  // Copies or decoders were queued on the instance (none for plain values received into the
  // View, which MPI has written once their receive completes): settle() and drain() wait.
  bool m_device_work = false;
  std::exception_ptr m_failure;
  std::uint64_t m_taken = 0;  // messages handed over so far
  // A plain head not alone in message 0 (refused): its further messages are taken only while
  // each holds the next plain segment's values, the first of them segment m_first_plain_message.
  bool m_doubtful_plain = false;
  std::uint64_t m_first_plain_message = 0;
  std::deque<arrival> m_arrivals;
  std::vector<arrival> m_read_by_device;
  // What decode() queued and settle() waits for: the stream buffers the decoders read, the
  // decoders (a compressed transfer's, once its head is read); the heads copied from device
  // memory (index, bytes that arrived) and where they were copied to.
  std::vector<buffer> m_streams;
  std::optional<segment_decoder<T, ExecSpace>> m_decoder;
  staging_lease m_heads;
  std::vector<std::pair<std::uint64_t, std::size_t>> m_head_checks;
};

}  // namespace ndzip::mpi::detail
