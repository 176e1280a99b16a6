// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The rounds of the NCCL link (ndzip/mpi/nccl.hpp): the transfers of one call, each a sequence
// of NCCL operations in rounds (docs/FORMAT.md "NCCL transfers"); the sides of point-to-point
// transfers are in point_to_point.hpp. Not part of the API.
//
// NCCL matches a send with the peer's receive by their order alone, and the receive must name
// the send's byte count. So every transfer has the same rounds on both sides:
//   round 0       the opening: transfer head (64 bytes) and the heads of segments 0 and 1
//                 (32 bytes each, zeros where the View has fewer segments): 128 bytes
//   round k + 1   segment k's payload (stream or raw values), then the head of segment k + 2,
//                 for k = 0 .. segments - 1
// A plain transfer's rounds carry the values of segment k and no segment heads. A receiver
// learns each payload's size two rounds ahead of it, so that two rounds are queued on the
// stream while the host reads the heads of the next. All transfers of one call (a sendrecv)
// go round by round, each round one NCCL group: both directions progress together, and any
// number of ranks calling in step cannot wait on each other in a cycle.
//
// Streams: the NCCL operations go on the communicator's NCCL stream (link.hpp), after the work
// queued on the instance before the call; a segment's payload after the instance has compressed
// it (an event per segment), a decoder after its payload's round (an event per round); the
// instance's work queued after the call runs after the call's NCCL operations. No buffer is
// given back to the pool before the call's end, and the pool's next user is the instance or a
// later call's operations, both ordered after this call's work.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "ndzip/error.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"
#include "ndzip/mpi/detail/gpu/stream.hpp"
#include "ndzip/mpi/detail/nccl/link.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi::detail {

// Segment heads a receiver learns ahead of their payloads.
inline constexpr std::uint64_t nccl_heads_ahead = 2;
inline constexpr std::size_t nccl_opening_bytes =
    transfer_head_bytes + nccl_heads_ahead * segment_head_bytes;

// One transfer of a call: the host work before each of its rounds, the round's NCCL calls
// (inside the round's group) and what is queued after them.
class nccl_side {
 public:
  virtual ~nccl_side() = default;
  // Rounds of the transfer: a receiver knows them once round 0 has arrived (1 until then).
  virtual std::uint64_t rounds() const = 0;
  // Before round r's group: waits for what the round needs (a sender's compression).
  virtual void before(std::uint64_t r) = 0;
  // Round r's NCCL calls.
  virtual void post(std::uint64_t r) = 0;
  // After round r's group: queues on the NCCL stream what the host reads once the round has
  // arrived.
  virtual void after(std::uint64_t r) = 0;
  // Then, `arrived_event` done once the round has arrived: queues on the instance what follows.
  virtual void follow(std::uint64_t r, gpu::event arrived_event) = 0;
  // Round r has arrived: the host reads the heads it brought (a receiver).
  virtual void arrived(std::uint64_t r) = 0;
  // The transfer's outcome, once every round has been posted: throws what went wrong.
  virtual void finish() = 0;
  // Whether the host reads what arrives (a receiver): rounds are then posted only two ahead of
  // the last one read.
  virtual bool reads_arrivals() const = 0;
  virtual const transfer_stats& stats() const = 0;
  // The rank it goes to or comes from.
  virtual int peer() const = 0;
};

// Runs the rounds of `sides` with `ops` (see the top of this file), then orders the instance's
// later work after them and finishes every side (the first error is thrown, after all are).
template <class ExecSpace>
void run_rounds(nccl_operations& ops, const ExecSpace& exec, const std::vector<nccl_side*>& sides) {
  const gpu::stream instance = gpu::stream_of(exec);
  ops.order_after(ops.stream(), instance);
  std::vector<gpu::event> arrived_events;
  std::uint64_t read = 0;  // rounds whose arrival the host has read
  const bool reading =
      std::any_of(sides.begin(), sides.end(), [](nccl_side* s) { return s->reads_arrivals(); });
  std::exception_ptr failure;
  try {
    for (std::uint64_t r = 0;; ++r) {
      // Round r's receives take the payload whose head came in round r - 2 (in the opening for
      // the first two): rounds 0 .. r - 2 must have been read.
      const std::uint64_t needed = !reading || r == 0     ? 0
                                   : r > nccl_heads_ahead ? r - nccl_heads_ahead + 1
                                                          : 1;
      for (; read < needed; ++read) {
        ops.wait(arrived_events[read]);
        for (nccl_side* s : sides)
          if (read < s->rounds()) s->arrived(read);
      }
      std::vector<nccl_side*> active;
      for (nccl_side* s : sides)
        if (r < s->rounds()) active.push_back(s);
      if (active.empty()) break;
      for (nccl_side* s : active) s->before(r);
      ops.open_group();
      try {
        for (nccl_side* s : active) s->post(r);
      } catch (...) {
        ncclGroupEnd();  // the calls made so far are queued; the rounds stop here
        throw;
      }
      ops.close_group();
      for (nccl_side* s : active) s->after(r);
      arrived_events.push_back(ops.mark(ops.stream()));
      for (nccl_side* s : active) s->follow(r, arrived_events.back());
    }
  } catch (...) {
    failure = std::current_exception();
  }
  ops.order_after(instance, ops.stream());
  for (nccl_side* s : sides) {
    try {
      s->finish();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

// What a receiver says where the rounds can no longer be matched: the peer's later operations
// have no counterpart here.
inline stream_error out_of_step(const std::string& what) {
  return stream_error(what +
                      "; the sizes of the transfer's later NCCL messages are unknown, so the "
                      "NCCL communicator is out of step: abort it (ncclCommAbort)");
}

}  // namespace ndzip::mpi::detail
