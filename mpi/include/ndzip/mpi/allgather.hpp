// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::allgather: every rank's View collected on every rank, each compressed once where
// it starts and forwarded compressed by MPI_Allgatherv's own ring or tree (ndzip/mpi.hpp
// "Collectives").
//
//   std::vector<View> pieces(size);                            // one View per rank, every rank
//   ndzip::mpi::allgather(exec, mine, pieces, comm);
//   ndzip::mpi::allgather_plan plan(exec, mine, pieces, comm);  plan.execute();

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

// `recvs`: one View per rank on every rank, piece r written from rank r's `send` (pieces may
// differ in extents from rank to rank, and may be empty Views).
template <class ExecSpace, class SendView, class RecvView>
class allgather_plan : public collective_plan {
 public:
  allgather_plan(const ExecSpace& exec, const SendView& send, const std::vector<RecvView>& recvs,
                 MPI_Comm comm, const options& opts = {})
      : collective_plan(detail::make_collective_call<ExecSpace, SendView, RecvView>(
            exec, detail::mpi_collective_link<ExecSpace>(exec, comm, opts),
            [&](int rank, int size) {
              return detail::allgather_arguments(send, recvs, rank, size);
            },
            opts)) {}
};

template <class ExecSpace, class SendView, class RecvView>
collective_stats allgather(const ExecSpace& exec, const SendView& send,
                           const std::vector<RecvView>& recvs, MPI_Comm comm,
                           const options& opts = {}) {
  return allgather_plan<ExecSpace, SendView, RecvView>(exec, send, recvs, comm, opts).execute();
}

}  // namespace ndzip::mpi
