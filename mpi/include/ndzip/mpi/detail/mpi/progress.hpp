// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How the MPI link keeps MPI moving while the host waits for the instance: a transport that
// copies through shared memory moves bytes only inside MPI calls, and a large message moves only
// once its receive is matched, so waiting for the device without calling MPI would stop the
// wire. Not part of the API.

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <vector>

#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/segment_slots.hpp"
#include "ndzip/mpi/detail/mpi/matching.hpp"
#include "ndzip/mpi/detail/mpi/runtime.hpp"

namespace ndzip::mpi::detail {

// Calls MPI for `requests` (the messages already posted) without blocking, and advances the
// process's posted receives (receive_queue::advance_all). Returns whether all `requests` are
// complete. Called with matching_mutex() held.
inline bool progress_requests(std::vector<MPI_Request>& requests) {
  receives().advance_all();
  if (requests.empty()) return true;
  int done = 0;
  check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
        "MPI_Testall");
  return done != 0;
}

// Waits until segment k is finished in `slots`, calling MPI for `requests` meanwhile (once at
// least: every segment advances the receives); returns its payload size.
template <class ExecSpace>
std::uint64_t wait_progressing(segment_slots<ExecSpace>& slots, std::size_t k,
                               std::vector<MPI_Request>& requests) {
  return slots.wait(k, [&] { progress_requests(requests); });
}

// Waits for the work queued on the instance so far while calling MPI for `requests`: a mark
// raised after that work (as segment_slots does), or a fence where the device cannot write the
// host's memory.
template <class ExecSpace>
void fence_progressing(buffer_pool<ExecSpace>& memory, std::vector<MPI_Request>& requests) {
  using staging_space = typename staging<ExecSpace>::space;
  const ExecSpace& exec = memory.exec();
  if constexpr (Kokkos::SpaceAccessibility<ExecSpace, staging_space>::accessible &&
                !staging<ExecSpace>::in_place) {
    if (!progress_requests(requests)) {
      const auto mark_memory = memory.staging_buffer(sizeof(std::uint64_t));
      auto* mark = reinterpret_cast<volatile std::uint64_t*>(mark_memory.data());
      *mark = 0;
      Kokkos::parallel_for("ndzip::mpi mark", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1),
                           raise_mark{mark});
      while (mark[0] == 0 && !progress_requests(requests)) {
      }
    }
  }
  exec.fence();
}


}  // namespace ndzip::mpi::detail
