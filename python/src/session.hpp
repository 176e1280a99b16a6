// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The Python extension's Kokkos session: Kokkos brought up when the module is imported (unless
// the process has it) and finalised at exit if the module did it; which backends can run on the
// calling thread; and the slots through which every compressor's Kokkos memory is released
// before Kokkos is finalised.

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <ndzip/dynamic.hpp>

namespace ndzip_python {

void require_kokkos();
void finalize_owned_kokkos();

// Kokkos 3 runs OpenMP work only on the thread that called Kokkos::initialize (a thread-local
// instance pointer, set on that thread alone; elsewhere Kokkos::OpenMP::in_parallel() is true),
// and the library refuses such calls (core/call_guard.hpp). Kokkos 4 has no such limit.
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
constexpr bool openmp_initial_thread_only = true;
#else
constexpr bool openmp_initial_thread_only = false;
#endif

// Whether `backend` can run on the calling thread (an unknown name: true, it is refused where
// the compressor is made, naming the build's backends).
bool runs_on_this_thread(const std::string& backend);
// RuntimeError, before anything runs, where `backend` cannot run on the calling thread.
void require_this_thread(const std::string& backend);
// The backend a call runs on: the one asked for, else the library's default, which is the same
// on every thread (the first of ndzip.backends()); RuntimeError if it cannot run on this thread.
std::string backend_for_call(const std::optional<std::string>& asked);

// A compressor's Kokkos memory must be released before Kokkos is finalised, by whoever finalises
// it (this module at interpreter exit, or the application): every ndzip.Compressor keeps its
// dynamic_compressors in a slot, and a Kokkos finalize hook empties all slots still alive. A
// Compressor used after that raises RuntimeError.
struct codec_slot {
  std::mutex mutex;  // taken only with the GIL released (no lock-order cycle with the GIL)
  std::optional<ndzip::dynamic_compressor> codec;  // on the backend's own instance
  // Device arrays: on the stream of the latest call that had them (remade when it changes).
  std::optional<ndzip::dynamic_compressor> on_stream;
  std::uintptr_t stream = 0;
  int device = -1;
  bool finalised = false;
};

// Enters a slot, to be emptied by the Kokkos finalize hook if it is still alive then.
void register_slot(const std::shared_ptr<codec_slot>& slot);

}  // namespace ndzip_python
