// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::scatter: the root's Views sent one to each rank, all compressed at the root in
// batch launches and moved by MPI_Scatterv (ndzip/mpi.hpp "Collectives").
//
//   std::vector<View> pieces;                                  // the root: one View per rank
//   ndzip::mpi::scatter(exec, pieces, mine, root, comm);      // elsewhere: an empty vector
//   ndzip::mpi::scatter_plan plan(exec, pieces, mine, root, comm);  plan.execute();

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

// `sends` (at the root: one View per rank, piece r read into rank r's `recv`; elsewhere empty)
// may differ in extents from rank to rank, and may be empty Views.
template <class ExecSpace, class SendView, class RecvView>
class scatter_plan : public collective_plan {
 public:
  scatter_plan(const ExecSpace& exec, const std::vector<SendView>& sends, const RecvView& recv,
               int root, MPI_Comm comm, const options& opts = {})
      : collective_plan(detail::make_collective_call<ExecSpace, SendView, RecvView>(
            exec, detail::mpi_collective_link<ExecSpace>(exec, comm, opts),
            [&](int rank, int size) {
              return detail::scatter_arguments(sends, recv, root, rank, size);
            },
            opts)) {}
};

template <class ExecSpace, class SendView, class RecvView>
collective_stats scatter(const ExecSpace& exec, const std::vector<SendView>& sends,
                         const RecvView& recv, int root, MPI_Comm comm, const options& opts = {}) {
  return scatter_plan<ExecSpace, SendView, RecvView>(exec, sends, recv, root, comm, opts).execute();
}

}  // namespace ndzip::mpi
