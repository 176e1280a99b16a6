// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::send, recv, isend and irecv (ndzip/mpi.hpp).

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <functional>
#include <memory>
#include <type_traits>

#include "ndzip/mpi/request.hpp"
#include "ndzip/mpi/transfer.hpp"
#include "ndzip/mpi/view_support.hpp"
#include "ndzip/mpi/wire_format.hpp"

namespace ndzip::mpi {

// Starts sending `values` to rank `dest` of `comm` with `tag`; returns once every segment is
// compressed and posted (the values may then change). The request completes when MPI has sent
// every message.
template <class ExecSpace, class View>
request isend(const ExecSpace& exec, const View& values, int dest, int tag, MPI_Comm comm,
              const options& opts = {}) {
  detail::check_view_type<View, ExecSpace>();
  detail::require_mpi_ready("isend");
  using T = std::remove_const_t<typename View::value_type>;
  using memory_space = typename ExecSpace::memory_space;
  constexpr int dims = static_cast<int>(View::rank);
  Kokkos::View<T*, memory_space> packed;
  const T* data = values.data();
  if (!detail::is_c_contiguous(values)) {
    packed = Kokkos::View<T*, memory_space>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi packed"), values.size());
    Kokkos::deep_copy(exec, detail::c_order_over(packed.data(), values), values);
    data = packed.data();
  }
  return request(std::make_unique<detail::send_transfer<T, dims, ExecSpace>>(
      exec, data, detail::extents_of(values), std::move(packed), dest, tag, comm,
      opts.segment_bytes, opts.checksum));
}

// Starts receiving into `values` from rank `source` (or MPI_ANY_SOURCE) of `comm` with `tag`
// (or MPI_ANY_TAG). Nothing happens until the request is tested or waited for; its wait()
// throws ndzip::mpi::mismatch_error or ndzip::stream_error as described above.
template <class ExecSpace, class View>
request irecv(const ExecSpace& exec, const View& values, int source, int tag, MPI_Comm comm) {
  detail::check_view_type<View, ExecSpace>();
  static_assert(!std::is_const_v<typename View::value_type>,
                "ndzip::mpi::irecv needs a writable View");
  detail::require_mpi_ready("irecv");
  using T = typename View::value_type;
  using memory_space = typename ExecSpace::memory_space;
  constexpr int dims = static_cast<int>(View::rank);
  T* target = values.data();
  std::function<void()> finish;
  if (!detail::is_c_contiguous(values)) {
    Kokkos::View<T*, memory_space> packed(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi packed"), values.size());
    target = packed.data();
    finish = [exec, values, packed] {
      Kokkos::deep_copy(exec, values, detail::c_order_over(packed.data(), values));
      exec.fence();
    };
  }
  return request(std::make_unique<detail::recv_transfer<T, dims, ExecSpace>>(
      exec, target, detail::extents_of(values), std::move(finish), detail::label_of(values.label()),
      source, tag, comm));
}

// Blocking forms: isend(...).wait() and irecv(...).wait().
template <class ExecSpace, class View>
transfer_stats send(const ExecSpace& exec, const View& values, int dest, int tag, MPI_Comm comm,
                    const options& opts = {}) {
  request r = isend(exec, values, dest, tag, comm, opts);
  r.wait();
  return r.stats();
}

template <class ExecSpace, class View>
transfer_stats recv(const ExecSpace& exec, const View& values, int source, int tag, MPI_Comm comm) {
  request r = irecv(exec, values, source, tag, comm);
  r.wait();
  return r.stats();
}

}  // namespace ndzip::mpi
