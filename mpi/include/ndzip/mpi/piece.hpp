// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::piece and exchange_stats: the pieces of a neighbour exchange and what it moved
// (ndzip::mpi::neighbor_exchange; nccl_communicator::exchange).

#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi {

// One piece of an exchange: the View sent or received (a face, edge or corner of a block, say;
// any layout), the rank it goes to or comes from, and the tag.
template <class View>
struct piece {
  View values;
  int peer;
  int tag;
};

// What one exchange sent and received.
struct exchange_stats {
  transfer_stats sent;
  transfer_stats received;
};

namespace detail {

// Adds one piece's transfer to an exchange's totals (`plain` stays as it is).
inline void accumulate(transfer_stats& total, const transfer_stats& piece) {
  total.raw_bytes += piece.raw_bytes;
  total.wire_bytes += piece.wire_bytes;
  total.segments += piece.segments;
  total.raw_segments += piece.raw_segments;
  total.codec_seconds += piece.codec_seconds;
}

}  // namespace detail

}  // namespace ndzip::mpi
