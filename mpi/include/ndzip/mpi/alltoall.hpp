// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::alltoall: every rank sends a View to every rank (MPI's alltoallv: the pieces may
// differ in extents and be empty), all of a rank's pieces compressed in batch launches and moved
// by MPI_Alltoallv (ndzip/mpi.hpp "Collectives"): the transposes of distributed FFTs, slab to
// pencil redistributions.
//
//   std::vector<View> to(size), from(size);                   // piece d goes to rank d
//   ndzip::mpi::alltoall(exec, to, from, comm);
//   ndzip::mpi::alltoall_plan plan(exec, to, from, comm);      // every step: plan.execute()

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <memory>
#include <utility>
#include <vector>

#include "ndzip/mpi/collective_plan.hpp"
#include "ndzip/mpi/collective_stats.hpp"
#include "ndzip/mpi/detail/core/collective_arguments.hpp"
#include "ndzip/mpi/detail/core/collective_engine.hpp"
#include "ndzip/mpi/detail/mpi/collective_link.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi {

// `sends[d]` goes to rank d, `recvs[s]` comes from rank s (its sends[this rank]), on every rank.
template <class ExecSpace, class SendView, class RecvView>
class alltoall_plan : public collective_plan {
 public:
  alltoall_plan(const ExecSpace& exec, const std::vector<SendView>& sends,
                const std::vector<RecvView>& recvs, MPI_Comm comm, const options& opts = {})
      : collective_plan(detail::make_collective_call<ExecSpace, SendView, RecvView>(
            exec, detail::mpi_collective_link<ExecSpace>(exec, comm, opts),
            [&](int rank, int size) {
              return detail::alltoall_arguments(sends, recvs, rank, size);
            },
            opts)) {}
};

template <class ExecSpace, class SendView, class RecvView>
collective_stats alltoall(const ExecSpace& exec, const std::vector<SendView>& sends,
                          const std::vector<RecvView>& recvs, MPI_Comm comm,
                          const options& opts = {}) {
  return alltoall_plan<ExecSpace, SendView, RecvView>(exec, sends, recvs, comm, opts).execute();
}

}  // namespace ndzip::mpi
