// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The NCCL link's plumbing: NCCL's errors as ndzip::mpi::error, the stream (and its events) a
// communicator keeps for NCCL's operations, and one call's operations on it, ordered against
// the codec's instance through the GPU stream seam (detail/gpu/stream.hpp). Not part of the
// API.

#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "ndzip/mpi/detail/gpu/stream.hpp"
#include "ndzip/mpi/detail/nccl/api.hpp"
#include "ndzip/mpi/error.hpp"

namespace ndzip::mpi::detail {

// ncclInProgress is no failure: a non-blocking communicator's call still under way.
inline void check_nccl(ncclResult_t rc, const char* what, ncclComm_t comm) {
  if (rc != ncclSuccess && rc != ncclInProgress)
    throw error(std::string("ndzip::mpi (NCCL): ") + what + " failed: " + ncclGetErrorString(rc) +
                " (" + ncclGetLastError(comm) + "); the NCCL communicator may be out of step, "
                "abort it (ncclCommAbort)");
}

// Throws the communicator's asynchronous error, if any (a peer that failed, a broken link).
// Returns whether a call on a non-blocking communicator is still under way.
inline bool nccl_busy(ncclComm_t comm) {
  ncclResult_t state = ncclSuccess;
  check_nccl(ncclCommGetAsyncError(comm, &state), "ncclCommGetAsyncError", comm);
  check_nccl(state, "an operation on the communicator", comm);
  return state == ncclInProgress;
}

// The stream NCCL's operations go on and the events that order it, kept between calls (each
// costs microseconds to make, as much as a small transfer's round). One call uses them at a
// time. Released once the work queued on them is done (the runtime's rule); nothing here waits.
class nccl_stream {
 public:
  // The stream has the device's highest priority: NCCL's kernels copy with thread blocks, which
  // would otherwise queue behind the codec's (a grid of many blocks on every multiprocessor),
  // leaving the link idle while a segment compresses.
  nccl_stream() : m_stream(gpu::priority_stream()) {}
  ~nccl_stream() {
    for (gpu::event e : m_events) gpu::release(e);
    gpu::release(m_stream);
  }
  nccl_stream(const nccl_stream&) = delete;
  nccl_stream& operator=(const nccl_stream&) = delete;

  gpu::stream stream() const { return m_stream; }
  // Event `k` of a call, made on first use. A call's events are recorded afresh: waits queued
  // before a later record keep the earlier one.
  gpu::event event(std::size_t k) {
    while (m_events.size() <= k) m_events.push_back(gpu::new_event(false));
    return m_events[k];
  }

 private:
  gpu::stream m_stream;
  std::vector<gpu::event> m_events;
};

// One call's NCCL operations on the communicator's kept stream.
class nccl_operations {
 public:
  nccl_operations(ncclComm_t comm, nccl_stream& kept) : m_comm(comm), m_kept(kept) {}
  nccl_operations(const nccl_operations&) = delete;
  nccl_operations& operator=(const nccl_operations&) = delete;

  gpu::stream stream() const { return m_kept.stream(); }
  ncclComm_t comm() const { return m_comm; }

  // An event recorded on `on` now: done once the work queued there so far is.
  gpu::event mark(gpu::stream on) {
    const gpu::event e = m_kept.event(m_marks++);
    gpu::record(e, on);
    return e;
  }
  // `waiter` runs what is queued on it after this only once `on`'s work queued so far is done.
  void order_after(gpu::stream waiter, gpu::stream on) { gpu::order_after(waiter, mark(on)); }

  // Waits on the host until `e` is done, reporting the communicator's asynchronous errors
  // meanwhile (NCCL's kernels never finish after a peer failed), every 1024th look.
  void wait(gpu::event e) const {
    for (unsigned looks = 0; !gpu::done(e); ++looks) {
      if (looks % 1024 == 1023) {
        nccl_busy(m_comm);
        std::this_thread::yield();
      }
    }
  }

  // Opens a group of NCCL calls, closed by close_group().
  void open_group() { check_nccl(ncclGroupStart(), "ncclGroupStart", m_comm); }
  // Closes the group: its operations are queued on the stream. A non-blocking communicator's
  // launch is waited for here, before the next call on it.
  void close_group() {
    check_nccl(ncclGroupEnd(), "ncclGroupEnd", m_comm);
    while (nccl_busy(m_comm)) std::this_thread::yield();
  }
  // Queue a send or a receive of `bytes` on the stream; return `bytes` (for the stats).
  std::size_t send(const void* from, std::size_t bytes, int peer) {
    check_nccl(ncclSend(from, bytes, ncclUint8, peer, m_comm, stream()), "ncclSend", m_comm);
    return bytes;
  }
  std::size_t recv(void* to, std::size_t bytes, int peer) {
    check_nccl(ncclRecv(to, bytes, ncclUint8, peer, m_comm, stream()), "ncclRecv", m_comm);
    return bytes;
  }
  // Queues a copy of `bytes` on the stream (between host-pinned and device memory).
  void copy(void* to, const void* from, std::size_t bytes) {
    gpu::copy_async(to, from, bytes, stream());
  }

 private:
  ncclComm_t m_comm;
  nccl_stream& m_kept;
  std::size_t m_marks = 0;  // events of the kept stream used by this call
};

}  // namespace ndzip::mpi::detail
