// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::bcast: a View of the root's sent to every rank of a communicator, compressed once
// at the root and forwarded compressed by MPI_Bcast's own tree (ndzip/mpi.hpp "Collectives").
//
//   ndzip::mpi::bcast(exec, field, root, comm);             // one call
//   ndzip::mpi::bcast_plan plan(exec, field, root, comm);    // repeated calls on one View:
//   plan.execute();                                          // allocates nothing

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <string>
#include <utility>
#include <vector>

#include "ndzip/mpi/collective_stats.hpp"
#include "ndzip/mpi/detail/mpi/collective.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi {

// Every rank gives a View of the same type and extents (the root's is read, the others'
// written); a rank whose View differs throws ndzip::mpi::mismatch_error after the call, without
// writing it, and the others complete.
template <class ExecSpace, class View>
class bcast_plan {
 public:
  bcast_plan(const ExecSpace& exec, const View& values, int root, MPI_Comm comm,
             const options& opts = {})
      : m_impl(exec, comm, arguments_of(values, root, comm), opts) {}

  collective_stats execute() { return m_impl.execute(); }

 private:
  using engine = detail::collective_mpi<ExecSpace, View, View>;
  static typename engine::arguments arguments_of(const View& values, int root, MPI_Comm comm) {
    typename engine::arguments a;
    a.kind = detail::collective_kind::bcast;
    a.root = root;
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == root)
      a.sends.push_back(values);
    else
      a.recvs.push_back(values);
    return a;
  }
  engine m_impl;
};

template <class ExecSpace, class View>
collective_stats bcast(const ExecSpace& exec, const View& values, int root, MPI_Comm comm,
                       const options& opts = {}) {
  return bcast_plan<ExecSpace, View>(exec, values, root, comm, opts).execute();
}

}  // namespace ndzip::mpi
