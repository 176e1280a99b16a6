// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::neighbor_exchange: a fixed set of (View, peer, tag) sends and receives, completed
// together, its sends compressed in batch_compressor launches (ndzip/mpi.hpp). Over MPI
// (detail/mpi/neighbor_exchange.hpp); through NCCL, nccl_communicator::exchange does the same.

#include <mpi.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "ndzip/mpi/detail/mpi/neighbor_exchange.hpp"
#include "ndzip/mpi/options.hpp"
#include "ndzip/mpi/piece.hpp"

namespace ndzip::mpi {

// Made once for the pieces of a halo (up to 26 neighbours of a 3-D block: faces, edges and
// corners, as rank-3 subviews of one type), like a persistent MPI request; exchange() then
// moves the current values of every piece. It owns the scratch (packed values, streams, host
// staging, the batches' scratch), so that an exchange allocates nothing on the device.
//
// Each send piece travels as an ndzip::mpi message of one segment (docs/FORMAT.md), so a piece
// can also be received by ndzip::mpi::recv, and a receive piece can take what
// ndzip::mpi::send sent. A piece is compressed as the grid of its extents other than 1 (a face
// one cell thick as a 2-D grid); the pieces whose grids hold a whole ndzip hypercube are
// compressed in one batch_compressor launch per rank of those grids, the others (edges and
// corners of a thin halo, too small to shrink) travel raw. Pieces without elements are allowed.
// Each message is assembled in the execution space's memory and handed to MPI through the
// communicator's transport, as ndzip::mpi::isend does (detail/core/segment_slots.hpp).
//
// options::compression decides per exchange whether the pieces are compressed or all go raw
// (raw segments: the messages stay readable by any receive): `always`, `never`, or `adaptive`
// (the default), which times whole exchange() calls both ways, as a communicator times its
// sends (detail/core/send_choice.hpp: the first exchange after a change of way untimed, the
// median of the last three, a 5 % gain to switch, the other way tried again now and then).
// Halos are small messages: over NVLink raw pieces win, over PCIe staging or a network
// compressed ones. With the checksum on, pieces are always compressed.
template <class ExecSpace, class View>
class neighbor_exchange {
 public:
  neighbor_exchange(const ExecSpace& exec, MPI_Comm comm, std::vector<piece<View>> sends,
                    std::vector<piece<View>> receives, const options& opts = {})
      : m_impl(exec, comm, std::move(sends), std::move(receives), opts) {}

  std::size_t send_count() const { return m_impl.send_count(); }
  std::size_t receive_count() const { return m_impl.receive_count(); }

  // Sends every send piece and receives every receive piece; returns once all are complete.
  // Throws as ndzip::mpi::recv does (ndzip::mpi::mismatch_error, ndzip::stream_error), the
  // first error of any piece, once every message of the exchange is complete.
  exchange_stats exchange() { return m_impl.exchange(); }

 private:
  detail::neighbor_exchange_mpi<ExecSpace, View> m_impl;
};

}  // namespace ndzip::mpi
