// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Point-to-point over the NCCL link (nccl_communicator::send, recv, sendrecv, exchange): the
// sending and the receiving side of one transfer, as sides of the rounds of rounds.hpp, over
// the segment encoder and decoder every link shares (detail/core/). Not part of the API.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ndzip/error.hpp"
#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/codec_cache.hpp"
#include "ndzip/mpi/detail/core/segment_decoder.hpp"
#include "ndzip/mpi/detail/core/segment_encoder.hpp"
#include "ndzip/mpi/detail/core/segment_slots.hpp"
#include "ndzip/mpi/detail/core/transfer_plan.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"
#include "ndzip/mpi/detail/gpu/stream.hpp"
#include "ndzip/mpi/detail/nccl/link.hpp"
#include "ndzip/mpi/detail/nccl/rounds.hpp"
#include "ndzip/mpi/error.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi::detail {

// The sending side of one transfer.
template <class T, int Dims, class ExecSpace>
class nccl_outgoing final : public nccl_side {
 public:
  nccl_outgoing(nccl_operations& ops, std::shared_ptr<buffer_pool<ExecSpace>> memory,
                std::shared_ptr<codec_cache<ExecSpace>> codecs, const T* values,
                const std::array<std::uint64_t, 3>& extents, int peer, bool plain,
                const options& opts)
      : m_ops(ops),
        m_memory(std::move(memory)),
        m_codecs(std::move(codecs)),
        m_values(values),
        m_peer(peer),
        m_depth(std::max<std::size_t>(opts.pipeline_depth, 1)) {
    const std::uint64_t values_bytes = extents[0] * extents[1] * extents[2] * sizeof(T);
    // Compressed: as through a GPU-aware MPI (core/transfer_plan.hpp). Plain: the largest
    // segments, as each NCCL operation costs a setup (16 MiB plain moved at 0.8x of one
    // operation of the whole View on two H200s).
    const std::size_t segment_bytes = plain                    ? largest_message
                                      : opts.segment_bytes > 0 ? opts.segment_bytes
                                                               : device_segment_bytes(values_bytes);
    m_head = plan_transfer<T, Dims>(extents, segment_bytes, false, plain);
    m_segments = m_head.segments();
    m_stats.raw_bytes = values_bytes;
    m_stats.segments = m_segments;
    m_stats.plain = plain;
    if (plain) m_stats.raw_segments = m_segments;
    m_heads_host = m_memory->staging_buffer(nccl_opening_bytes + m_segments * segment_head_bytes);
    m_heads_device = m_memory->device_buffer(nccl_opening_bytes + m_segments * segment_head_bytes);
    std::memset(m_heads_host.data(), 0, m_heads_host.size());
    write_transfer_head(m_head, m_heads_host.data());
    if (!plain) {
      m_slots = std::make_unique<segment_slots<ExecSpace>>(*m_memory, m_segments);
      m_encoder = std::make_unique<segment_encoder<T, ExecSpace>>(
          *m_codecs, *m_slots, m_head, values, opts.raw_after_ratio, false);
      m_payload_bytes.resize(m_segments);
    }
  }

  std::uint64_t rounds() const override { return m_segments + 1; }
  const transfer_stats& stats() const override { return m_stats; }
  // Records `before` and `after` (events with timing) around the compression of the last
  // segment, if the transfer compresses: the time its receiver may need to decode it.
  void time_last_segment(gpu::event before, gpu::event after) {
    m_last_before = before;
    m_last_after = after;
  }
  int peer() const override { return m_peer; }

  void before(std::uint64_t r) override {
    const auto started = std::chrono::steady_clock::now();
    // Heads of segments below `known` go in this round or an earlier one.
    const std::uint64_t known = std::min(m_segments, r + nccl_heads_ahead);
    if (!m_head.plain) {
      while (m_queued < std::min<std::uint64_t>(m_segments, known + m_depth)) queue(m_queued++);
      for (; m_known < known; ++m_known) learn(m_known);
    }
    if (r == 0) {
      m_ops.copy(m_heads_device.data(), m_heads_host.data(), nccl_opening_bytes);
    } else if (!m_head.plain) {
      gpu::order_after(m_ops.stream(), m_compressed[r - 1]);
      if (const std::uint64_t ahead = r - 1 + nccl_heads_ahead; ahead < m_segments)
        m_ops.copy(head_device(ahead), head_host(ahead), segment_head_bytes);
    }
    m_stats.codec_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  void post(std::uint64_t r) override {
    if (r == 0) {
      m_stats.wire_bytes += m_ops.send(m_heads_device.data(), nccl_opening_bytes, m_peer);
    } else if (const std::uint64_t k = r - 1; m_head.plain) {
      m_stats.wire_bytes +=
          m_ops.send(m_values + m_head.slab_offset(k), m_head.slab_bytes(k), m_peer);
    } else {
      m_stats.wire_bytes += m_ops.send(m_assemblies[k].data() + segment_head_bytes,
                                       m_payload_bytes[k], m_peer);
      if (const std::uint64_t ahead = k + nccl_heads_ahead; ahead < m_segments)
        m_stats.wire_bytes += m_ops.send(head_device(ahead), segment_head_bytes, m_peer);
    }
  }

  void after(std::uint64_t) override {}
  void follow(std::uint64_t, gpu::event) override {}
  void arrived(std::uint64_t) override {}
  void finish() override {}
  bool reads_arrivals() const override { return false; }

 private:
  // Segment k's head: in the opening for the first ones, after it for the others.
  std::size_t head_offset(std::uint64_t k) const {
    return k < nccl_heads_ahead ? transfer_head_bytes + k * segment_head_bytes
                                : nccl_opening_bytes + k * segment_head_bytes;
  }
  std::byte* head_host(std::uint64_t k) const { return m_heads_host.data() + head_offset(k); }
  std::byte* head_device(std::uint64_t k) const { return m_heads_device.data() + head_offset(k); }

  // Queues the coding of segment k on the instance (core/segment_encoder.hpp), and records
  // when it is done.
  void queue(std::uint64_t k) {
    const segment_plan plan = m_encoder->plan(k);
    m_assemblies.push_back(
        buffer(m_memory->device_buffer(segment_head_bytes + plan.payload_room)));
    const gpu::stream instance = gpu::stream_of(m_memory->exec());
    const bool timed = k + 1 == m_segments && m_last_before != nullptr;
    if (timed) gpu::record(m_last_before, instance);
    m_encoder->queue(k, plan, m_assemblies.back().data());
    if (timed) gpu::record(m_last_after, instance);
    m_compressed.push_back(m_ops.mark(instance));
  }

  // Waits until segment k is compressed and writes its head on the host.
  void learn(std::uint64_t k) {
    const std::uint64_t payload = m_slots->wait(k, [] {});
    m_payload_bytes[k] = payload;
    write_segment_head(m_encoder->finished(k, payload, m_stats), false, head_host(k));
  }

  nccl_operations& m_ops;
  std::shared_ptr<buffer_pool<ExecSpace>> m_memory;
  std::shared_ptr<codec_cache<ExecSpace>> m_codecs;
  const T* m_values;
  int m_peer;
  std::size_t m_depth;
  transfer_head m_head;
  std::uint64_t m_segments = 0, m_queued = 0, m_known = 0;
  gpu::event m_last_before = nullptr, m_last_after = nullptr;  // time_last_segment
  transfer_stats m_stats;
  typename buffer_pool<ExecSpace>::staging_lease m_heads_host;  // opening, then segment heads
  typename buffer_pool<ExecSpace>::device_lease m_heads_device;
  std::unique_ptr<segment_slots<ExecSpace>> m_slots;
  std::unique_ptr<segment_encoder<T, ExecSpace>> m_encoder;
  std::vector<buffer> m_assemblies;            // segment head (unused) and payload, per segment
  std::vector<gpu::event> m_compressed;        // per segment, on the instance
  std::vector<std::uint64_t> m_payload_bytes;  // per segment, once learned
};

// The receiving side of one transfer. A transfer of another type or extents than the View, or
// with checksums (no sender over NCCL writes them), is received to its end into a buffer that
// is read by nobody and refused then (mismatch_error, stream_error), as are payloads that do
// not decode exactly; a damaged head leaves the rounds unmatched (out_of_step).
template <class T, int Dims, class ExecSpace>
class nccl_incoming final : public nccl_side {
 public:
  nccl_incoming(nccl_operations& ops, std::shared_ptr<buffer_pool<ExecSpace>> memory,
                std::shared_ptr<codec_cache<ExecSpace>> codecs, T* values,
                const std::array<std::uint64_t, 3>& extents, int peer, std::string label)
      : m_ops(ops),
        m_memory(std::move(memory)),
        m_codecs(std::move(codecs)),
        m_values(values),
        m_peer(peer),
        m_label(std::move(label)) {
    m_expected.type = element_code_of<T>();
    m_expected.dims = Dims;
    m_expected.extents = extents;
    m_opening_host = m_memory->staging_buffer(nccl_opening_bytes);
    m_opening_device = m_memory->device_buffer(nccl_opening_bytes);
  }

  std::uint64_t rounds() const override { return m_head ? m_head->segments() + 1 : 1; }
  bool reads_arrivals() const override { return true; }
  const transfer_stats& stats() const override { return m_stats; }
  int peer() const override { return m_peer; }
  // The sender's choice, once round 0 has arrived.
  bool plain() const { return m_head && m_head->plain; }

  void before(std::uint64_t r) override {
    if (r == 0) return;
    const std::uint64_t k = r - 1;
    const std::uint64_t bytes = m_payload_bytes[k];
    if (m_head->plain && !m_discarding) {
      m_inboxes.push_back({});  // into the View
    } else if (m_discarding) {
      // One buffer for every refused payload: the NCCL stream writes them one after another.
      if (m_discard.size() < bytes) {
        m_spent.push_back(std::move(m_discard));
        m_discard = buffer(m_memory->device_buffer(bytes));
      }
      m_inboxes.push_back(m_discard);
    } else {
      m_inboxes.push_back(buffer(m_memory->device_buffer(std::max<std::uint64_t>(bytes, 1))));
    }
  }

  void post(std::uint64_t r) override {
    if (r == 0) {
      m_stats.wire_bytes += m_ops.recv(m_opening_device.data(), nccl_opening_bytes, m_peer);
      return;
    }
    const std::uint64_t k = r - 1;
    std::byte* to = m_inboxes[k] ? m_inboxes[k].data() : slab_bytes(k);
    m_stats.wire_bytes += m_ops.recv(to, m_payload_bytes[k], m_peer);
    if (const std::uint64_t ahead = k + nccl_heads_ahead;
        !m_head->plain && ahead < m_head->segments())
      m_stats.wire_bytes += m_ops.recv(m_heads_device.data() + ahead * segment_head_bytes,
                                       segment_head_bytes, m_peer);
  }

  void after(std::uint64_t r) override {
    if (r == 0) {
      m_ops.copy(m_opening_host.data(), m_opening_device.data(), nccl_opening_bytes);
      return;
    }
    if (const std::uint64_t ahead = r - 1 + nccl_heads_ahead;
        !m_head->plain && ahead < m_head->segments())
      m_ops.copy(m_heads_host.data() + ahead * segment_head_bytes,
                  m_heads_device.data() + ahead * segment_head_bytes, segment_head_bytes);
  }

  void follow(std::uint64_t r, gpu::event arrived_event) override {
    if (r == 0 || m_discarding || m_head->plain) return;
    const std::uint64_t k = r - 1;
    try {
      decode(k, arrived_event);
    } catch (...) {
      fail(std::current_exception());
    }
  }

  void arrived(std::uint64_t r) override {
    if (r == 0) {
      open();
      return;
    }
    if (const std::uint64_t ahead = r - 1 + nccl_heads_ahead;
        !m_head->plain && ahead < m_head->segments())
      learn(ahead, m_heads_host.data() + ahead * segment_head_bytes);
  }

  // Waits for the decoders and checks what they found.
  void finish() override {
    if (m_decoder && !m_decoder->idle() && !m_failure) {
      m_decoder->copy_outcomes();
      m_memory->exec().fence();
      try {
        m_decoder->check();
      } catch (...) {
        fail(std::current_exception());
      }
    }
    if (m_failure)
      rethrow_received(m_failure, "ndzip::mpi::nccl_communicator: receiving from rank " +
                                      std::to_string(m_peer) + " into " + m_label + ": ");
  }

 private:
  // Reads the opening: the transfer's head, and the heads of its first segments.
  void open() {
    transfer_head head;
    try {
      head = read_transfer_head(m_opening_host.data(), nccl_opening_bytes);
    } catch (const stream_error& e) {
      throw out_of_step(std::string("ndzip::mpi::nccl_communicator: receiving from rank ") +
                        std::to_string(m_peer) + ": " + e.what());
    }
    m_head = head;
    m_stats.raw_bytes = head.values_bytes();
    m_stats.segments = head.segments();
    m_stats.plain = head.plain;
    if (auto mismatch = mismatch_of(head, m_expected,
                                    "ndzip::mpi::nccl_communicator: the transfer from rank " +
                                        std::to_string(m_peer),
                                    m_label, "transfer"))
      fail(std::make_exception_ptr(*mismatch));
    else if (head.checksummed)
      fail(std::make_exception_ptr(
          stream_error("the transfer head announces segment checksums, which no transfer over "
                       "NCCL carries; the transfer was consumed and the View was not written")));
    const std::uint64_t segments = head.segments();
    m_payload_bytes.resize(segments);
    m_raw.assign(segments, false);
    if (head.plain) {
      m_stats.raw_segments = segments;
      for (std::uint64_t k = 0; k < segments; ++k) m_payload_bytes[k] = head.slab_bytes(k);
      return;
    }
    m_decoder.emplace(*m_memory, *m_codecs, head, m_values);
    m_heads_host = m_memory->staging_buffer(segments * segment_head_bytes);
    m_heads_device = m_memory->device_buffer(segments * segment_head_bytes);
    for (std::uint64_t k = 0; k < std::min(segments, nccl_heads_ahead); ++k)
      learn(k, m_opening_host.data() + transfer_head_bytes + k * segment_head_bytes);
  }

  // Reads segment k's head (host memory): its payload's size, which the rounds depend on.
  void learn(std::uint64_t k, const std::byte* at) {
    const std::uint64_t payload = announced_payload_bytes(at);
    const std::uint64_t raw = m_head->slab_bytes(k);
    segment_head seg;
    try {
      // The payload arrives only later: its size is checked against its slab here, its bytes
      // by the decoder.
      seg = read_segment_head(at, segment_head_bytes + std::min(payload, raw + 1), k, raw, false);
    } catch (const stream_error& e) {
      throw out_of_step("ndzip::mpi::nccl_communicator: receiving from rank " +
                        std::to_string(m_peer) + " into " + m_label + ": " + e.what());
    }
    m_payload_bytes[k] = seg.payload_bytes;
    m_raw[k] = seg.kind == segment_kind::raw;
  }

  // Queues the decoding of segment k (or the copy of its raw values) after its round.
  void decode(std::uint64_t k, gpu::event arrived_event) {
    const auto started = std::chrono::steady_clock::now();
    const ExecSpace& exec = m_memory->exec();
    gpu::order_after(gpu::stream_of(exec), arrived_event);
    const std::byte* payload = m_inboxes[k].data();
    if (m_raw[k]) {
      ++m_stats.raw_segments;
      copy_bytes<typename ExecSpace::memory_space, typename ExecSpace::memory_space>(
          exec, slab_bytes(k), payload, m_payload_bytes[k]);
    } else {
      m_decoder->queue(k, payload, m_payload_bytes[k]);
    }
    m_stats.codec_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  std::byte* slab_bytes(std::uint64_t k) const {
    return reinterpret_cast<std::byte*>(m_values + m_head->slab_offset(k));
  }

  // Later payloads are received unread: the rounds go on to the transfer's end.
  void fail(std::exception_ptr e) {
    if (!m_failure) m_failure = std::move(e);
    m_discarding = true;
  }

  nccl_operations& m_ops;
  std::shared_ptr<buffer_pool<ExecSpace>> m_memory;
  std::shared_ptr<codec_cache<ExecSpace>> m_codecs;
  T* m_values;
  int m_peer;
  std::string m_label;
  transfer_head m_expected;
  std::optional<transfer_head> m_head;
  bool m_discarding = false;
  std::exception_ptr m_failure;
  transfer_stats m_stats;
  typename buffer_pool<ExecSpace>::staging_lease m_opening_host, m_heads_host;
  typename buffer_pool<ExecSpace>::device_lease m_opening_device, m_heads_device;
  std::optional<segment_decoder<T, ExecSpace>> m_decoder;  // a compressed transfer's
  std::vector<std::uint64_t> m_payload_bytes;  // per segment, once its head has arrived
  std::vector<bool> m_raw;  // per segment, once its head has arrived: raw values
  std::vector<buffer> m_inboxes;  // per segment; empty where it goes into the View
  buffer m_discard;               // where refused payloads go
  std::vector<buffer> m_spent;    // smaller discard buffers the NCCL stream may still write
};

}  // namespace ndzip::mpi::detail
