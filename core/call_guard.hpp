// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What makes the library safe to call from several host threads at once (the rules for users
// are in docs/API.md and docs/ROBUSTNESS.md):
// - each compressor serialises its own calls, since they share its scratch;
// - before Kokkos 4.4 all of the library's calls are serialised by one process-wide lock:
//   Kokkos 3.x Serial keeps its team scratch in one global buffer (two concurrent launches
//   corrupt each other), and Kokkos 4.0-4.3 Serial and OpenMP instances do not serialise the
//   launches of different threads. Kokkos 4.4 added a mutex per execution-space instance to
//   Serial and OpenMP, so from then on compressors on distinct instances run concurrently and
//   Kokkos itself serialises the kernels of a shared instance;
// - Kokkos 3.x runs OpenMP work only from the thread that called Kokkos::initialize (other
//   threads get "in parallel or not initialized" from deep inside Kokkos): refused up front.

#include <mutex>
#include <stdexcept>
#include <type_traits>

#include <Kokkos_Core.hpp>

namespace ndzip::core {

inline constexpr bool kokkos_serialises_instances = KOKKOS_VERSION >= 40400;

// One per process: every caller is in the library's own translation units.
inline std::mutex& library_mutex() {
  static std::mutex mutex;
  return mutex;
}

template <class ExecSpace>
void check_calling_thread() {
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  if constexpr (std::is_same_v<ExecSpace, Kokkos::OpenMP>) {
    if (Kokkos::OpenMP::in_parallel())
      throw std::logic_error(
          "ndzip: Kokkos 3 runs OpenMP work only on the thread that called Kokkos::initialize, "
          "outside parallel regions; call ndzip's OpenMP backend from that thread, or use the "
          "Serial backend (or Kokkos 4) from other threads");
  }
#endif
}

// Held for the whole of a library call (the host-side sequence of launches and reads).
template <class ExecSpace>
class call_guard {
 public:
  // `object`: the compressor's own mutex, or nullptr while it is being built.
  explicit call_guard(std::mutex* object) {
    check_calling_thread<ExecSpace>();
    if (object) m_object = std::unique_lock<std::mutex>(*object);
    if constexpr (!kokkos_serialises_instances)
      m_library = std::unique_lock<std::mutex>(library_mutex());
  }

 private:
  // Always the compressor first, then the library: one order, so no deadlock.
  std::unique_lock<std::mutex> m_object;
  std::unique_lock<std::mutex> m_library;
};

}  // namespace ndzip::core
