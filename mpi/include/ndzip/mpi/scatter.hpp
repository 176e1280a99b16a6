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
#include <string>
#include <utility>
#include <vector>

#include "ndzip/mpi/collective_stats.hpp"
#include "ndzip/mpi/detail/mpi/collective.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi {

// `sends` (at the root: one View per rank, piece r read into rank r's `recv`; elsewhere empty)
// may differ in extents from rank to rank, and may be empty Views.
template <class ExecSpace, class SendView, class RecvView>
class scatter_plan {
 public:
  scatter_plan(const ExecSpace& exec, std::vector<SendView> sends, const RecvView& recv, int root,
               MPI_Comm comm, const options& opts = {})
      : m_impl(exec, comm, arguments_of(std::move(sends), recv, root, comm), opts) {}

  collective_stats execute() { return m_impl.execute(); }

 private:
  using engine = detail::collective_mpi<ExecSpace, SendView, RecvView>;
  static typename engine::arguments arguments_of(std::vector<SendView> sends, const RecvView& recv,
                                                 int root, MPI_Comm comm) {
    typename engine::arguments a;
    a.kind = detail::collective_kind::scatter;
    a.root = root;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank != root) {
      a.recvs.push_back(recv);
      if (!sends.empty())
        a.error = "sends holds " + std::to_string(sends.size()) +
                  " Views on rank " + std::to_string(rank) + ", which is not the root: give an "
                  "empty vector there";
      return a;
    }
    if (sends.size() != static_cast<std::size_t>(size)) {
      a.error = "sends holds " + std::to_string(sends.size()) + " Views at the root, for " +
                std::to_string(size) + " ranks";
      return a;
    }
    a.sends.resize(sends.size());
    for (std::size_t d = 0; d < sends.size(); ++d)
      if (static_cast<int>(d) != rank) a.sends[d] = sends[d];
    a.own_send = sends[rank];
    a.own_recv = recv;
    return a;
  }
  engine m_impl;
};

template <class ExecSpace, class SendView, class RecvView>
collective_stats scatter(const ExecSpace& exec, const std::vector<SendView>& sends,
                         const RecvView& recv, int root, MPI_Comm comm, const options& opts = {}) {
  return scatter_plan<ExecSpace, SendView, RecvView>(exec, sends, recv, root, comm, opts).execute();
}

}  // namespace ndzip::mpi
