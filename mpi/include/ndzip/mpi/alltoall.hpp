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
#include <string>
#include <utility>
#include <vector>

#include "ndzip/mpi/collective_stats.hpp"
#include "ndzip/mpi/detail/mpi/collective.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi {

// `sends[d]` goes to rank d, `recvs[s]` comes from rank s (its sends[this rank]), on every rank.
template <class ExecSpace, class SendView, class RecvView>
class alltoall_plan {
 public:
  alltoall_plan(const ExecSpace& exec, std::vector<SendView> sends, std::vector<RecvView> recvs,
                MPI_Comm comm, const options& opts = {})
      : m_impl(exec, comm, arguments_of(std::move(sends), std::move(recvs), comm), opts) {}

  collective_stats execute() { return m_impl.execute(); }

 private:
  using engine = detail::collective_mpi<ExecSpace, SendView, RecvView>;
  static typename engine::arguments arguments_of(std::vector<SendView> sends,
                                                 std::vector<RecvView> recvs, MPI_Comm comm) {
    typename engine::arguments a;
    a.kind = detail::collective_kind::alltoall;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (sends.size() != static_cast<std::size_t>(size) ||
        recvs.size() != static_cast<std::size_t>(size)) {
      a.error = "sends and recvs hold " + std::to_string(sends.size()) + " and " +
                std::to_string(recvs.size()) + " Views on rank " + std::to_string(rank) +
                ", for " + std::to_string(size) + " ranks";
      return a;
    }
    a.sends.resize(sends.size());
    a.recvs.resize(recvs.size());
    for (std::size_t r = 0; r < sends.size(); ++r)
      if (static_cast<int>(r) != rank) {
        a.sends[r] = sends[r];
        a.recvs[r] = recvs[r];
      }
    a.own_send = sends[rank];
    a.own_recv = recvs[rank];
    return a;
  }
  engine m_impl;
};

template <class ExecSpace, class SendView, class RecvView>
collective_stats alltoall(const ExecSpace& exec, const std::vector<SendView>& sends,
                          const std::vector<RecvView>& recvs, MPI_Comm comm,
                          const options& opts = {}) {
  return alltoall_plan<ExecSpace, SendView, RecvView>(exec, sends, recvs, comm, opts).execute();
}

}  // namespace ndzip::mpi
