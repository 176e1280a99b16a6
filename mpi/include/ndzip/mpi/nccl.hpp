// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::nccl_communicator: Kokkos::Cuda Views sent and received compressed through NCCL,
// for GPUs whose MPI is not GPU-aware (or codes that move their data with NCCL already). Built
// where ndzip::mpi finds NCCL at configure time (NDZIP_MPI_NCCL; NDZIP_MPI_HAS_NCCL is then
// defined); it needs no MPI call, the user makes the NCCL communicator.
//
//   ndzip::mpi::nccl_communicator<Kokkos::Cuda> nc(exec, nccl_comm);
//   nc.send(values, peer);                     // on one rank
//   nc.recv(values, peer);                     // on the other
//   nc.sendrecv(face_out, right, face_in, left);  // both directions at once
//
// NCCL's rules hold: a send is matched by the peer's receive of the same order on the
// communicator, with nothing but ndzip transfers between them (and in that order also among
// other NCCL calls on it); two ranks that exchange call sendrecv(), not send() and recv(), or the
// two directions wait for each other (NCCL's blocking operations). A transfer is one NCCL send
// and receive per round (docs/FORMAT.md "NCCL transfers"): the receiver learns each payload's
// size two rounds ahead from the segment heads, so the host reads 32 bytes per segment and the
// link is never idle for it. The operations go on a stream of the call's own, ordered after the
// work queued on `exec` before the call, and the work queued on `exec` after the call runs
// after them: values sent plain are read, and received values written, by then (as ncclSend on
// exec's stream would). send() returns once the last segment is compressed and queued (its
// buffers stay in the communicator's memory until the stream has sent them); recv() and
// sendrecv() return once every segment has arrived and decoded, having checked it.
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
// last NCCL operation (in a sendrecv, and of decoding what it received; read back at a later
// call, never waited for), per peer and size.

#ifndef NDZIP_MPI_HAS_NCCL
#error "ndzip/mpi/nccl.hpp: this ndzip::mpi was built without NCCL (NDZIP_MPI_NCCL)"
#endif

#include <cuda_runtime.h>
#include <nccl.h>

#include <Kokkos_Core.hpp>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "ndzip/mpi/detail/nccl_lane.hpp"
#include "ndzip/mpi/detail/nccl_rounds.hpp"
#include "ndzip/mpi/detail/scratch.hpp"
#include "ndzip/mpi/detail/send_choice.hpp"
#include "ndzip/mpi/detail/view_support.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi {

// Transfers on one NCCL communicator and one Kokkos::Cuda instance, with the memory they need
// kept between calls (as ndzip::mpi::communicator). Calls on one object come from one thread at
// a time (NCCL's rule for a communicator). Copies share the kept memory.
template <class ExecSpace = Kokkos::DefaultExecutionSpace>
class nccl_communicator {
#ifdef KOKKOS_ENABLE_CUDA
  static_assert(std::is_same_v<ExecSpace, Kokkos::Cuda>,
                "ndzip::mpi::nccl_communicator runs on Kokkos::Cuda instances");
#else
  static_assert(!sizeof(ExecSpace), "ndzip::mpi::nccl_communicator needs Kokkos with CUDA");
#endif

 public:
  nccl_communicator(const ExecSpace& exec, ncclComm_t comm, const options& opts = {})
      : m_comm(comm),
        m_opts(opts),
        m_memory(std::make_shared<detail::scratch<ExecSpace>>(exec)),
        m_timing(std::make_shared<timing>()) {
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
    return run_calls(&values, peer, static_cast<View*>(nullptr), -1).first;
  }
  template <class View>
  transfer_stats recv(const View& values, int peer) const {
    return run_calls(static_cast<View*>(nullptr), -1, &values, peer).second;
  }
  // Sends `out` to `dest` and receives `in` from `source` at once (dest and source may be the
  // same rank): (what was sent, what was received).
  template <class SendView, class RecvView>
  std::pair<transfer_stats, transfer_stats> sendrecv(const SendView& out, int dest,
                                                     const RecvView& in, int source) const {
    return run_calls(&out, dest, &in, source);
  }

 private:
  // Sends whose GPU time is read back once it is known (options::compression, adaptive).
  struct timing {
    struct pending {
      int peer;
      std::uint64_t bytes;
      detail::send_mode mode;
      cudaEvent_t started, ended;
    };
    std::mutex mutex;
    detail::send_history history;
    std::vector<pending> sends;

    ~timing() {
      for (const pending& p : sends) {
        cudaEventDestroy(p.started);
        cudaEventDestroy(p.ended);
      }
    }
    // Records the sends whose events are done.
    void collect() {
      std::vector<pending> still;
      for (const pending& p : sends) {
        if (cudaEventQuery(p.ended) != cudaSuccess) {
          still.push_back(p);
          continue;
        }
        float ms = 0;
        if (cudaEventElapsedTime(&ms, p.started, p.ended) == cudaSuccess)
          history.record(p.peer, 0, p.bytes, p.mode, 1e-3 * ms);
        cudaEventDestroy(p.started);
        cudaEventDestroy(p.ended);
      }
      sends = std::move(still);
    }
  };

  template <class View>
  void check_view(const View& v, int peer, bool receiving) const {
    detail::check_view_type<View, ExecSpace>();
    if (receiving)
      static_assert(!std::is_const_v<typename View::value_type>,
                    "ndzip::mpi::nccl_communicator receives into a writable View");
    if (!detail::is_c_contiguous(v))
      throw std::invalid_argument(
          "ndzip::mpi::nccl_communicator: " + ndzip::detail::view_label(v) +
          " is strided; NCCL transfers take Views whose elements lie densely in C order");
    if (peer < 0 || peer >= m_size)
      throw std::invalid_argument("ndzip::mpi::nccl_communicator: rank " + std::to_string(peer) +
                                  " is not in the NCCL communicator of " +
                                  std::to_string(m_size) + " ranks");
  }

  template <class SendView, class RecvView>
  std::pair<transfer_stats, transfer_stats> run_calls(const SendView* out, int dest,
                                                      const RecvView* in, int source) const {
    std::lock_guard<std::mutex> lock(m_timing->mutex);
    m_timing->collect();
    const ExecSpace& exec = m_memory->exec();
    detail::nccl_lane lane(m_comm);
    std::vector<detail::nccl_side*> sides;
    std::unique_ptr<detail::nccl_side> sending, receiving;
    cudaEvent_t started = nullptr;
    std::uint64_t send_bytes = 0;
    detail::send_mode mode = detail::send_mode::compressed;
    if (out) {
      check_view(*out, dest, false);
      using T = std::remove_const_t<typename SendView::value_type>;
      send_bytes = out->size() * sizeof(T);
      mode = choose(dest, send_bytes);
      sending = std::make_unique<
          detail::nccl_outgoing<T, static_cast<int>(SendView::rank), ExecSpace>>(
          lane, m_memory, out->data(), detail::extents_of(*out), dest,
          mode == detail::send_mode::plain, m_opts);
      sides.push_back(sending.get());
      if (adaptive() && send_bytes > 0) {
        detail::check_cuda(cudaEventCreate(&started), "cudaEventCreate");
        detail::check_cuda(cudaEventRecord(started, exec.cuda_stream()), "cudaEventRecord");
      }
    }
    if (in) {
      check_view(*in, source, true);
      using T = typename RecvView::value_type;
      receiving =
          std::make_unique<detail::nccl_incoming<T, static_cast<int>(RecvView::rank), ExecSpace>>(
              lane, m_memory, in->data(), detail::extents_of(*in), source,
              ndzip::detail::view_label(*in));
      sides.push_back(receiving.get());
    }
    try {
      detail::run_rounds(lane, exec, sides);
    } catch (...) {
      if (started) cudaEventDestroy(started);
      throw;
    }
    std::pair<transfer_stats, transfer_stats> stats;
    if (sending) {
      using T = std::remove_const_t<typename SendView::value_type>;
      stats.first = static_cast<detail::nccl_outgoing<T, static_cast<int>(SendView::rank),
                                                      ExecSpace>&>(*sending)
                        .stats();
      if (started) {
        cudaEvent_t ended = nullptr;
        detail::check_cuda(cudaEventCreate(&ended), "cudaEventCreate");
        // On the instance, after the lane and the decoders of a sendrecv's other direction.
        detail::check_cuda(cudaEventRecord(ended, exec.cuda_stream()), "cudaEventRecord");
        m_timing->sends.push_back({dest, send_bytes, mode, started, ended});
      }
    }
    if (receiving) {
      using T = typename RecvView::value_type;
      const auto& r = static_cast<detail::nccl_incoming<T, static_cast<int>(RecvView::rank),
                                                        ExecSpace>&>(*receiving);
      stats.second = r.stats();
      if (adaptive() && stats.second.raw_bytes > 0)
        m_timing->history.observe(source, stats.second.raw_bytes,
                                  r.plain() ? detail::send_mode::plain
                                            : detail::send_mode::compressed);
    }
    return stats;
  }

  bool adaptive() const { return m_opts.compression == compression_choice::adaptive; }

  detail::send_mode choose(int dest, std::uint64_t bytes) const {
    switch (m_opts.compression) {
      case compression_choice::always:
        return detail::send_mode::compressed;
      case compression_choice::never:
        return detail::send_mode::plain;
      default:
        return m_timing->history.choose(dest, 0, bytes, m_rank > dest);
    }
  }

  ncclComm_t m_comm;
  options m_opts;
  int m_rank = 0, m_size = 0;
  std::shared_ptr<detail::scratch<ExecSpace>> m_memory;
  std::shared_ptr<timing> m_timing;
};

}  // namespace ndzip::mpi
