// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The CUDA stream NCCL transfers queue their operations on, the events that order it against
// the codec's instance, and NCCL's and CUDA's errors as ndzip::mpi::error. Not part of the API.

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "ndzip/mpi/error.hpp"

namespace ndzip::mpi::detail {

inline void check_cuda(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw error(std::string("ndzip::mpi (NCCL): ") + what + " failed: " + cudaGetErrorString(rc));
}

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
// time. Released once the work queued on them is done (CUDA's rule); nothing here waits.
class nccl_stream {
 public:
  // The stream has the device's highest priority: NCCL's kernels copy with thread blocks, which
  // would otherwise queue behind the codec's (a grid of many blocks on every multiprocessor),
  // leaving the link idle while a segment compresses.
  nccl_stream() {
    int least = 0, greatest = 0;
    check_cuda(cudaDeviceGetStreamPriorityRange(&least, &greatest),
               "cudaDeviceGetStreamPriorityRange");
    check_cuda(cudaStreamCreateWithPriority(&m_stream, cudaStreamNonBlocking, greatest),
               "cudaStreamCreateWithPriority");
  }
  ~nccl_stream() {
    for (cudaEvent_t e : m_events) cudaEventDestroy(e);
    cudaStreamDestroy(m_stream);
  }
  nccl_stream(const nccl_stream&) = delete;
  nccl_stream& operator=(const nccl_stream&) = delete;

  cudaStream_t stream() const { return m_stream; }
  // Event `k` of a call, made on first use. A call's events are recorded afresh: waits queued
  // before a later record keep the earlier one.
  cudaEvent_t event(std::size_t k) {
    while (m_events.size() <= k) {
      cudaEvent_t e = nullptr;
      check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
      m_events.push_back(e);
    }
    return m_events[k];
  }

 private:
  cudaStream_t m_stream = nullptr;
  std::vector<cudaEvent_t> m_events;
};

// One call's NCCL operations on the communicator's stream.
class nccl_lane {
 public:
  nccl_lane(ncclComm_t comm, nccl_stream& kept) : m_comm(comm), m_kept(kept) {}
  nccl_lane(const nccl_lane&) = delete;
  nccl_lane& operator=(const nccl_lane&) = delete;

  cudaStream_t stream() const { return m_kept.stream(); }
  ncclComm_t comm() const { return m_comm; }

  // An event recorded on `on` now: done once the work queued there so far is.
  cudaEvent_t mark(cudaStream_t on) {
    const cudaEvent_t e = m_kept.event(m_marks++);
    check_cuda(cudaEventRecord(e, on), "cudaEventRecord");
    return e;
  }
  // `waiter` runs what is queued on it after this only once `e` is done.
  static void order_after(cudaStream_t waiter, cudaEvent_t e) {
    check_cuda(cudaStreamWaitEvent(waiter, e, 0), "cudaStreamWaitEvent");
  }
  void order_after(cudaStream_t waiter, cudaStream_t on) { order_after(waiter, mark(on)); }

  // Waits on the host until `e` is done, reporting the communicator's asynchronous errors
  // meanwhile (NCCL's kernels never finish after a peer failed), every 1024th look.
  void wait(cudaEvent_t e) const {
    for (unsigned looks = 0;; ++looks) {
      const cudaError_t rc = cudaEventQuery(e);
      if (rc == cudaSuccess) return;
      if (rc != cudaErrorNotReady) check_cuda(rc, "cudaEventQuery");
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
  void send(const void* from, std::size_t bytes, int peer) {
    check_nccl(ncclSend(from, bytes, ncclUint8, peer, m_comm, stream()), "ncclSend", m_comm);
  }
  void recv(void* to, std::size_t bytes, int peer) {
    check_nccl(ncclRecv(to, bytes, ncclUint8, peer, m_comm, stream()), "ncclRecv", m_comm);
  }
  // Queues a copy of `bytes` on the stream (between host-pinned and device memory).
  void copy(void* to, const void* from, std::size_t bytes) {
    check_cuda(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, stream()), "cudaMemcpyAsync");
  }

 private:
  ncclComm_t m_comm;
  nccl_stream& m_kept;
  std::size_t m_marks = 0;  // events of the kept stream used by this call
};

}  // namespace ndzip::mpi::detail
