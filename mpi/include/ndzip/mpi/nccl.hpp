// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::nccl_communicator: the NCCL link. Views of Kokkos::Cuda (NCCL) or Kokkos' HIP
// (RCCL, NCCL's API) sent and received compressed through NCCL, for GPUs whose MPI is not
// GPU-aware (or codes that move their data with NCCL already). Built where ndzip::mpi finds
// NCCL at configure time (NDZIP_MPI_NCCL; NDZIP_MPI_HAS_NCCL is then defined); it makes no MPI
// call, the user makes the NCCL communicator. Its operations: point-to-point (send, recv,
// sendrecv), the neighbor exchange (exchange), and the collectives (bcast, gather, scatter,
// allgather, alltoall; plan_bcast ... for repeated calls), in detail/nccl/.
//
//   ndzip::mpi::nccl_communicator<Kokkos::Cuda> nc(exec, nccl_comm);
//   nc.send(values, peer);                     // on one rank
//   nc.recv(values, peer);                     // on the other
//   nc.sendrecv(face_out, right, face_in, left);  // both directions at once
//   nc.exchange(sends, receives);              // pieces {View, peer, tag}: a halo
//   nc.alltoall(sends, recvs);                 // every rank: collectives as over MPI
//   auto plan = nc.plan_alltoall(sends, recvs);  plan.execute();   // repeated: no allocation
//
// Views of float or double, rank 1 to 3, in device memory; strided ones (the faces of a block)
// are copied in C order through the communicator's memory on `exec`.
//
// NCCL's rules hold: a send is matched by the peer's receive of the same order on the
// communicator, with nothing but ndzip transfers between them (and in that order also among
// other NCCL calls on it); two ranks that exchange call sendrecv(), not send() and recv(), or the
// two directions wait for each other (NCCL's blocking operations). A transfer is one NCCL send
// and receive per round (docs/FORMAT.md "NCCL transfers"): the receiver learns each payload's
// size two rounds ahead from the segment heads, so the host reads 32 bytes per segment and the
// link is never idle for it. The operations go on a stream the communicator keeps (at the
// device's highest priority), ordered after the work queued on `exec` before the call, and the
// work queued on `exec` after the call runs after them: values sent plain are read, and
// received values written, by then (as ncclSend on exec's stream would). send() returns once
// the last segment is compressed and queued (its buffers stay in the communicator's memory
// until the stream has sent them); recv(), sendrecv() and exchange() return once every segment
// has arrived and decoded, having checked it.
//
// Checks: a transfer of another type or extents than the receiving View is received to its end
// and refused (ndzip::mpi::mismatch_error), as is a payload that does not decode to exactly its
// slab (ndzip::stream_error, naming the segment): the communicator stays in step. A damaged
// transfer or segment head leaves the sizes of the rest unknown: ndzip::stream_error says so,
// and the NCCL communicator must be aborted (ncclCommAbort), as after any NCCL error, which is
// thrown as ndzip::mpi::error with NCCL's message. NCCL checks no bytes on its links:
// options::checksum is refused (std::invalid_argument) here; use MPI where that matters.
//
// Compressed or plain: options::compression as with MPI (ndzip/mpi/options.hpp). In adaptive
// mode each send is timed on the GPU from the first kernel of its compression to the end of its
// last NCCL operation (in a sendrecv, and of decoding what it received), plus, for a compressed
// one, the time its last segment took to compress (the receiver's decoding of it, which the
// sender does not see); read back at a later call, never waited for; per peer and size.

#ifndef NDZIP_MPI_HAS_NCCL
#error "ndzip/mpi/nccl.hpp: this ndzip::mpi was built without NCCL (NDZIP_MPI_NCCL)"
#endif

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ndzip/mpi/collective_plan.hpp"
#include "ndzip/mpi/collective_stats.hpp"
#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/codec_cache.hpp"
#include "ndzip/mpi/detail/core/collective_arguments.hpp"
#include "ndzip/mpi/detail/core/collective_engine.hpp"
#include "ndzip/mpi/detail/core/send_choice.hpp"
#include "ndzip/mpi/detail/core/view_support.hpp"
#include "ndzip/mpi/detail/gpu/stream.hpp"
#include "ndzip/mpi/detail/nccl/api.hpp"
#include "ndzip/mpi/detail/nccl/collective_link.hpp"
#include "ndzip/mpi/detail/nccl/link.hpp"
#include "ndzip/mpi/detail/nccl/point_to_point.hpp"
#include "ndzip/mpi/detail/nccl/rounds.hpp"
#include "ndzip/mpi/options.hpp"
#include "ndzip/mpi/piece.hpp"

namespace ndzip::mpi {

// Transfers on one NCCL communicator and one device instance, with the memory they need
// kept between calls (as ndzip::mpi::communicator), and a GPU stream for NCCL's operations.
// Copies share both, and their calls take turns (a call from another thread waits for the one
// under way); NCCL's own rule still holds: the order of calls on the NCCL communicator must be
// the same on both sides.
template <class ExecSpace = Kokkos::DefaultExecutionSpace>
class nccl_communicator {
  static_assert(std::is_same_v<ExecSpace, detail::gpu::space>,
                "ndzip::mpi::nccl_communicator runs on instances of Kokkos' device backend "
                "(Kokkos::Cuda with NCCL, HIP with RCCL)");

 public:
  nccl_communicator(const ExecSpace& exec, ncclComm_t comm, const options& opts = {})
      : m_comm(comm),
        m_opts(opts),
        m_memory(std::make_shared<detail::buffer_pool<ExecSpace>>(exec)),
        m_codecs(std::make_shared<detail::codec_cache<ExecSpace>>(exec)),
        m_shared(std::make_shared<shared_state>()) {
    if (comm == nullptr)
      throw std::invalid_argument("ndzip::mpi::nccl_communicator: the NCCL communicator is null");
    if (opts.checksum)
      throw std::invalid_argument(
          "ndzip::mpi::nccl_communicator: options::checksum is not available over NCCL (its "
          "heads are read ahead of their payloads); send through MPI for checksummed transfers");
    detail::check_nccl(ncclCommUserRank(comm, &m_rank), "ncclCommUserRank", comm);
    detail::check_nccl(ncclCommCount(comm, &m_size), "ncclCommCount", comm);
  }

  ncclComm_t comm() const { return m_comm; }
  const ExecSpace& execution_space_instance() const { return m_memory->exec(); }
  const options& transfer_options() const { return m_opts; }

  template <class View>
  transfer_stats send(const View& values, int peer) const {
    call c(m_comm, *m_shared);
    add_send(c, values, peer, choose(peer, values.size() * sizeof(typename View::value_type)));
    return complete(c).sent;
  }
  template <class View>
  transfer_stats recv(const View& values, int peer) const {
    call c(m_comm, *m_shared);
    add_receive(c, values, peer);
    return complete(c).received;
  }
  // Sends `out` to `dest` and receives `in` from `source` at once (dest and source may be the
  // same rank).
  template <class SendView, class RecvView>
  exchange_stats sendrecv(const SendView& out, int dest, const RecvView& in, int source) const {
    call c(m_comm, *m_shared);
    add_send(c, out, dest, choose(dest, out.size() * sizeof(typename SendView::value_type)));
    add_receive(c, in, source);
    return complete(c);
  }
  // Every piece at once (a halo: faces, edges and corners, strided subviews of one block).
  // Between two ranks the pieces are matched by their tags: the sends to a peer go in the
  // order of their tags, the receives from a peer are taken in the order of theirs, so both
  // sides must give the same tags (as an MPI exchange does). Pieces are compressed, unless
  // options::compression is never (the adaptive choice times whole transfers, not pieces).
  template <class View>
  exchange_stats exchange(const std::vector<piece<View>>& sends,
                          const std::vector<piece<View>>& receives) const {
    call c(m_comm, *m_shared);
    for (const piece<View>* p : by_peer_and_tag(sends))
      add_send(c, p->values, p->peer,
               m_opts.compression == compression_choice::never ? detail::send_mode::plain
                                                               : detail::send_mode::compressed,
               false);
    for (const piece<View>* p : by_peer_and_tag(receives)) add_receive(c, p->values, p->peer);
    return complete(c);
  }

  // The collectives of ndzip/mpi.hpp "Collectives" over NCCL (the same arguments as over MPI,
  // without the communicator; every rank calls, in the same order as its other NCCL calls on
  // the communicator, one at a time). A plan keeps its scratch and a stream of its own between
  // calls; the one-call forms make one per call.
  template <class View>
  collective_plan plan_bcast(const View& values, int root) const {
    return plan<View, View>(
        [&](int rank, int) { return detail::bcast_arguments(values, root, rank); });
  }
  template <class SendView, class RecvView>
  collective_plan plan_gather(const SendView& send, const std::vector<RecvView>& recvs,
                              int root) const {
    return plan<SendView, RecvView>([&](int rank, int size) {
      return detail::gather_arguments(send, recvs, root, rank, size);
    });
  }
  template <class SendView, class RecvView>
  collective_plan plan_scatter(const std::vector<SendView>& sends, const RecvView& recv,
                               int root) const {
    return plan<SendView, RecvView>([&](int rank, int size) {
      return detail::scatter_arguments(sends, recv, root, rank, size);
    });
  }
  template <class SendView, class RecvView>
  collective_plan plan_allgather(const SendView& send, const std::vector<RecvView>& recvs) const {
    return plan<SendView, RecvView>(
        [&](int rank, int size) { return detail::allgather_arguments(send, recvs, rank, size); });
  }
  template <class SendView, class RecvView>
  collective_plan plan_alltoall(const std::vector<SendView>& sends,
                                const std::vector<RecvView>& recvs) const {
    return plan<SendView, RecvView>(
        [&](int rank, int size) { return detail::alltoall_arguments(sends, recvs, rank, size); });
  }
  template <class View>
  collective_stats bcast(const View& values, int root) const {
    return plan_bcast(values, root).execute();
  }
  template <class SendView, class RecvView>
  collective_stats gather(const SendView& send, const std::vector<RecvView>& recvs,
                          int root) const {
    return plan_gather(send, recvs, root).execute();
  }
  template <class SendView, class RecvView>
  collective_stats scatter(const std::vector<SendView>& sends, const RecvView& recv,
                           int root) const {
    return plan_scatter(sends, recv, root).execute();
  }
  template <class SendView, class RecvView>
  collective_stats allgather(const SendView& send, const std::vector<RecvView>& recvs) const {
    return plan_allgather(send, recvs).execute();
  }
  template <class SendView, class RecvView>
  collective_stats alltoall(const std::vector<SendView>& sends,
                            const std::vector<RecvView>& recvs) const {
    return plan_alltoall(sends, recvs).execute();
  }

 private:
  template <class SendView, class RecvView, class Arguments>
  collective_plan plan(Arguments&& arguments_for) const {
    return collective_plan(detail::make_collective_call<ExecSpace, SendView, RecvView>(
        m_memory->exec(), detail::nccl_collective_link<ExecSpace>(m_memory, m_comm, m_rank, m_size),
        arguments_for, m_opts));
  }

  // What copies of a communicator share: the stream its calls queue NCCL's operations on, and
  // what the adaptive choice measured (options::compression), with the sends whose GPU time is
  // read back once it is known.
  struct shared_state {
    struct pending {
      int peer;
      std::uint64_t bytes;
      detail::send_mode mode;
      detail::gpu::event started, ended;
      detail::gpu::event last_started, last_ended;  // the last segment's compression, or none
    };
    std::mutex mutex;       // held by a call, from its first NCCL operation to its last
    detail::nccl_stream stream;
    detail::send_history history;
    std::vector<pending> sends;

    ~shared_state() {
      for (const pending& p : sends) release(p);
    }
    static void release(const pending& p) {
      for (detail::gpu::event e :
           std::array<detail::gpu::event, 4>{p.started, p.ended, p.last_started, p.last_ended})
        if (e) detail::gpu::release(e);
    }
    // Records the sends whose events are done (a failed one is dropped: the fault is the
    // caller's to see at its next call on the device).
    void collect() {
      std::vector<pending> still;
      for (const pending& p : sends) {
        bool ended = false;
        try {
          ended = detail::gpu::done(p.ended);
        } catch (const error&) {
          release(p);
          continue;
        }
        if (!ended) {
          still.push_back(p);
          continue;
        }
        // A compressed transfer is over once its receiver has decoded the last segment, which
        // the sender does not see: it counts the time it took to compress it instead (decoding
        // runs about as fast), so that the choice does not lean to compressing by that much.
        float ms = 0, last_ms = 0;
        if (detail::gpu::elapsed_ms(p.started, p.ended, ms) &&
            (!p.last_started || detail::gpu::elapsed_ms(p.last_started, p.last_ended, last_ms)))
          history.record(p.peer, 0, p.bytes, p.mode, 1e-3 * (ms + last_ms));
        release(p);
      }
      sends = std::move(still);
    }
  };

  // One call's transfers: their rounds of NCCL operations, the strided Views they pack or unpack
  // through C-order copies in the pool, and the send to time (a lone one, adaptive).
  struct call {
    call(ncclComm_t comm, shared_state& t) : hold(t.mutex), ops(comm, t.stream) {}
    std::unique_lock<std::mutex> hold;  // one call at a time on the kept stream
    detail::nccl_operations ops;
    std::vector<std::unique_ptr<detail::nccl_side>> sends, receives;
    std::vector<std::function<void()>> unpack;
    std::vector<typename detail::buffer_pool<ExecSpace>::device_lease> copies;
    struct timed {
      int peer;
      std::uint64_t bytes;
      detail::send_mode mode;
      detail::gpu::event last_started = nullptr, last_ended = nullptr;
    };
    std::optional<timed> timed_send;
    ~call() {
      // A failed call keeps the events its timed send was given.
      if (timed_send)
        for (detail::gpu::event e : std::array<detail::gpu::event, 2>{timed_send->last_started,
                                                        timed_send->last_ended})
          if (e) detail::gpu::release(e);
    }
  };

  template <class View>
  static std::vector<const piece<View>*> by_peer_and_tag(const std::vector<piece<View>>& pieces) {
    std::vector<const piece<View>*> sorted;
    for (const auto& p : pieces) sorted.push_back(&p);
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
      return std::tie(a->peer, a->tag) < std::tie(b->peer, b->tag);
    });
    return sorted;
  }

  template <bool Receiving, class View>
  void check_view(const View& v, int peer) const {
    detail::check_view_type<View, ExecSpace>();
    if constexpr (Receiving)
      static_assert(!std::is_const_v<typename View::value_type>,
                    "ndzip::mpi::nccl_communicator receives into writable Views");
    if (peer < 0 || peer >= m_size)
      throw std::invalid_argument("ndzip::mpi::nccl_communicator: rank " + std::to_string(peer) +
                                  " is not in the NCCL communicator of " +
                                  std::to_string(m_size) + " ranks (" +
                                  ndzip::detail::view_label(v) + ")");
  }

  // A C-order copy of a strided View in the pool (its values, for a send, queued on the
  // instance), or the View's own memory.
  template <class View>
  auto* c_order_values(call& c, const View& v, bool copy_in) const {
    using T = typename View::value_type;
    if (detail::is_c_contiguous(v)) return v.data();
    c.copies.push_back(m_memory->device_buffer(std::max<std::size_t>(v.size(), 1) * sizeof(T)));
    auto* data = reinterpret_cast<std::remove_const_t<T>*>(c.copies.back().data());
    if (copy_in) Kokkos::deep_copy(m_memory->exec(), detail::c_order_over(data, v), v);
    return static_cast<T*>(data);
  }

  template <class View>
  void add_send(call& c, const View& values, int peer, detail::send_mode mode,
                bool timed = true) const {
    check_view<false>(values, peer);
    using T = std::remove_const_t<typename View::value_type>;
    const T* data = c_order_values(c, values, true);
    auto side =
        std::make_unique<detail::nccl_outgoing<T, static_cast<int>(View::rank), ExecSpace>>(
            c.ops, m_memory, m_codecs, data, detail::extents_of(values), peer,
            mode == detail::send_mode::plain, m_opts);
    if (timed && adaptive() && values.size() > 0) {
      c.timed_send = typename call::timed{peer, values.size() * sizeof(T), mode};
      if (mode == detail::send_mode::compressed) {
        c.timed_send->last_started = detail::gpu::new_event(true);
        c.timed_send->last_ended = detail::gpu::new_event(true);
        side->time_last_segment(c.timed_send->last_started, c.timed_send->last_ended);
      }
    }
    c.sends.push_back(std::move(side));
  }

  template <class View>
  void add_receive(call& c, const View& values, int peer) const {
    check_view<true>(values, peer);
    using T = typename View::value_type;
    T* data = c_order_values(c, values, false);
    if (data != values.data())
      c.unpack.push_back([exec = m_memory->exec(), values, data] {
        Kokkos::deep_copy(exec, values, detail::c_order_over(data, values));
      });
    auto side =
        std::make_unique<detail::nccl_incoming<T, static_cast<int>(View::rank), ExecSpace>>(
            c.ops, m_memory, m_codecs, data, detail::extents_of(values), peer,
            ndzip::detail::view_label(values));
    c.receives.push_back(std::move(side));
  }

  // Runs the call's rounds (detail/nccl/rounds.hpp), unpacks strided receives on the instance
  // and records what the adaptive choice learns.
  exchange_stats complete(call& c) const {
    const ExecSpace& exec = m_memory->exec();
    detail::gpu::event started = nullptr;
    if (c.timed_send) {
      started = detail::gpu::new_event(true);
      detail::gpu::record(started, detail::gpu::stream_of(exec));
    }
    std::vector<detail::nccl_side*> sides;
    for (auto& s : c.sends) sides.push_back(s.get());
    for (auto& s : c.receives) sides.push_back(s.get());
    try {
      detail::run_rounds(c.ops, exec, sides);
    } catch (...) {
      if (started) detail::gpu::release(started);
      throw;
    }
    for (const auto& u : c.unpack) u();
    exchange_stats stats;
    for (const auto& s : c.sends) {
      detail::accumulate(stats.sent, s->stats());
      stats.sent.plain = s->stats().plain;
    }
    for (const auto& s : c.receives) {
      detail::accumulate(stats.received, s->stats());
      stats.received.plain = s->stats().plain;
    }
    if (started) {
      // On the instance, after the NCCL operations and the decoders of a sendrecv's other
      // direction.
      const detail::gpu::event ended = detail::gpu::new_event(true);
      detail::gpu::record(ended, detail::gpu::stream_of(exec));
      m_shared->sends.push_back({c.timed_send->peer, c.timed_send->bytes, c.timed_send->mode,
                                 started, ended, c.timed_send->last_started,
                                 c.timed_send->last_ended});
      c.timed_send.reset();  // the shared state owns its events now
    }
    if (adaptive())
      for (const auto& s : c.receives)
        if (s->stats().raw_bytes > 0)
          m_shared->history.observe(s->peer(), s->stats().raw_bytes,
                                    s->stats().plain ? detail::send_mode::plain
                                                     : detail::send_mode::compressed);
    return stats;
  }

  bool adaptive() const { return m_opts.compression == compression_choice::adaptive; }

  detail::send_mode choose(int dest, std::uint64_t bytes) const {
    return detail::choose_send_mode(m_opts, [&] {
      // What the sends before this one measured, where the GPU has finished them (called
      // within a call, which holds the shared state's mutex).
      m_shared->collect();
      return m_shared->history.choose(dest, 0, bytes, m_rank > dest);
    });
  }

  ncclComm_t m_comm;
  options m_opts;
  int m_rank = 0, m_size = 0;
  std::shared_ptr<detail::buffer_pool<ExecSpace>> m_memory;
  std::shared_ptr<detail::codec_cache<ExecSpace>> m_codecs;
  std::shared_ptr<shared_state> m_shared;
};

}  // namespace ndzip::mpi
