// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The NCCL communicator the NCCL cases share (test_nccl.cpp, test_collectives_nccl.cpp).
#include <mpi.h>

#include <stdexcept>

#include "mpi_test_support.hpp"
#include "ndzip/mpi/nccl.hpp"

namespace mpi_test {

// One NCCL communicator over MPI_COMM_WORLD for the whole run, made from a unique id that MPI
// broadcasts.
inline ncclComm_t world_nccl() {
  static ncclComm_t comm = [] {
    ncclUniqueId id;
    if (rank() == 0) ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ncclComm_t c = nullptr;
    if (ncclCommInitRank(&c, size, id, rank()) != ncclSuccess)
      throw std::runtime_error("ncclCommInitRank failed");
    return c;
  }();
  return comm;
}

}  // namespace mpi_test
