// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::send, recv, isend and irecv over MPI (ndzip/mpi.hpp): the communicator and the
// one-call forms. The transfers themselves: detail/mpi/point_to_point_send.hpp and
// point_to_point_recv.hpp; through NCCL, nccl_communicator::send and recv (ndzip/mpi/nccl.hpp).

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <functional>
#include <memory>
#include <type_traits>

#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/codec_cache.hpp"
#include "ndzip/mpi/detail/core/send_choice.hpp"
#include "ndzip/mpi/detail/core/view_support.hpp"
#include "ndzip/mpi/detail/mpi/point_to_point_recv.hpp"
#include "ndzip/mpi/detail/mpi/point_to_point_send.hpp"
#include "ndzip/mpi/detail/mpi/runtime.hpp"
#include "ndzip/mpi/detail/mpi/transport.hpp"
#include "ndzip/mpi/options.hpp"
#include "ndzip/mpi/request.hpp"

namespace ndzip::mpi {

// Compressed transfers on one communicator and one execution-space instance, with the memory
// they need kept between transfers (host staging, device stream buffers, the codecs of the slab
// shapes seen) and what its sends have measured (options::compression): after the first
// transfers of each size and shape, a transfer allocates nothing but the packed copy of a
// strided View. Code that sends or receives repeatedly keeps one; the free functions below make
// a temporary one per call.
//
// Threads: its calls may come from several threads (as MPI's thread level allows; ndzip/mpi.hpp),
// the kept memory is locked. Copyable: copies share the kept memory.
template <class ExecSpace = Kokkos::DefaultExecutionSpace>
class communicator {
 public:
  communicator(const ExecSpace& exec, MPI_Comm comm, const options& opts = {})
      : m_comm(comm),
        m_opts(opts),
        m_buffers(std::make_shared<detail::buffer_pool<ExecSpace>>(exec)),
        m_codecs(std::make_shared<detail::codec_cache<ExecSpace>>(exec)),
        m_history(std::make_shared<detail::send_history>()) {}

  MPI_Comm comm() const { return m_comm; }
  const ExecSpace& execution_space_instance() const { return m_buffers->exec(); }
  const options& transfer_options() const { return m_opts; }

  // Starts sending `values` to rank `dest` with `tag`; returns once every segment is compressed
  // and posted (the values may then change, unless options::values_stay_until_complete). The
  // request completes when MPI has sent every message.
  template <class View>
  request isend(const View& values, int dest, int tag) const {
    return start_send(values, dest, tag, m_opts.values_stay_until_complete, "isend");
  }

  // Starts receiving into `values` from rank `source` (or MPI_ANY_SOURCE) with `tag` (or
  // MPI_ANY_TAG). The receive matches before any posted after it (ndzip/mpi.hpp "Matching");
  // its messages are taken while this or any other ndzip::mpi receive is tested or waited for.
  // Its wait() throws ndzip::mpi::mismatch_error or ndzip::stream_error as ndzip/mpi.hpp says.
  template <class View>
  request irecv(const View& values, int source, int tag) const {
    detail::check_view_type<View, ExecSpace>();
    static_assert(!std::is_const_v<typename View::value_type>,
                  "ndzip::mpi::irecv needs a writable View");
    detail::require_mpi_ready("irecv");
    using T = typename View::value_type;
    using memory_space = typename ExecSpace::memory_space;
    T* target = values.data();
    std::function<void()> finish;
    if (!detail::is_c_contiguous(values)) {
      Kokkos::View<T*, memory_space> packed(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi packed"), values.size());
      target = packed.data();
      finish = [exec = m_buffers->exec(), values, packed] {
        Kokkos::deep_copy(exec, values, detail::c_order_over(packed.data(), values));
        exec.fence();
      };
    }
    return request(
        std::make_unique<detail::recv_transfer<T, static_cast<int>(View::rank), ExecSpace>>(
            detail::make_transport(m_buffers, transport(false)), m_codecs, target,
            detail::extents_of(values), std::move(finish), ndzip::detail::view_label(values),
            source, tag, m_comm, m_opts.checksum, m_history));
  }

  // Blocking forms: isend(...).wait() and irecv(...).wait(), sending plain values without a
  // copy where the transport can.
  template <class View>
  transfer_stats send(const View& values, int dest, int tag) const {
    request r = start_send(values, dest, tag, true, "send");
    r.wait();
    return r.stats();
  }
  template <class View>
  transfer_stats recv(const View& values, int source, int tag) const {
    request r = irecv(values, source, tag);
    r.wait();
    return r.stats();
  }

  // The transport this communicator's sends (`sending`) or receives take (options::transport):
  // in_place for host Views; in automatic mode, mpi_device where the MPI library reports GPU
  // support, except for sends with the checksum on (they hash on the host). Throws
  // std::invalid_argument for in_place asked of device Views.
  transport_kind transport(bool sending) const {
    return detail::chosen_transport<ExecSpace>(m_opts, sending);
  }

 private:
  // isend(); with `values_stay`, the values stay put until the request completes, so that a
  // plain transfer may hand them to MPI without a copy.
  template <class View>
  request start_send(const View& values, int dest, int tag, bool values_stay,
                     const char* call) const {
    detail::check_view_type<View, ExecSpace>();
    detail::require_mpi_ready(call);
    using T = std::remove_const_t<typename View::value_type>;
    using memory_space = typename ExecSpace::memory_space;
    const ExecSpace& exec = m_buffers->exec();
    Kokkos::View<T*, memory_space> packed;
    const T* data = values.data();
    if (!detail::is_c_contiguous(values)) {
      packed = Kokkos::View<T*, memory_space>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi packed"), values.size());
      Kokkos::deep_copy(exec, detail::c_order_over(packed.data(), values), values);
      data = packed.data();
    }
    return request(
        std::make_unique<detail::send_transfer<T, static_cast<int>(View::rank), ExecSpace>>(
            detail::make_transport(m_buffers, transport(true)), *m_codecs, data,
            detail::extents_of(values),
            std::move(packed), values_stay, dest, tag, m_comm, m_opts, m_history));
  }

  MPI_Comm m_comm;
  options m_opts;
  std::shared_ptr<detail::buffer_pool<ExecSpace>> m_buffers;
  std::shared_ptr<detail::codec_cache<ExecSpace>> m_codecs;
  std::shared_ptr<detail::send_history> m_history;
};

// One-call forms, each with a temporary communicator (which allocates its memory per call).
template <class ExecSpace, class View>
request isend(const ExecSpace& exec, const View& values, int dest, int tag, MPI_Comm comm,
              const options& opts = {}) {
  return communicator<ExecSpace>(exec, comm, opts).isend(values, dest, tag);
}

template <class ExecSpace, class View>
request irecv(const ExecSpace& exec, const View& values, int source, int tag, MPI_Comm comm,
              const options& opts = {}) {
  return communicator<ExecSpace>(exec, comm, opts).irecv(values, source, tag);
}

template <class ExecSpace, class View>
transfer_stats send(const ExecSpace& exec, const View& values, int dest, int tag, MPI_Comm comm,
                    const options& opts = {}) {
  return communicator<ExecSpace>(exec, comm, opts).send(values, dest, tag);
}

template <class ExecSpace, class View>
transfer_stats recv(const ExecSpace& exec, const View& values, int source, int tag, MPI_Comm comm,
                    const options& opts = {}) {
  return communicator<ExecSpace>(exec, comm, opts).recv(values, source, tag);
}

}  // namespace ndzip::mpi
