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
#include <string>
#include <utility>
#include <vector>

#include "ndzip/mpi/collective_stats.hpp"
#include "ndzip/mpi/detail/mpi/collective.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi {

// `recvs` (at the root: one View per rank, piece r written from rank r's `send`; elsewhere
// empty) may differ in extents from rank to rank, and may be empty Views.
template <class ExecSpace, class SendView, class RecvView>
class gather_plan {
 public:
  gather_plan(const ExecSpace& exec, const SendView& send, std::vector<RecvView> recvs, int root,
              MPI_Comm comm, const options& opts = {})
      : m_impl(exec, comm, arguments_of(send, std::move(recvs), root, comm), opts) {}

  collective_stats execute() { return m_impl.execute(); }

 private:
  using engine = detail::collective_mpi<ExecSpace, SendView, RecvView>;
  static typename engine::arguments arguments_of(const SendView& send, std::vector<RecvView> recvs,
                                                 int root, MPI_Comm comm) {
    typename engine::arguments a;
    a.kind = detail::collective_kind::gather;
    a.root = root;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank != root) {
      a.sends.push_back(send);
      if (!recvs.empty())
        a.error = "recvs holds " + std::to_string(recvs.size()) +
                  " Views on rank " + std::to_string(rank) + ", which is not the root: give an "
                  "empty vector there";
      return a;
    }
    if (recvs.size() != static_cast<std::size_t>(size)) {
      a.error = "recvs holds " + std::to_string(recvs.size()) + " Views at the root, for " +
                std::to_string(size) + " ranks";
      return a;
    }
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
collective_stats gather(const ExecSpace& exec, const SendView& send,
                        const std::vector<RecvView>& recvs, int root, MPI_Comm comm,
                        const options& opts = {}) {
  return gather_plan<ExecSpace, SendView, RecvView>(exec, send, recvs, root, comm, opts).execute();
}

}  // namespace ndzip::mpi
