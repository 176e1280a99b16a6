// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The NCCL engine of ndzip::mpi (ndzip/mpi/nccl.hpp): the transfers of one call, each a sequence
// of NCCL operations in rounds (docs/FORMAT.md "NCCL transfers"). Not part of the API.
//
// NCCL matches a send with the peer's receive by their order alone, and the receive must name
// the send's byte count. So every transfer has the same rounds on both sides:
//   round 0       the opening: transfer head (64 bytes) and the heads of segments 0 and 1
//                 (32 bytes each, zeros where the View has fewer segments): 128 bytes
//   round k + 1   segment k's payload (stream or raw values), then the head of segment k + 2,
//                 for k = 0 .. segments - 1
// A plain transfer's rounds carry the values of segment k and no segment heads. A receiver
// learns each payload's size two rounds ahead of it, so that two rounds are queued on the
// stream while the host reads the heads of the next. All transfers of one call (a sendrecv)
// go round by round, each round one NCCL group: both directions progress together, and any
// number of ranks calling in step cannot wait on each other in a cycle.
//
// Streams: the NCCL operations go on the communicator's NCCL stream (nccl_lane.hpp), after the
// work queued on the instance before the call; a segment's payload after the instance has
// compressed it (an event per segment), a decoder after its payload's round (an event per
// round); the instance's work queued after the call runs after the call's NCCL operations. No
// buffer is given back to the scratch before the call's end, and the scratch's next user is the
// instance or a later call's lane, both ordered after this call's work.

#include <cuda_runtime.h>
#include <nccl.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ndzip/compressor.hpp"
#include "ndzip/error.hpp"
#include "ndzip/mpi/detail/nccl_lane.hpp"
#include "ndzip/mpi/detail/segment_pipeline.hpp"
#include "ndzip/mpi/detail/send_transfer.hpp"
#include "ndzip/mpi/detail/slab_codec.hpp"
#include "ndzip/mpi/detail/transport.hpp"
#include "ndzip/mpi/detail/wire_format.hpp"
#include "ndzip/mpi/error.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi::detail {

// Segment heads a receiver learns ahead of their payloads.
inline constexpr std::uint64_t nccl_heads_ahead = 2;
inline constexpr std::size_t nccl_opening_bytes =
    transfer_head_bytes + nccl_heads_ahead * segment_head_bytes;

// One transfer of a call: the host work before each of its rounds, the round's NCCL calls
// (inside the round's group) and what is queued after them.
class nccl_side {
 public:
  virtual ~nccl_side() = default;
  // Rounds of the transfer: a receiver knows them once round 0 has arrived (1 until then).
  virtual std::uint64_t rounds() const = 0;
  // Before round r's group: waits for what the round needs (a sender's compression).
  virtual void before(std::uint64_t r) = 0;
  // Round r's NCCL calls.
  virtual void post(std::uint64_t r) = 0;
  // After round r's group: queues on the lane what the host reads once the round has arrived.
  virtual void after(std::uint64_t r) = 0;
  // Then, `arrived_event` done once the round has arrived: queues on the instance what follows.
  virtual void follow(std::uint64_t r, cudaEvent_t arrived_event) = 0;
  // Round r has arrived: the host reads the heads it brought (a receiver).
  virtual void arrived(std::uint64_t r) = 0;
  // The transfer's outcome, once every round has been posted: throws what went wrong.
  virtual void finish() = 0;
  // Whether the host reads what arrives (a receiver): rounds are then posted only two ahead of
  // the last one read.
  virtual bool reads_arrivals() const = 0;
  virtual const transfer_stats& stats() const = 0;
  // The rank it goes to or comes from.
  virtual int peer() const = 0;
};

// Runs the rounds of `sides` on `lane` (see the top of this file), then orders the instance's
// later work after them and finishes every side (the first error is thrown, after all are).
template <class ExecSpace>
void run_rounds(nccl_lane& lane, const ExecSpace& exec, const std::vector<nccl_side*>& sides) {
  const cudaStream_t instance = exec.cuda_stream();
  lane.order_after(lane.stream(), instance);
  std::vector<cudaEvent_t> arrived_events;
  std::uint64_t read = 0;  // rounds whose arrival the host has read
  const bool reading =
      std::any_of(sides.begin(), sides.end(), [](nccl_side* s) { return s->reads_arrivals(); });
  std::exception_ptr failure;
  try {
    for (std::uint64_t r = 0;; ++r) {
      // Round r's receives take the payload whose head came in round r - 2 (in the opening for
      // the first two): rounds 0 .. r - 2 must have been read.
      const std::uint64_t needed = !reading || r == 0     ? 0
                                   : r > nccl_heads_ahead ? r - nccl_heads_ahead + 1
                                                          : 1;
      for (; read < needed; ++read) {
        lane.wait(arrived_events[read]);
        for (nccl_side* s : sides)
          if (read < s->rounds()) s->arrived(read);
      }
      std::vector<nccl_side*> active;
      for (nccl_side* s : sides)
        if (r < s->rounds()) active.push_back(s);
      if (active.empty()) break;
      for (nccl_side* s : active) s->before(r);
      lane.open_group();
      try {
        for (nccl_side* s : active) s->post(r);
      } catch (...) {
        ncclGroupEnd();  // the calls made so far are queued; the rounds stop here
        throw;
      }
      lane.close_group();
      for (nccl_side* s : active) s->after(r);
      arrived_events.push_back(lane.mark(lane.stream()));
      for (nccl_side* s : active) s->follow(r, arrived_events.back());
    }
  } catch (...) {
    failure = std::current_exception();
  }
  lane.order_after(instance, lane.stream());
  for (nccl_side* s : sides) {
    try {
      s->finish();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

// What a receiver says where the rounds can no longer be matched: the peer's later operations
// have no counterpart here.
inline stream_error out_of_step(const std::string& what) {
  return stream_error(what +
                      "; the sizes of the transfer's later NCCL messages are unknown, so the "
                      "NCCL communicator is out of step: abort it (ncclCommAbort)");
}

// The sending side of one transfer.
template <class T, int Dims, class ExecSpace>
class nccl_outgoing final : public nccl_side {
 public:
  nccl_outgoing(nccl_lane& lane, std::shared_ptr<scratch<ExecSpace>> memory, const T* values,
                const std::array<std::uint64_t, 3>& extents, int peer, bool plain,
                const options& opts)
      : m_lane(lane),
        m_memory(std::move(memory)),
        m_values(values),
        m_peer(peer),
        m_depth(std::max<std::size_t>(opts.pipeline_depth, 1)),
        m_raw_after_ratio(opts.raw_after_ratio) {
    const std::uint64_t values_bytes = extents[0] * extents[1] * extents[2] * sizeof(T);
    // Compressed: as through a GPU-aware MPI (transport.hpp). Plain: the largest segments, as
    // each NCCL operation costs a setup (16 MiB plain moved at 0.8x of one operation of the
    // whole View on two H200s).
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
      m_payload_bytes.resize(m_segments);
    }
  }

  std::uint64_t rounds() const override { return m_segments + 1; }
  const transfer_stats& stats() const override { return m_stats; }
  // Records `before` and `after` (events with timing) around the compression of the last
  // segment, if the transfer compresses: the time its receiver may need to decode it.
  void time_last_segment(cudaEvent_t before, cudaEvent_t after) {
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
      m_lane.copy(m_heads_device.data(), m_heads_host.data(), nccl_opening_bytes);
    } else if (!m_head.plain) {
      m_lane.order_after(m_lane.stream(), m_compressed[r - 1]);
      if (const std::uint64_t ahead = r - 1 + nccl_heads_ahead; ahead < m_segments)
        m_lane.copy(head_device(ahead), head_host(ahead), segment_head_bytes);
    }
    m_stats.codec_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  void post(std::uint64_t r) override {
    if (r == 0) {
      m_lane.send(m_heads_device.data(), nccl_opening_bytes, m_peer);
      m_stats.wire_bytes += nccl_opening_bytes;
      return;
    }
    const std::uint64_t k = r - 1;
    if (m_head.plain) {
      const std::uint64_t bytes = raw_bytes_of(k);
      m_lane.send(m_values + k * m_head.segment_rows * m_head.extents[1] * m_head.extents[2], bytes,
                  m_peer);
      m_stats.wire_bytes += bytes;
      return;
    }
    m_lane.send(m_assemblies[k].data() + segment_head_bytes, m_payload_bytes[k], m_peer);
    m_stats.wire_bytes += m_payload_bytes[k];
    if (const std::uint64_t ahead = k + nccl_heads_ahead; ahead < m_segments) {
      m_lane.send(head_device(ahead), segment_head_bytes, m_peer);
      m_stats.wire_bytes += segment_head_bytes;
    }
  }

  void after(std::uint64_t) override {}
  void follow(std::uint64_t, cudaEvent_t) override {}
  void arrived(std::uint64_t) override {}
  void finish() override {}
  bool reads_arrivals() const override { return false; }

 private:
  std::uint64_t raw_bytes_of(std::uint64_t k) const {
    return m_head.rows_of(k) * m_head.row_bytes();
  }
  // Segment k's head: in the opening for the first ones, after it for the others.
  std::size_t head_offset(std::uint64_t k) const {
    return k < nccl_heads_ahead ? transfer_head_bytes + k * segment_head_bytes
                                : nccl_opening_bytes + k * segment_head_bytes;
  }
  std::byte* head_host(std::uint64_t k) const { return m_heads_host.data() + head_offset(k); }
  std::byte* head_device(std::uint64_t k) const { return m_heads_device.data() + head_offset(k); }

  // Queues the compression of segment k on the instance and the finishing of its payload
  // (segment_pipeline.hpp), and records when they are done.
  void queue(std::uint64_t k) {
    const std::uint64_t raw = raw_bytes_of(k);
    const T* slab = m_values + k * m_head.segment_rows * m_head.extents[1] * m_head.extents[2];
    const slab_shape shape = slab_of(m_head, k);
    const segment_plan plan = plan_segment<T>(shape, raw, m_raw_from_now);
    m_assemblies.push_back(
        buffer(m_memory->device_buffer(segment_head_bytes + plan.payload_room)));
    const bool timed = k + 1 == m_segments && m_last_before != nullptr;
    if (timed) check_cuda(cudaEventRecord(m_last_before, m_memory->exec().cuda_stream()),
                          "cudaEventRecord");
    queue_segment_payload(*m_memory, *m_slots, k, shape, plan, slab, raw,
                          m_assemblies.back().data());
    if (timed) check_cuda(cudaEventRecord(m_last_after, m_memory->exec().cuda_stream()),
                          "cudaEventRecord");
    m_compressed.push_back(m_lane.mark(m_memory->exec().cuda_stream()));
    m_compressing.push_back(plan.compressed);
  }

  // Waits until segment k is compressed and writes its head on the host.
  void learn(std::uint64_t k) {
    const std::uint64_t payload = m_slots->wait(k, [] {});
    const std::uint64_t raw = raw_bytes_of(k);
    m_payload_bytes[k] = payload;
    if (payload == raw) ++m_stats.raw_segments;  // a stream is always smaller than its values
    // The data does not shrink enough to pay for the codec: the segments not queued yet go raw.
    if (m_compressing[k] &&
        static_cast<double>(payload) > m_raw_after_ratio * static_cast<double>(raw))
      m_raw_from_now = true;
    write_segment_head({payload == raw ? segment_kind::raw : segment_kind::stream, k, payload},
                       false, head_host(k));
  }

  nccl_lane& m_lane;
  std::shared_ptr<scratch<ExecSpace>> m_memory;
  const T* m_values;
  int m_peer;
  std::size_t m_depth;
  double m_raw_after_ratio;
  transfer_head m_head;
  std::uint64_t m_segments = 0, m_queued = 0, m_known = 0;
  bool m_raw_from_now = false;
  cudaEvent_t m_last_before = nullptr, m_last_after = nullptr;  // time_last_segment
  transfer_stats m_stats;
  typename scratch<ExecSpace>::staging_lease m_heads_host;  // opening, then segment heads
  typename scratch<ExecSpace>::device_lease m_heads_device;
  std::unique_ptr<segment_slots<ExecSpace>> m_slots;
  std::vector<buffer> m_assemblies;             // segment head (unused) and payload, per segment
  std::vector<cudaEvent_t> m_compressed;        // per segment, on the instance
  std::vector<bool> m_compressing;              // per segment: queued to the encoder
  std::vector<std::uint64_t> m_payload_bytes;  // per segment, once learned
};

// The receiving side of one transfer. A transfer of another type or extents than the View, or
// with checksums (no sender over NCCL writes them), is received to its end into a buffer that
// is read by nobody and refused then (mismatch_error, stream_error), as are payloads that do
// not decode exactly; a damaged head leaves the rounds unmatched (out_of_step).
template <class T, int Dims, class ExecSpace>
class nccl_incoming final : public nccl_side {
 public:
  nccl_incoming(nccl_lane& lane, std::shared_ptr<scratch<ExecSpace>> memory, T* values,
                const std::array<std::uint64_t, 3>& extents, int peer, std::string label)
      : m_lane(lane),
        m_memory(std::move(memory)),
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
      // One buffer for every refused payload: the lane writes them one after another.
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
      m_lane.recv(m_opening_device.data(), nccl_opening_bytes, m_peer);
      m_stats.wire_bytes += nccl_opening_bytes;
      return;
    }
    const std::uint64_t k = r - 1;
    std::byte* to = m_inboxes[k] ? m_inboxes[k].data() : slab_bytes(k);
    m_lane.recv(to, m_payload_bytes[k], m_peer);
    m_stats.wire_bytes += m_payload_bytes[k];
    if (const std::uint64_t ahead = k + nccl_heads_ahead;
        !m_head->plain && ahead < m_head->segments()) {
      m_lane.recv(m_heads_device.data() + ahead * segment_head_bytes, segment_head_bytes, m_peer);
      m_stats.wire_bytes += segment_head_bytes;
    }
  }

  void after(std::uint64_t r) override {
    if (r == 0) {
      m_lane.copy(m_opening_host.data(), m_opening_device.data(), nccl_opening_bytes);
      return;
    }
    if (const std::uint64_t ahead = r - 1 + nccl_heads_ahead;
        !m_head->plain && ahead < m_head->segments())
      m_lane.copy(m_heads_host.data() + ahead * segment_head_bytes,
                  m_heads_device.data() + ahead * segment_head_bytes, segment_head_bytes);
  }

  void follow(std::uint64_t r, cudaEvent_t arrived_event) override {
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
    if (!m_checks.empty() && !m_failure) {
      std::vector<decompress_outcome> outcomes(m_head->segments());
      const ExecSpace& exec = m_memory->exec();
      copy_bytes<Kokkos::HostSpace, typename ExecSpace::memory_space>(
          exec, reinterpret_cast<std::byte*>(outcomes.data()), m_outcomes.data(),
          outcomes.size() * sizeof(decompress_outcome));
      exec.fence();
      for (const auto& c : m_checks) {
        try {
          if (const std::size_t consumed = c.check(outcomes[c.segment]);
              consumed != m_payload_bytes[c.segment])
            throw stream_error("its stream ends after " + std::to_string(consumed) + " of its " +
                               std::to_string(m_payload_bytes[c.segment]) + " bytes");
        } catch (const stream_error& e) {
          fail(std::make_exception_ptr(
              stream_error("segment " + std::to_string(c.segment) + " is damaged: " + e.what())));
          break;
        }
      }
    }
    if (!m_failure) return;
    const std::string where = "ndzip::mpi::nccl_communicator: receiving from rank " +
                              std::to_string(m_peer) + " into " + m_label + ": ";
    try {
      std::rethrow_exception(m_failure);
    } catch (const mismatch_error&) {
      throw;
    } catch (const stream_error& e) {
      throw stream_error(where + e.what());
    }
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
    m_stats.raw_bytes = head.extents[0] * head.row_bytes();
    m_stats.segments = head.segments();
    m_stats.plain = head.plain;
    if (head.type != m_expected.type || head.dims != m_expected.dims ||
        head.extents != m_expected.extents)
      fail(std::make_exception_ptr(mismatch_error(
          "ndzip::mpi::nccl_communicator: the transfer from rank " + std::to_string(m_peer) +
          " holds " + head.describe() + ", but the " + m_label + " it is received into is " +
          m_expected.describe() + "; the transfer was consumed and the View was not written")));
    else if (head.checksummed)
      fail(std::make_exception_ptr(
          stream_error("the transfer head announces segment checksums, which no transfer over "
                       "NCCL carries; the transfer was consumed and the View was not written")));
    const std::uint64_t segments = head.segments();
    m_payload_bytes.resize(segments);
    m_raw.assign(segments, false);
    if (head.plain) {
      m_stats.raw_segments = segments;
      for (std::uint64_t k = 0; k < segments; ++k)
        m_payload_bytes[k] = head.rows_of(k) * head.row_bytes();
      return;
    }
    m_heads_host = m_memory->staging_buffer(segments * segment_head_bytes);
    m_heads_device = m_memory->device_buffer(segments * segment_head_bytes);
    for (std::uint64_t k = 0; k < std::min(segments, nccl_heads_ahead); ++k)
      learn(k, m_opening_host.data() + transfer_head_bytes + k * segment_head_bytes);
  }

  // Reads segment k's head (host memory): its payload's size, which the rounds depend on.
  void learn(std::uint64_t k, const std::byte* at) {
    std::uint64_t payload = 0;  // bytes 16-23, little endian
    for (int b = 7; b >= 0; --b)
      payload = payload << 8 | std::to_integer<std::uint64_t>(at[16 + b]);
    const std::uint64_t raw = m_head->rows_of(k) * m_head->row_bytes();
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
  void decode(std::uint64_t k, cudaEvent_t arrived_event) {
    const auto started = std::chrono::steady_clock::now();
    const ExecSpace& exec = m_memory->exec();
    nccl_lane::order_after(exec.cuda_stream(), arrived_event);
    const std::byte* payload = m_inboxes[k].data();
    if (m_raw[k]) {
      ++m_stats.raw_segments;
      copy_bytes<typename ExecSpace::memory_space, typename ExecSpace::memory_space>(
          exec, slab_bytes(k), payload, m_payload_bytes[k]);
    } else {
      if (m_outcomes.size() == 0)
        m_outcomes = m_memory->device_buffer(m_head->segments() * sizeof(decompress_outcome));
      auto* outcome = reinterpret_cast<decompress_outcome*>(m_outcomes.data()) + k;
      with_grid(slab_of(*m_head, k), [&](const auto& grid) {
        constexpr int dims = std::decay_t<decltype(grid)>::dimensions;
        auto codec = m_memory->template codec<T, dims>(grid);
        try {
          codec->decompress_raw_async(payload, m_payload_bytes[k],
                                      reinterpret_cast<T*>(slab_bytes(k)), outcome);
        } catch (const stream_error& e) {
          throw stream_error("segment " + std::to_string(k) + " is damaged: " + e.what());
        }
        m_checks.push_back({k, [codec](const decompress_outcome& o) {
                              return codec->check_outcome(o);
                            }});
      });
    }
    m_stats.codec_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  std::byte* slab_bytes(std::uint64_t k) const {
    return reinterpret_cast<std::byte*>(m_values + k * m_head->segment_rows * m_head->extents[1] *
                                                       m_head->extents[2]);
  }

  // Later payloads are received unread: the rounds go on to the transfer's end.
  void fail(std::exception_ptr e) {
    if (!m_failure) m_failure = std::move(e);
    m_discarding = true;
  }

  struct pending_check {
    std::uint64_t segment;
    std::function<std::size_t(const decompress_outcome&)> check;
  };

  nccl_lane& m_lane;
  std::shared_ptr<scratch<ExecSpace>> m_memory;
  T* m_values;
  int m_peer;
  std::string m_label;
  transfer_head m_expected;
  std::optional<transfer_head> m_head;
  bool m_discarding = false;
  std::exception_ptr m_failure;
  transfer_stats m_stats;
  typename scratch<ExecSpace>::staging_lease m_opening_host, m_heads_host;
  typename scratch<ExecSpace>::device_lease m_opening_device, m_heads_device, m_outcomes;
  std::vector<std::uint64_t> m_payload_bytes;  // per segment, once its head has arrived
  std::vector<bool> m_raw;  // per segment, once its head has arrived: raw values
  std::vector<buffer> m_inboxes;  // per segment; empty where it goes into the View
  buffer m_discard;               // where refused payloads go
  std::vector<buffer> m_spent;    // smaller discard buffers the lane may still write
  std::vector<pending_check> m_checks;
};

}  // namespace ndzip::mpi::detail
