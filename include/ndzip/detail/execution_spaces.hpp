// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The one list of the Kokkos execution spaces ndzip-kokkos runs on, with the names the
// run-time API knows them by. Everything that enumerates execution spaces expands it: the
// library's explicit instantiations (core/instantiate.hpp), ndzip::enabled_backends and
// ndzip::with_backend (ndzip/backends.hpp); the lane-ops and the MPI layer name hip_space.
// A new backend is one line here (and its lane-ops).

#include <Kokkos_Core.hpp>

namespace ndzip::detail {

#ifdef KOKKOS_ENABLE_HIP
// Kokkos 4 moved HIP out of Kokkos::Experimental.
#if KOKKOS_VERSION >= 40000
using hip_space = Kokkos::HIP;
#else
using hip_space = Kokkos::Experimental::HIP;
#endif
#endif

}  // namespace ndzip::detail

// NDZIP_FOR_EACH_EXECUTION_SPACE(X) expands X(space type, "name") for every execution space
// this Kokkos was built with, in this order: serial, openmp, threads, cuda, hip.
#ifdef KOKKOS_ENABLE_SERIAL
#define NDZIP_DETAIL_SERIAL_SPACE(X) X(Kokkos::Serial, "serial")
#else
#define NDZIP_DETAIL_SERIAL_SPACE(X)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
#define NDZIP_DETAIL_OPENMP_SPACE(X) X(Kokkos::OpenMP, "openmp")
#else
#define NDZIP_DETAIL_OPENMP_SPACE(X)
#endif
#ifdef KOKKOS_ENABLE_THREADS
#define NDZIP_DETAIL_THREADS_SPACE(X) X(Kokkos::Threads, "threads")
#else
#define NDZIP_DETAIL_THREADS_SPACE(X)
#endif
#ifdef KOKKOS_ENABLE_CUDA
#define NDZIP_DETAIL_CUDA_SPACE(X) X(Kokkos::Cuda, "cuda")
#else
#define NDZIP_DETAIL_CUDA_SPACE(X)
#endif
#ifdef KOKKOS_ENABLE_HIP
#define NDZIP_DETAIL_HIP_SPACE(X) X(::ndzip::detail::hip_space, "hip")
#else
#define NDZIP_DETAIL_HIP_SPACE(X)
#endif

#define NDZIP_FOR_EACH_EXECUTION_SPACE(X) \
  NDZIP_DETAIL_SERIAL_SPACE(X)            \
  NDZIP_DETAIL_OPENMP_SPACE(X)            \
  NDZIP_DETAIL_THREADS_SPACE(X)           \
  NDZIP_DETAIL_CUDA_SPACE(X)              \
  NDZIP_DETAIL_HIP_SPACE(X)
