// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The GPU stream seam of the NCCL link: the few runtime calls it makes (streams, events,
// priorities, event timing, asynchronous copies), written once over the CUDA half
// (runtime_cuda.hpp) or the HIP half (runtime_hip.hpp), which name the runtime's calls, so that
// the NCCL communicator is written once for NCCL on Kokkos::Cuda and RCCL on Kokkos' HIP. Not
// part of the API.

#include <Kokkos_Macros.hpp>
#include <cstddef>
#include <string>

#if defined(KOKKOS_ENABLE_CUDA)
#include "ndzip/mpi/detail/gpu/runtime_cuda.hpp"
#elif defined(KOKKOS_ENABLE_HIP)
#include "ndzip/mpi/detail/gpu/runtime_hip.hpp"
#else
#error "ndzip/mpi/detail/gpu/stream.hpp: Kokkos has neither CUDA nor HIP"
#endif

#include "ndzip/mpi/error.hpp"

namespace ndzip::mpi::detail::gpu {

using stream = NDZIP_MPI_GPU(Stream_t);
using event = NDZIP_MPI_GPU(Event_t);

// Throws ndzip::mpi::error with the runtime's message unless `rc` is success; `call` is the
// call's name without the runtime's prefix ("EventRecord").
inline void check(NDZIP_MPI_GPU(Error_t) rc, const char* call) {
  if (rc != NDZIP_MPI_GPU(Success))
    throw error(std::string("ndzip::mpi (NCCL): ") + call_prefix + call + " failed: " +
                NDZIP_MPI_GPU(GetErrorString)(rc));
}

// A non-blocking stream at the device's highest priority.
inline stream priority_stream() {
  int least = 0, greatest = 0;
  check(NDZIP_MPI_GPU(DeviceGetStreamPriorityRange)(&least, &greatest),
        "DeviceGetStreamPriorityRange");
  stream s = nullptr;
  check(NDZIP_MPI_GPU(StreamCreateWithPriority)(&s, NDZIP_MPI_GPU(StreamNonBlocking), greatest),
        "StreamCreateWithPriority");
  return s;
}

// Released once the work queued on it is done (the runtime's rule): nothing waits here.
inline void release(stream s) { (void)NDZIP_MPI_GPU(StreamDestroy)(s); }
inline void release(event e) { (void)NDZIP_MPI_GPU(EventDestroy)(e); }

// An event, with timing (elapsed_ms) or without.
inline event new_event(bool timing) {
  event e = nullptr;
  check(timing ? NDZIP_MPI_GPU(EventCreate)(&e)
               : NDZIP_MPI_GPU(EventCreateWithFlags)(&e, NDZIP_MPI_GPU(EventDisableTiming)),
        "EventCreate");
  return e;
}

// `e` is done once the work queued on `s` so far is.
inline void record(event e, stream s) { check(NDZIP_MPI_GPU(EventRecord)(e, s), "EventRecord"); }
// `waiter` runs what is queued on it after this only once `e` is done.
inline void order_after(stream waiter, event e) {
  check(NDZIP_MPI_GPU(StreamWaitEvent)(waiter, e, 0), "StreamWaitEvent");
}

// Whether `e` is done (throws on a runtime error: a fault of the work before it).
inline bool done(event e) {
  const auto rc = NDZIP_MPI_GPU(EventQuery)(e);
  if (rc == NDZIP_MPI_GPU(ErrorNotReady)) return false;
  check(rc, "EventQuery");
  return true;
}

// The milliseconds between two done events with timing; false where the runtime has none.
inline bool elapsed_ms(event from, event to, float& ms) {
  return NDZIP_MPI_GPU(EventElapsedTime)(&ms, from, to) == NDZIP_MPI_GPU(Success);
}

// Queues a copy of `bytes` on `s`, between any two memories the device reaches.
inline void copy_async(void* to, const void* from, std::size_t bytes, stream s) {
  check(NDZIP_MPI_GPU(MemcpyAsync)(to, from, bytes, NDZIP_MPI_GPU(MemcpyDefault), s),
        "MemcpyAsync");
}

}  // namespace ndzip::mpi::detail::gpu

#undef NDZIP_MPI_GPU
