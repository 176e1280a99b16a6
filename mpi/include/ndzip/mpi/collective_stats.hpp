// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::collective_stats: what one call of a compressed collective moved on this rank, and
// where its time went (ndzip/mpi/bcast.hpp, gather.hpp, scatter.hpp, allgather.hpp,
// alltoall.hpp).

#include <cstdint>

#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi {

struct collective_stats {
  // The pieces this rank sent (its own: a piece a tree or ring forwards through this rank is
  // not counted) and those it received. `plain` says the call sent its pieces raw
  // (options::compression); codec_seconds is the host's wait for the compression of the sent
  // pieces, and for the decoding of the received ones after the last round.
  transfer_stats sent;
  transfer_stats received;
  std::uint64_t rounds = 0;   // rounds of segments (options::segment_bytes)
  double link_seconds = 0;    // in MPI's collectives of heads and bytes
  double agree_seconds = 0;   // in the agreement steps (MPI_Allreduce of verdicts)
  double total_seconds = 0;   // the whole call on this rank
};

}  // namespace ndzip::mpi
