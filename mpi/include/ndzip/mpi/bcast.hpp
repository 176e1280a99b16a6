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

// Every rank gives a View of the same type and extents (the root's is read, the others'
// written); a rank whose View differs throws ndzip::mpi::mismatch_error after the call, without
// writing it, and the others complete.
template <class ExecSpace, class View>
class bcast_plan : public collective_plan {
 public:
  bcast_plan(const ExecSpace& exec, const View& values, int root, MPI_Comm comm,
             const options& opts = {})
      : collective_plan(detail::make_collective_call<ExecSpace, View, View>(
            exec, detail::mpi_collective_link<ExecSpace>(exec, comm, opts),
            [&](int rank, int) { return detail::bcast_arguments(values, root, rank); },
            opts)) {}
};

template <class ExecSpace, class View>
collective_stats bcast(const ExecSpace& exec, const View& values, int root, MPI_Comm comm,
                       const options& opts = {}) {
  return bcast_plan<ExecSpace, View>(exec, values, root, comm, opts).execute();
}

}  // namespace ndzip::mpi
