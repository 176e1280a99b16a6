// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The state of one ndzip::mpi send or receive (ndzip/mpi.hpp): compression and staging of the
// segments, the MPI requests, and the checks on arrival. Not part of the API.

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "ndzip/compressor.hpp"
#include "ndzip/error.hpp"
#include "ndzip/mpi/gpu_aware.hpp"
#include "ndzip/mpi/matching.hpp"
#include "ndzip/mpi/scratch.hpp"
#include "ndzip/mpi/slab_codec.hpp"
#include "ndzip/mpi/wire_format.hpp"

namespace ndzip::mpi {

// What a transfer put on the wire, or took from it.
struct transfer_stats {
  std::uint64_t raw_bytes = 0;     // the View's values
  std::uint64_t wire_bytes = 0;    // all messages, heads included
  std::uint64_t segments = 0;      // segments of the transfer
  std::uint64_t raw_segments = 0;  // of which sent as raw values (their stream would not shrink)
  // Host wall time spent compressing and staging (sender), or checking, copying and decoding
  // (receiver): the rest of a transfer's time is spent on the wire or waiting for it.
  double codec_seconds = 0;
};

namespace detail {

// The grid segment k's slab is compressed with (slab_codec.hpp).
inline slab_shape slab_of(const transfer_head& head, std::uint64_t k) {
  return squeeze(static_cast<int>(head.dims), {head.rows_of(k), head.extents[1], head.extents[2]});
}

// Queues on `exec` a copy of `bytes` bytes from `from` (in FromSpace) to `to` (in ToSpace).
template <class ToSpace, class FromSpace, class ExecSpace>
void copy_bytes(const ExecSpace& exec, std::byte* to, const std::byte* from, std::size_t bytes) {
  Kokkos::View<std::byte*, ToSpace, Kokkos::MemoryUnmanaged> destination(to, bytes);
  Kokkos::View<const std::byte*, FromSpace, Kokkos::MemoryUnmanaged> source(from, bytes);
  Kokkos::deep_copy(exec, destination, source);
}

// Copies `bytes` bytes from `from` (the execution space's memory) to `to` (its staging space),
// or back (copy_from_staging); queued on `exec` where the spaces differ (fenced with `fence`),
// a plain copy where they are the same.
template <class ExecSpace>
void copy_to_staging(const ExecSpace& exec, std::byte* to, const std::byte* from, std::size_t bytes,
                     bool fence) {
  if constexpr (staging<ExecSpace>::in_place) {
    (void)exec;
    (void)fence;
    if (bytes > 0) std::memcpy(to, from, bytes);
  } else {
    copy_bytes<typename staging<ExecSpace>::space, typename ExecSpace::memory_space>(exec, to, from,
                                                                                     bytes);
    if (fence) exec.fence();
  }
}

template <class ExecSpace>
void copy_from_staging(const ExecSpace& exec, std::byte* to, const std::byte* from,
                       std::size_t bytes, bool fence) {
  if constexpr (staging<ExecSpace>::in_place) {
    (void)exec;
    (void)fence;
    if (bytes > 0) std::memcpy(to, from, bytes);
  } else {
    copy_bytes<typename ExecSpace::memory_space, typename staging<ExecSpace>::space>(exec, to, from,
                                                                                     bytes);
    if (fence) exec.fence();
  }
}

// Copies `bytes` bytes between the values and a direct-path message (wire<ExecSpace>::space),
// queued on `exec`.
template <class ExecSpace>
void copy_to_wire(const ExecSpace& exec, std::byte* to, const std::byte* from, std::size_t bytes) {
  copy_bytes<typename wire<ExecSpace>::space, typename ExecSpace::memory_space>(exec, to, from,
                                                                                bytes);
}

template <class ExecSpace>
void copy_from_wire(const ExecSpace& exec, std::byte* to, const std::byte* from,
                    std::size_t bytes) {
  copy_bytes<typename ExecSpace::memory_space, typename wire<ExecSpace>::space>(exec, to, from,
                                                                                bytes);
}

// Sets a flag in host memory from the device, after the work queued before it.
struct raise_flag {
  std::uint32_t* flag;
  KOKKOS_FUNCTION void operator()(int) const {
    *reinterpret_cast<volatile std::uint32_t*>(flag) = 1;
  }
};

// Waits for the work queued on `exec` (the staging copies of a segment), calling MPI meanwhile
// so that the segments already posted (`requests`) move: a transport that copies through shared
// memory moves bytes only inside MPI calls, so a plain fence would stop the wire while the copy
// engine works. Where the device cannot write to the staging memory (Kokkos 3), a plain fence.
template <class ExecSpace>
void fence_progressing(scratch<ExecSpace>& memory, std::vector<MPI_Request>& requests) {
  const ExecSpace& exec = memory.exec();
  using staging_space = typename staging<ExecSpace>::space;
  int done = 1;
  if (!requests.empty())
    check(
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
        "MPI_Testall");
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, staging_space>::accessible) {
    if (!done) {
      const auto flag_memory = memory.staging_buffer(sizeof(std::uint32_t));
      auto* flag = reinterpret_cast<std::uint32_t*>(flag_memory.data());
      *reinterpret_cast<volatile std::uint32_t*>(flag) = 0;
      Kokkos::parallel_for("ndzip::mpi staged", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
                           raise_flag{flag});
      while (!done && *reinterpret_cast<volatile std::uint32_t*>(flag) == 0)
        check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done,
                          MPI_STATUSES_IGNORE),
              "MPI_Testall");
    }
  }
  exec.fence();
}

#ifdef NDZIP_MPI_FAULT_INJECTION
// Tests only (mpi/tests define this for the whole test binary): the next send fails, as an
// allocation or the codec could, just before it compresses segment `send_fault_at()` (-1: no
// fault), and clears the fault.
inline std::atomic<long long>& send_fault_at() {
  static std::atomic<long long> segment{-1};
  return segment;
}
#endif

// A send or a receive in progress.
class transfer {
 public:
  virtual ~transfer() = default;
  // Advances the transfer; returns true once it is complete. With `block`, returns only then.
  // Throws what went wrong (once; the transfer is then complete).
  virtual bool progress(bool block) = 0;
  // Its request is destroyed before completion (ndzip/mpi.hpp "Aliasing and lifetimes"): by
  // default the transfer completes, and what went wrong goes to standard error, since a
  // destructor has nobody to throw to. Called with MPI not yet finalised.
  virtual void abandon() noexcept {
    try {
      progress(true);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ndzip::mpi: a request destroyed before it completed failed: %s\n",
                   e.what());
    }
  }
  const transfer_stats& stats() const { return m_stats; }

 protected:
  transfer_stats m_stats;
};

template <class T, int Dims, class ExecSpace>
class send_transfer final : public transfer {
 public:
  using memory_space = typename ExecSpace::memory_space;

  // Compresses and posts every message before it returns (so that the messages of two
  // transfers to one peer on one tag never interleave); `values` (C order, `extents`) must stay
  // valid until then only: `keep` holds a packed copy where there is one. `direct`: device
  // buffers go to MPI (options::path), else host staging.
  send_transfer(std::shared_ptr<scratch<ExecSpace>> memory, const T* values,
                const std::array<std::uint64_t, 3>& extents, Kokkos::View<T*, memory_space> keep,
                int dest, int tag, MPI_Comm comm, std::size_t segment_bytes, bool checksum,
                bool direct)
      : m_keep(std::move(keep)) {
    direct = direct && !staging<ExecSpace>::in_place;
    const ExecSpace& exec = memory->exec();
    transfer_head head;
    head.type = element_code_of<T>();
    head.dims = Dims;
    head.checksummed = checksum;
    head.extents = extents;
    const std::uint64_t row_bytes = std::max<std::uint64_t>(head.row_bytes(), 1);
    const std::uint64_t fitting = std::max<std::uint64_t>(
        1, std::min<std::uint64_t>(std::max<std::uint64_t>(segment_bytes, smallest_segment_bytes),
                                   largest_message) /
               row_bytes);
    // Whole rows of smallest_segment_bytes at least (receivers refuse fewer).
    head.segment_rows = std::max<std::uint64_t>(
        1, std::min(std::max(fitting, head.fewest_segment_rows()), extents[0]));
    if (head.segments() > 0 && row_bytes > largest_message)
      throw std::invalid_argument("ndzip::mpi: a row of the slowest dimension of " +
                                  head.describe() + " holds " + std::to_string(row_bytes) +
                                  " bytes, more than one message carries (" +
                                  std::to_string(largest_message) + ")");
    const std::uint64_t segments = head.segments();
    m_stats.raw_bytes = head.extents[0] * head.row_bytes();
    m_stats.segments = segments;

    const std::size_t row_elements = head.extents[1] * head.extents[2];
    std::lock_guard<std::mutex> lock(matching_mutex());
    try {
      for (std::uint64_t k = 0; k == 0 || k < segments; ++k) {
        const std::size_t offset = k == 0 ? transfer_head_bytes : 0;
        std::size_t message_bytes = offset;
        std::byte* message = nullptr;
        if (segments == 0) {
          m_messages.push_back(memory->staging_buffer(offset));
          message = m_messages.back().data();
          write_transfer_head(head, message);
        } else {
#ifdef NDZIP_MPI_FAULT_INJECTION
          if (send_fault_at().load() == static_cast<long long>(k)) {
            send_fault_at() = -1;
            throw std::runtime_error("ndzip::mpi: fault injected before segment " +
                                     std::to_string(k));
          }
#endif
          const std::uint64_t raw = head.rows_of(k) * head.row_bytes();
          const T* slab = values + k * head.segment_rows * row_elements;
          const slab_shape shape = slab_of(head, k);
          const bool compressible = holds_hypercube<T>(shape);
          const std::size_t bound =
              compressible ? with_slab_codec<T>(*memory, shape,
                                                [](auto& codec) { return codec.size_bound(); })
                           : 0;
          const std::size_t capacity =
              offset + segment_head_bytes + std::max<std::size_t>(bound, raw);
          if (direct) {
            m_wire_messages.push_back(memory->wire_buffer(capacity));
            message = m_wire_messages.back().data();
          } else {
            m_messages.push_back(memory->staging_buffer(capacity));
            message = m_messages.back().data();
          }
          std::byte* payload = message + offset + segment_head_bytes;
          segment_head segment{segment_kind::stream, k, 0};
          const auto started = std::chrono::steady_clock::now();
          device_lease stream;  // held until the copy queued from it is done
          segment.payload_bytes =
              compressible
                  ? with_slab_codec<T>(*memory, shape,
                                       [&](auto& codec) {
                                         return compress_slab(*memory, codec, slab, payload, bound,
                                                              raw, stream, direct);
                                       })
                  : raw;
          const auto* slab_bytes = reinterpret_cast<const std::byte*>(slab);
          if (segment.payload_bytes >= raw) {
            segment.kind = segment_kind::raw;
            segment.payload_bytes = raw;
            if (direct)
              copy_to_wire(exec, payload, slab_bytes, raw);
            else
              copy_to_staging(exec, payload, slab_bytes, raw, false);
            ++m_stats.raw_segments;
          }
          if (direct) {
            write_heads_on_device(*memory, head, segment, checksum, message, offset);
          } else {
            if constexpr (!staging<ExecSpace>::in_place) fence_progressing(*memory, m_requests);
            if (k == 0) write_transfer_head(head, message);
            write_segment_head(segment, checksum, message + offset);
          }
          m_stats.codec_seconds +=
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
          message_bytes += segment_head_bytes + segment.payload_bytes;
        }
        MPI_Request request;
        check(MPI_Isend(message, static_cast<int>(message_bytes), MPI_BYTE, dest, tag, comm,
                        &request),
              "MPI_Isend");
        m_requests.push_back(request);
        m_stats.wire_bytes += message_bytes;
      }
    } catch (...) {
      exec.fence();  // no copy may still write into a staging buffer that goes back now
      give_up(segments, dest, tag, comm);
      throw;
    }
  }

  ~send_transfer() override {
    // A destroyed request still completes: MPI must not read freed buffers. After MPI_Finalize
    // nothing reads them any more, and no MPI call may be made.
    if (!m_requests.empty() && !mpi_finalized())
      MPI_Waitall(static_cast<int>(m_requests.size()), m_requests.data(), MPI_STATUSES_IGNORE);
  }

  bool progress(bool block) override {
    if (m_requests.empty()) return true;
    int done = 0;
    if (block) {
      check(
          MPI_Waitall(static_cast<int>(m_requests.size()), m_requests.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
      done = 1;
    } else {
      check(MPI_Testall(static_cast<int>(m_requests.size()), m_requests.data(), &done,
                        MPI_STATUSES_IGNORE),
            "MPI_Testall");
    }
    if (done) {
      m_requests.clear();
      m_messages.clear();
      m_wire_messages.clear();
      m_keep = {};
    }
    return done != 0;
  }

 private:
  // After a failure (an allocation, the codec, MPI) part way through the constructor: once
  // message 0 is posted, the receiver waits for every segment it announces, so each one not
  // yet posted goes out empty (the receiver reports it as given up by the sender: no segment is
  // shorter than its head) instead of leaving the receiver hanging; then every posted message
  // completes before its buffer is freed.
  void give_up(std::uint64_t segments, int dest, int tag, MPI_Comm comm) noexcept {
    static const std::byte nothing{};
    for (std::uint64_t k = m_requests.size(); k > 0 && k < segments; ++k) {
      MPI_Request request;
      if (MPI_Isend(&nothing, 0, MPI_BYTE, dest, tag, comm, &request) != MPI_SUCCESS) break;
      m_requests.push_back(request);
    }
    if (!m_requests.empty())
      MPI_Waitall(static_cast<int>(m_requests.size()), m_requests.data(), MPI_STATUSES_IGNORE);
    m_requests.clear();
  }

  using device_lease = typename scratch<ExecSpace>::device_lease;

  // Compresses a slab into `payload` (host staging) and returns the stream size; a stream of
  // `raw` bytes or more (not smaller than the values, which travel instead) may be left out of
  // `payload`. On a device the stream is written into `stream` and its copy to `payload` is
  // queued on the instance: the caller fences before it reads `payload` or drops `stream`.
  template <class Codec>
  static std::size_t compress_slab(scratch<ExecSpace>& memory, Codec& codec, const T* slab,
                                   std::byte* payload, std::size_t bound, std::size_t raw,
                                   device_lease& stream, bool direct) {
    if constexpr (staging<ExecSpace>::in_place) {
      (void)memory;
      (void)raw;
      (void)stream;
      (void)direct;
      return codec.compress_raw(slab, payload, bound);
    } else {
      // On the direct path the payload is in device memory: the stream is written in place.
      if (direct) return codec.compress_raw(slab, payload, bound);
      stream = memory.device_buffer(bound);
      const std::size_t size = codec.compress_raw(slab, stream.data(), bound);
      // A stream that is not smaller is not staged: the values go instead (one copy of the
      // slab over the host link, not two). The copy is queued: the caller waits for it.
      if (size < raw) copy_to_staging(memory.exec(), payload, stream.data(), size, false);
      return size;
    }
  }

  // Direct path: the heads of a message in device memory are written on the host and copied in
  // front of its payload (with `checksum`, the payload is copied to the host first, to be
  // hashed); returns once the message is complete in device memory.
  void write_heads_on_device(scratch<ExecSpace>& memory, const transfer_head& head,
                             const segment_head& segment, bool checksum, std::byte* message,
                             std::size_t offset) {
    const ExecSpace& exec = memory.exec();
    const std::size_t head_bytes = offset + segment_head_bytes;
    const auto heads = memory.staging_buffer(head_bytes + (checksum ? segment.payload_bytes : 0));
    if (checksum) {
      copy_to_staging(exec, heads.data() + head_bytes, message + head_bytes, segment.payload_bytes,
                      false);
      fence_progressing(memory, m_requests);
    }
    if (offset > 0) write_transfer_head(head, heads.data());
    write_segment_head(segment, checksum, heads.data() + offset);
    copy_from_staging(exec, message, heads.data(), head_bytes, false);
    fence_progressing(memory, m_requests);
  }

  Kokkos::View<T*, memory_space> m_keep;
  std::vector<typename scratch<ExecSpace>::staging_lease> m_messages;
  std::vector<typename scratch<ExecSpace>::wire_lease> m_wire_messages;  // on the direct path
  std::vector<MPI_Request> m_requests;
};

template <class T, int Dims, class ExecSpace>
class recv_transfer final : public transfer, private message_sink {
 public:
  using memory_space = typename ExecSpace::memory_space;

  // Receives into `values` (C order, `extents`, in memory_space); `finish` runs once every
  // segment is decoded (copies a packed result into a strided View, say). `label` names the
  // View in errors. `direct`: MPI receives into device buffers (options::path), else into
  // host staging. `require_checksum`: a message without segment checksums is refused
  // (options::checksum). The receive is entered in the process's receive queue now, so that it
  // matches before any receive posted after it (matching.hpp).
  recv_transfer(std::shared_ptr<scratch<ExecSpace>> memory, T* values,
                const std::array<std::uint64_t, 3>& extents, std::function<void()> finish,
                std::string label, int source, int tag, MPI_Comm comm, bool direct,
                bool require_checksum)
      : m_memory(std::move(memory)),
        m_direct(direct && !staging<ExecSpace>::in_place),
        m_require_checksum(require_checksum),
        m_exec(m_memory->exec()),
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
  using staging_lease = typename scratch<ExecSpace>::staging_lease;
  using device_lease = typename scratch<ExecSpace>::device_lease;
  using wire_lease = typename scratch<ExecSpace>::wire_lease;

  // A segment handed over by the queue: in host staging or (direct path) device memory, at
  // `offset` (message 0 holds the transfer head before segment 0), received or still arriving.
  struct arrival {
    std::uint64_t index = 0;
    staging_lease staged;
    wire_lease wired;
    std::size_t offset = 0, bytes = 0;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  // Decodes the segments that have arrived, in order; once the transfer has handed over every
  // message and all are decoded, checks the device's outcomes and leaves the queue. Returns
  // whether anything moved. Called with matching_mutex() held.
  bool step() {
    bool moved = false;
    try {
      if (!receive_queue::matched(m_ticket) || receive_queue::owed(m_ticket) > 0)
        moved = receives().poll(m_ticket);
    } catch (...) {
      // MPI failed to probe: what the transfer is still owed cannot be taken.
      fail(std::current_exception());
      finish_queued();
      return true;
    }
    while (!m_arrivals.empty()) {
      arrival& a = m_arrivals.front();
      if (a.request != MPI_REQUEST_NULL) {
        int arrived = 0;
        if (MPI_Test(&a.request, &arrived, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
          fail(std::make_exception_ptr(error("ndzip::mpi: MPI_Test failed on segment " +
                                             std::to_string(a.index))));
          a.request = MPI_REQUEST_NULL;
        } else if (!arrived) {
          break;
        }
      }
      moved = true;
      if (!m_discarding) {
        try {
          decode(a.index, (m_direct ? a.wired.data() : a.staged.data()) + a.offset, a.bytes);
        } catch (...) {
          fail(std::current_exception());
        }
      }
      // A device's queued copy or decoder may still read the buffer: kept until settled.
      if constexpr (!staging<ExecSpace>::in_place) m_read_by_device.push_back(std::move(a));
      m_arrivals.pop_front();
    }
    if (receive_queue::matched(m_ticket) && receive_queue::owed(m_ticket) == 0 &&
        m_arrivals.empty()) {
      finish_queued();
      moved = true;
    }
    return moved;
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
    if (m_failure) {
      const std::exception_ptr failure = std::exchange(m_failure, nullptr);
      const std::string where = "ndzip::mpi: receiving from rank " + std::to_string(m_source) +
                                " (tag " + std::to_string(m_tag) + ") into " + m_label + ": ";
      try {
        std::rethrow_exception(failure);
      } catch (const mismatch_error&) {
        throw;  // names rank, tag and View already
      } catch (const stream_error& e) {
        throw stream_error(where + e.what());
      } catch (const error& e) {
        throw error(where + e.what());
      }
    }
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
      const std::byte* head_bytes = nullptr;  // the transfer head in host memory
      staging_lease head_copy;
      if (m_direct) {
        a.wired = m_memory->wire_buffer(count);
        check(MPI_Mrecv(a.wired.data(), static_cast<int>(count), MPI_BYTE, &message,
                        MPI_STATUS_IGNORE),
              "MPI_Mrecv");
        head_copy = m_memory->staging_buffer(std::min(count, transfer_head_bytes));
        copy_to_staging(m_exec, head_copy.data(), a.wired.data(), head_copy.size(), true);
        head_bytes = head_copy.data();
      } else {
        a.staged = m_memory->staging_buffer(count);
        check(MPI_Mrecv(a.staged.data(), static_cast<int>(count), MPI_BYTE, &message,
                        MPI_STATUS_IGNORE),
              "MPI_Mrecv");
        head_bytes = a.staged.data();
      }
      m_stats.wire_bytes = count;
      const transfer_head head = read_transfer_head(head_bytes, count);
      const std::uint64_t further = head.segments() > 1 ? head.segments() - 1 : 0;
      m_taken = 1;
      if (head.type != m_expected.type || head.dims != m_expected.dims ||
          head.extents != m_expected.extents) {
        fail(std::make_exception_ptr(mismatch_error(
            "ndzip::mpi: the message from rank " + std::to_string(m_source) + " (tag " +
            std::to_string(m_tag) + ") holds " + head.describe() + ", but the " + m_label +
            " it is received into is " + m_expected.describe() +
            "; the message was consumed and the View was not written")));
        return further;
      }
      if (m_require_checksum && !head.checksummed && head.segments() > 0) {
        fail(std::make_exception_ptr(mismatch_error(
            "ndzip::mpi: the message from rank " + std::to_string(m_source) + " (tag " +
            std::to_string(m_tag) + ") for the " + m_label +
            " carries no segment checksums, and this receive requires them "
            "(options::checksum); the message was consumed and the View was not written")));
        return further;
      }
      m_head = head;
      m_stats.raw_bytes = head.extents[0] * head.row_bytes();
      m_stats.segments = head.segments();
      if (head.segments() == 0) {
        if (count != transfer_head_bytes)
          fail(std::make_exception_ptr(
              stream_error("the message for the empty View holds " +
                           std::to_string(count - transfer_head_bytes) +
                           " bytes after its head")));
        return 0;
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

  void take_next(MPI_Message& message, const MPI_Status& status) noexcept override {
    const std::uint64_t k = m_taken++;
    try {
      const std::size_t count = message_bytes(status);
      if (m_discarding) {
        discard(message, count);
        return;
      }
      const transfer_head& head = *m_head;
      const std::uint64_t room = segment_head_bytes + head.rows_of(k) * head.row_bytes();
      if (count > room) {
        discard(message, count);
        fail(std::make_exception_ptr(stream_error(
            "segment " + std::to_string(k) + " of the received message is damaged: " +
            std::to_string(count) + " bytes, more than the " + std::to_string(room) +
            " that its head and the values of its slab take")));
        return;
      }
      m_stats.wire_bytes += count;
      arrival a;
      a.index = k;
      a.bytes = count;
      std::byte* into = nullptr;
      if (m_direct) {
        a.wired = m_memory->wire_buffer(count);
        into = a.wired.data();
      } else {
        a.staged = m_memory->staging_buffer(count);
        into = a.staged.data();
      }
      check(MPI_Imrecv(into, static_cast<int>(count), MPI_BYTE, &message, &a.request),
            "MPI_Imrecv");
      m_arrivals.push_back(std::move(a));
    } catch (...) {
      fail(std::current_exception());
    }
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
    const transfer_head& head = *m_head;
    const std::uint64_t raw = head.rows_of(k) * head.row_bytes();
    // Direct path: the segment is in device memory; its head (the whole segment, to hash it, in
    // a checksummed transfer) is copied to the host to be checked.
    staging_lease host_copy;
    if (m_direct) {
      const std::size_t needed = head.checksummed ? bytes : std::min(bytes, segment_head_bytes);
      host_copy = m_memory->staging_buffer(needed);
      copy_to_staging(m_exec, host_copy.data(), segment, needed, true);
    }
    const segment_head seg =
        read_segment_head(m_direct ? host_copy.data() : segment, bytes, k, raw, head.checksummed);
    const std::byte* payload = segment + segment_head_bytes;
    T* slab = m_values + k * head.segment_rows * head.extents[1] * head.extents[2];
    auto* slab_bytes = reinterpret_cast<std::byte*>(slab);
    if (seg.kind == segment_kind::raw) {
      ++m_stats.raw_segments;
      if (m_direct)
        copy_from_wire(m_exec, slab_bytes, payload, raw);
      else
        copy_from_staging(m_exec, slab_bytes, payload, raw, false);
      return;
    }
    if constexpr (staging<ExecSpace>::in_place) {
      try {
        const std::size_t consumed = with_slab_codec<T>(
            *m_memory, slab_of(head, k),
            [&](auto& codec) { return codec.decompress_raw(payload, seg.payload_bytes, slab); });
        check_consumed(k, consumed, seg.payload_bytes);
      } catch (const stream_error& e) {
        throw in_segment(k, e);
      }
    } else {
      // Queued, not waited for: the host goes back to MPI for the next segment while the
      // device copies and decodes this one. settle() checks the outcome.
      device_lease stream;
      const std::byte* device_payload = payload;  // direct path: decoded where MPI put it
      if (!m_direct) {
        stream = m_memory->device_buffer(seg.payload_bytes);
        copy_from_staging(m_exec, stream.data(), payload, seg.payload_bytes, false);
        device_payload = stream.data();
      }
      if (m_outcomes.size() == 0)
        m_outcomes = m_memory->device_buffer(head.segments() * sizeof(decompress_outcome));
      auto* outcome = reinterpret_cast<decompress_outcome*>(m_outcomes.data()) + k;
      with_grid(slab_of(head, k), [&](const auto& grid) {
        constexpr int dims = std::decay_t<decltype(grid)>::dimensions;
        auto codec = m_memory->template codec<T, dims>(grid);
        try {
          // Refuses a stream shorter than its grid's smallest before anything is queued.
          codec->decompress_raw_async(device_payload, seg.payload_bytes, slab, outcome);
        } catch (const stream_error& e) {
          throw in_segment(k, e);
        }
        m_checks.push_back({k, seg.payload_bytes, [codec](const decompress_outcome& o) {
                              return codec->check_outcome(o);
                            }});
      });
      m_streams.push_back(std::move(stream));
    }
  }

  // A decoder's error, with the segment it was found in.
  static stream_error in_segment(std::uint64_t k, const stream_error& e) {
    return stream_error("segment " + std::to_string(k) + " of the received message: " + e.what());
  }

  static void check_consumed(std::uint64_t k, std::size_t consumed, std::size_t payload_bytes) {
    if (consumed != payload_bytes)
      throw stream_error("ndzip::mpi: segment " + std::to_string(k) +
                         " of the received message is damaged: its stream ends after " +
                         std::to_string(consumed) + " of its " + std::to_string(payload_bytes) +
                         " bytes");
  }

  // Device: waits for the copies and decoders queued by decode() and checks what the decoders
  // found.
  void settle() {
    if constexpr (!staging<ExecSpace>::in_place) {
      const auto started = std::chrono::steady_clock::now();
      // The outcomes' copy is queued after the decoders: one fence waits for both.
      std::vector<decompress_outcome> outcomes(m_checks.empty() ? 0 : m_head->segments());
      if (!outcomes.empty())
        copy_bytes<Kokkos::HostSpace, memory_space>(
            m_exec, reinterpret_cast<std::byte*>(outcomes.data()), m_outcomes.data(),
            outcomes.size() * sizeof(decompress_outcome));
      m_exec.fence();
      for (const auto& c : m_checks) {
        std::size_t consumed = 0;
        try {
          consumed = c.check(outcomes[c.segment]);
        } catch (const stream_error& e) {
          throw in_segment(c.segment, e);
        }
        check_consumed(c.segment, consumed, c.payload_bytes);
      }
      m_stats.codec_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }
  }

  // Waits for what may still read or write the transfer's buffers (MPI's receives, the
  // device's queued copies and decoders), then gives the buffers back.
  void drain() noexcept {
    for (auto& a : m_arrivals)
      if (a.request != MPI_REQUEST_NULL) MPI_Wait(&a.request, MPI_STATUS_IGNORE);
    if constexpr (!staging<ExecSpace>::in_place) {
      if (!m_checks.empty() || !m_read_by_device.empty()) {
        try {
          m_exec.fence();
        } catch (...) {
          // drain() runs in destructors and while another error is reported: a failing fence (a
          // device fault) has no caller to report to here; such faults are sticky, so the
          // caller's next call on the device reports it.
        }
      }
    }
    m_arrivals.clear();
    m_read_by_device.clear();
    m_checks.clear();
    m_streams.clear();
    m_outcomes = {};
  }

  std::shared_ptr<scratch<ExecSpace>> m_memory;
  bool m_direct;
  bool m_require_checksum;
  ExecSpace m_exec;
  T* m_values;
  std::function<void()> m_finish;
  std::string m_label;
  int m_source, m_tag;  // as posted, then the sender's
  transfer_head m_expected;
  std::optional<transfer_head> m_head;
  receive_queue::ticket m_ticket;
  bool m_queued = true;        // in the receive queue: not yet complete
  bool m_discarding = false;   // refused or failed: further messages are consumed unread
  bool m_finished = false;     // `finish` ran
  std::exception_ptr m_failure;
  std::uint64_t m_taken = 0;   // messages handed over so far
  std::deque<arrival> m_arrivals;
  std::vector<arrival> m_read_by_device;
  // Device: what decode() queued and settle() waits for: the stream buffers the decoders read,
  // where they write their outcomes (one per segment), and how to check each outcome.
  struct pending_check {
    std::uint64_t segment;
    std::size_t payload_bytes;
    std::function<std::size_t(const decompress_outcome&)> check;
  };
  std::vector<device_lease> m_streams;
  device_lease m_outcomes;
  std::vector<pending_check> m_checks;
};

}  // namespace detail
}  // namespace ndzip::mpi
