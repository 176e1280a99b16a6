// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi: Kokkos Views of float or double (rank 1-3, host or device memory, contiguous or
// strided) sent and received through MPI as ndzip-compressed messages.
//
//   ndzip::mpi::send(exec, values, dest, tag, comm);          // blocking
//   ndzip::mpi::recv(exec, values, source, tag, comm);
//   auto r = ndzip::mpi::isend(exec, values, dest, tag, comm);  // non-blocking
//   auto q = ndzip::mpi::irecv(exec, values, source, tag, comm);
//   q.wait(); r.wait();                                        // or test(), in any order
//   ndzip::mpi::neighbor_exchange halo(exec, comm, sends, receives);  // once: (View, peer, tag)
//   halo.exchange();                                           // every step: batched sends
//
// On the wire (docs/FORMAT.md "MPI messages"). A View is cut into segments of whole rows of its
// slowest dimension (options::segment_bytes). The sender keeps several in flight
// (options::pipeline_depth): while segment k is handed to MPI, the next ones are compressed on
// `exec`, each message finished there (its head, or its raw values where the stream would not
// be smaller: the wire never carries more than the values plus 96 bytes and 32 per further
// segment), and the host waits for one segment at a time, calling MPI for the earlier ones
// meanwhile. The receiver queues each segment's decoding on `exec` as it arrives and goes back
// to MPI for the next one; it fences `exec` once, after the last. How device bytes meet MPI is
// the transport (options::transport): staged through host-pinned memory, or handed to MPI in
// device memory where the MPI library takes device pointers (mpi_device); the bytes on the wire
// are the same. A sender may instead send a View plain (options::compression): its values as they
// are after a 64-byte head, handed to MPI from the View itself where the transport gives MPI the
// View's memory; by default a communicator times its sends both ways for each peer, tag and size
// and takes the faster (compression loses where the link is as fast as the codec, NVLink, or the
// data does not shrink).
//
// Matching. A transfer is one or more MPI messages on the caller's (comm, tag); a receive
// matches a send as MPI_Recv matches MPI_Send (MPI_ANY_SOURCE and MPI_ANY_TAG work), and
// receives match in the order they were posted, whatever order wait() and test() complete them
// in: of two irecv() on one source and tag, the first gets the first message. (The messages are
// taken while any ndzip::mpi receive is tested or waited for; detail/mpi/matching.hpp says
// how.) Do not post plain MPI receives that could match the same peer and tag while an ndzip::mpi
// transfer is under way: they could take one of its segments.
//
// Checks on arrival. The head of every message says the element type and extents it holds: a
// receive into a View of another type or other extents throws ndzip::mpi::mismatch_error
// naming both, after consuming the whole message (no message is left to match later, no rank
// hangs, nothing is written); so does a receive with options::checksum given a message
// without checksums. Every segment is checked against its head (index, size; a segment longer
// than its slab's values is refused, not truncated by MPI), its stream must decode to exactly
// its slab, and with options::checksum (off by default: MPI's transports check their own
// frames) against its XXH3-64: a damaged, truncated or oversized segment throws
// ndzip::stream_error naming the sending rank, tag, View and segment, after the rest of the
// message is consumed. A message whose own head is damaged or announces segments of fewer than
// 4096 bytes throws ndzip::stream_error at once (its segments cannot be told apart then). A
// receive holds memory only for messages that have arrived: about its View's size at most.
//
// Threads. MPI must be initialised with MPI_Init_thread and at least MPI_THREAD_FUNNELED: the
// calls then come from the thread that initialised MPI. With MPI_THREAD_SERIALIZED they may come
// from any thread, one at a time; with MPI_THREAD_MULTIPLE from several threads at once (the
// library serialises its own matching). With MPI_THREAD_SINGLE (what MPI_Init gives Open MPI) or
// from another thread under FUNNELED, every call throws std::logic_error saying so.
//
// Aliasing and lifetimes. isend() compresses (or copies, if plain) and posts every segment before
// it returns: the values may be changed as soon as it has returned, unless
// options::values_stay_until_complete promises that they stay until the request completes (as
// MPI_Isend asks), which lets a plain transfer go without a copy; send() never copies them. irecv() writes into its View until the
// request completes; keep the View alive and untouched until then. A request destroyed before
// completion: a receive that has not taken its first message yet is cancelled (nothing is
// consumed, nothing waits: an exception thrown past it reaches its handler); any other transfer
// first completes its MPI messages, without writing more into a receive's View (errors are
// reported on standard error). A send waits there until its peer has received it, as
// MPI_Wait would. After MPI_Finalize, wait() and test() throw std::logic_error and a destroyed
// request makes no MPI call (it says on standard error that its transfer is incomplete).
//
// neighbor_exchange::exchange() returns once every piece has been sent and received: a peer
// that never sends one of its pieces keeps it waiting, as MPI_Waitall on plain receives would;
// an error in one piece is thrown after the others are complete.

#include "ndzip/mpi/allgather.hpp"
#include "ndzip/mpi/alltoall.hpp"
#include "ndzip/mpi/bcast.hpp"
#include "ndzip/mpi/collective_plan.hpp"
#include "ndzip/mpi/collective_stats.hpp"
#include "ndzip/mpi/gather.hpp"
#include "ndzip/mpi/neighbor_exchange.hpp"
#include "ndzip/mpi/point_to_point.hpp"
#include "ndzip/mpi/request.hpp"
#include "ndzip/mpi/scatter.hpp"
#include "ndzip/mpi/error.hpp"
#include "ndzip/mpi/options.hpp"
