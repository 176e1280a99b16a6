// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The Kokkos the filter runs on. HDF5 loads the plugin into applications that may or may not
// use Kokkos themselves:
// - if the application has initialised Kokkos, the filter uses it and never finalises it;
// - otherwise the filter initialises Kokkos on first use (warnings off, so that nothing is
//   printed into a tool's output, unless KOKKOS_DISABLE_WARNINGS says otherwise; thread counts
//   from the usual KOKKOS_ and OMP_ environment variables, an OMP_NUM_THREADS above
//   ndzip::max_host_threads lowered to that) and finalises it at process exit.
// The work runs on a host backend, never on a GPU: OpenMP where Kokkos has it and it can be
// used from the calling thread, else Serial.

#include <Kokkos_Core.hpp>
#include <stdexcept>

namespace ndzip::hdf5_plugin {

// Initialises Kokkos unless it is initialised. Throws std::runtime_error if it cannot be (it
// was finalised already), std::invalid_argument if KOKKOS_NUM_THREADS asks for more than
// ndzip::max_host_threads.
void require_kokkos();

// The name (ndzip/backends.hpp) of the host backend this call should run on. Throws
// std::runtime_error where none can run on the calling thread.
inline const char* host_backend() {
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION >= 40000
  // Kokkos 4 runs OpenMP work from any thread (serially inside an OpenMP parallel region).
  return "openmp";
#else
#if defined(KOKKOS_ENABLE_OPENMP)
  // Kokkos 3 runs OpenMP work only on the thread that initialised it, outside OpenMP parallel
  // regions.
  if (!Kokkos::OpenMP::in_parallel()) return "openmp";
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
  return "serial";
#else
  throw std::runtime_error(
      "ndzip HDF5 filter: Kokkos' OpenMP backend cannot run on this thread, and this Kokkos has "
      "no Serial backend");
#endif
#endif
}

}  // namespace ndzip::hdf5_plugin
