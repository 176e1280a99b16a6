// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::gather: every rank's View collected at the root, each compressed once where it
// starts and moved by MPI_Gatherv (ndzip/mpi.hpp "Collectives").
//
//   std::vector<View> pieces;                                  // the root: one View per rank
//   ndzip::mpi::gather(exec, mine, pieces, root, comm);       // elsewhere: an empty vector
//   ndzip::mpi::gather_plan plan(exec, mine, pieces, root, comm);  plan.execute();

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

// `recvs` (at the root: one View per rank, piece r written from rank r's `send`; elsewhere
// empty) may differ in extents from rank to rank, and may be empty Views.
template <class ExecSpace, class SendView, class RecvView>
class gather_plan : public collective_plan {
 public:
  gather_plan(const ExecSpace& exec, const SendView& send, const std::vector<RecvView>& recvs,
              int root, MPI_Comm comm, const options& opts = {})
      : collective_plan(detail::make_collective_call<ExecSpace, SendView, RecvView>(
            exec, detail::mpi_collective_link<ExecSpace>(exec, comm, opts),
            [&](int rank, int size) {
              return detail::gather_arguments(send, recvs, root, rank, size);
            },
            opts)) {}
};

template <class ExecSpace, class SendView, class RecvView>
collective_stats gather(const ExecSpace& exec, const SendView& send,
                        const std::vector<RecvView>& recvs, int root, MPI_Comm comm,
                        const options& opts = {}) {
  return gather_plan<ExecSpace, SendView, RecvView>(exec, send, recvs, root, comm, opts).execute();
}

}  // namespace ndzip::mpi
