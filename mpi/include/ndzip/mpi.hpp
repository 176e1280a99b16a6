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
//
// On the wire (docs/FORMAT.md "MPI messages"). A View is cut into segments of whole rows of its
// slowest dimension (options::segment_bytes); each is compressed on `exec` and sent as soon as it
// is ready, so that compression overlaps the transfer of the segments before it. A segment whose
// stream would not be smaller than its values is sent raw: the wire never carries more than the
// values plus 96 bytes and 32 per further segment. Device data is staged through host-pinned
// memory in compressed form.
//
// Matching. A transfer is one or more MPI messages on the caller's (comm, tag); a receive
// matches a send as MPI_Recv matches MPI_Send (MPI_ANY_SOURCE and MPI_ANY_TAG work). Do not
// post plain MPI receives that could match the same peer and tag while an ndzip::mpi transfer
// is under way: they could take one of its segments.
//
// Checks on arrival. The head of every message says the element type and extents it holds: a
// receive into a View of another type or other extents throws ndzip::mpi::mismatch_error
// naming both, after consuming the whole message (no message is left to match later, no rank
// hangs, nothing is written). Every segment is checked against its head (index, size) and, with
// options::checksum (the default), against its XXH3-64: a damaged or truncated segment throws
// ndzip::stream_error, after the rest of the message is consumed. A message whose own head is
// damaged throws ndzip::stream_error at once (its segments cannot be told apart then).
//
// Threads. MPI must be initialised with MPI_Init_thread and at least MPI_THREAD_FUNNELED: the
// calls then come from the thread that initialised MPI. With MPI_THREAD_SERIALIZED they may come
// from any thread, one at a time; with MPI_THREAD_MULTIPLE from several threads at once (the
// library serialises its own matching). With MPI_THREAD_SINGLE (what MPI_Init gives Open MPI) or
// from another thread under FUNNELED, every call throws std::logic_error saying so.
//
// Aliasing and lifetimes. isend() compresses and posts every segment before it returns: the
// values may be changed as soon as it has returned. irecv() writes into its View until the
// request completes; keep the View alive and untouched until then. A request destroyed before
// completion first completes its MPI messages (errors are then reported on standard error).

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#include "ndzip/mpi/transfer.hpp"
#include "ndzip/mpi/wire_format.hpp"

namespace ndzip::mpi {

struct options {
  // Values per segment, in bytes (rounded down to whole rows of the slowest dimension; one row
  // at least). Smaller segments overlap compression and transfer more finely; each costs a
  // message and a kernel launch.
  std::size_t segment_bytes = std::size_t{16} << 20;
  // XXH3-64 of every segment, written by the sender and checked by the receiver (the sender's
  // setting is the one that counts).
  bool checksum = true;
};

// A send or receive in flight.
class request {
 public:
  request() = default;
  explicit request(std::unique_ptr<detail::transfer> transfer) : m_transfer(std::move(transfer)) {}
  request(request&&) noexcept = default;
  request& operator=(request&& other) noexcept {
    if (this != &other) {
      complete_quietly();
      m_transfer = std::move(other.m_transfer);
      m_done = other.m_done;
      m_stats = other.m_stats;
    }
    return *this;
  }
  ~request() { complete_quietly(); }

  // Blocks until the transfer is complete. Throws what went wrong (see ndzip/mpi.hpp).
  void wait() { advance(true); }
  // Advances the transfer without blocking; true once it is complete.
  bool test() { return advance(false); }
  bool done() const { return m_done; }
  // The raw and wire bytes of the transfer (complete once done()).
  const transfer_stats& stats() const { return m_transfer ? m_transfer->stats() : m_stats; }

 private:
  bool advance(bool block) {
    if (m_done || !m_transfer) return true;
    try {
      if (!m_transfer->progress(block)) return false;
    } catch (...) {
      release();
      throw;
    }
    release();
    return true;
  }
  void release() {
    m_stats = m_transfer->stats();
    m_transfer.reset();
    m_done = true;
  }
  void complete_quietly() noexcept {
    try {
      wait();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ndzip::mpi: a request destroyed before it completed failed: %s\n",
                   e.what());
    }
  }

  std::unique_ptr<detail::transfer> m_transfer;
  transfer_stats m_stats;
  bool m_done = false;
};

namespace detail {

template <class View, class ExecSpace>
constexpr void check_view_type() {
  static_assert(Kokkos::is_view<View>::value, "ndzip::mpi: values must be a Kokkos::View");
  using T = std::remove_const_t<typename View::value_type>;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "ndzip::mpi sends Views of float or double");
  static_assert(View::rank >= 1 && View::rank <= 3, "ndzip::mpi sends rank-1, -2 and -3 Views");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "ndzip::mpi: the View is not accessible from the execution space");
}

// Whether the View's elements lie densely in C order of its indices (LayoutRight, or any
// layout whose strides happen to be those).
template <class View>
bool is_c_contiguous(const View& v) {
  std::size_t expected = 1;
  for (int a = static_cast<int>(View::rank) - 1; a >= 0; --a) {
    if (v.extent(a) > 1 && static_cast<std::size_t>(v.stride(a)) != expected) return false;
    expected *= v.extent(a);
  }
  return true;
}

template <class View>
std::array<std::uint64_t, 3> extents_of(const View& v) {
  std::array<std::uint64_t, 3> e = {1, 1, 1};
  for (int a = 0; a < static_cast<int>(View::rank); ++a) e[a] = v.extent(a);
  return e;
}

// A C-order View of the same extents over `data` (to copy into or out of a strided View).
template <class T, class View>
auto c_order_over(T* data, const View& like) {
  using memory_space = typename View::memory_space;
  using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  if constexpr (View::rank == 1)
    return Kokkos::View<T*, Kokkos::LayoutRight, memory_space, unmanaged>(data, like.extent(0));
  else if constexpr (View::rank == 2)
    return Kokkos::View<T**, Kokkos::LayoutRight, memory_space, unmanaged>(data, like.extent(0),
                                                                           like.extent(1));
  else
    return Kokkos::View<T***, Kokkos::LayoutRight, memory_space, unmanaged>(
        data, like.extent(0), like.extent(1), like.extent(2));
}

inline std::string label_of(const std::string& label) {
  return label.empty() ? std::string("View") : "View \"" + label + "\"";
}

}  // namespace detail

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
