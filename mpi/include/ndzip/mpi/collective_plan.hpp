// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::collective_plan: a collective made once for fixed Views and run again and again
// (ndzip/mpi.hpp "Collectives"), whatever its link: bcast_plan, gather_plan, scatter_plan,
// allgather_plan and alltoall_plan over MPI are ones, and nccl_communicator::plan_bcast ... over
// NCCL return one.

#include <memory>
#include <utility>

#include "ndzip/mpi/collective_stats.hpp"

namespace ndzip::mpi {

namespace detail {

// A collective's repeated calls, whatever its link (detail/core/collective_engine.hpp).
class collective_call {
 public:
  virtual ~collective_call() = default;
  virtual collective_stats execute() = 0;
};

}  // namespace detail

// Owns the call's scratch (streams, buffers, the batch codecs, packed copies of strided Views):
// after its first execute(), a call allocates nothing. Every rank of the communicator calls
// execute() the same number of times, in the same order as its other collectives. Movable.
class collective_plan {
 public:
  explicit collective_plan(std::unique_ptr<detail::collective_call> call)
      : m_call(std::move(call)) {}

  // Moves the Views' current values; throws as ndzip/mpi.hpp "Collectives" says, on every rank
  // a failure concerns, once no rank waits for this one.
  collective_stats execute() { return m_call->execute(); }

 private:
  std::unique_ptr<detail::collective_call> m_call;
};

}  // namespace ndzip::mpi
