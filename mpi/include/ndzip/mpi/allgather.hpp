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
#include <string>
#include <utility>
#include <vector>

#include "ndzip/mpi/collective_stats.hpp"
#include "ndzip/mpi/detail/mpi/collective.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi {

// `recvs`: one View per rank on every rank, piece r written from rank r's `send` (pieces may
// differ in extents from rank to rank, and may be empty Views).
template <class ExecSpace, class SendView, class RecvView>
class allgather_plan {
 public:
  allgather_plan(const ExecSpace& exec, const SendView& send, std::vector<RecvView> recvs,
                 MPI_Comm comm, const options& opts = {})
      : m_impl(exec, comm, arguments_of(send, std::move(recvs), comm), opts) {}

  collective_stats execute() { return m_impl.execute(); }

 private:
  using engine = detail::collective_mpi<ExecSpace, SendView, RecvView>;
  static typename engine::arguments arguments_of(const SendView& send, std::vector<RecvView> recvs,
                                                 MPI_Comm comm) {
    typename engine::arguments a;
    a.kind = detail::collective_kind::allgather;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (recvs.size() != static_cast<std::size_t>(size)) {
      a.error = "recvs holds " + std::to_string(recvs.size()) + " Views on rank " +
                std::to_string(rank) + ", for " + std::to_string(size) + " ranks";
      return a;
    }
    a.sends.push_back(send);
    a.recvs.resize(recvs.size());
    for (std::size_t s = 0; s < recvs.size(); ++s)
      if (static_cast<int>(s) != rank) a.recvs[s] = recvs[s];
    a.own_send = send;
    a.own_recv = recvs[rank];
    return a;
  }
  engine m_impl;
};

template <class ExecSpace, class SendView, class RecvView>
collective_stats allgather(const ExecSpace& exec, const SendView& send,
                           const std::vector<RecvView>& recvs, MPI_Comm comm,
                           const options& opts = {}) {
  return allgather_plan<ExecSpace, SendView, RecvView>(exec, send, recvs, comm, opts).execute();
}

}  // namespace ndzip::mpi
