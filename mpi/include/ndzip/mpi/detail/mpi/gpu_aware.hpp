// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Whether the MPI library takes device pointers, and so whether a device transfer hands MPI its
// device buffers directly instead of staging them through host-pinned memory
// (options::transport, ndzip/mpi/options.hpp). Not part of the API.

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <type_traits>

#include "ndzip/detail/execution_spaces.hpp"

// Open MPI says at run time whether it was built with CUDA or ROCm support (and the transport
// in use can move device memory); other MPI libraries have no common query, so they count as
// not GPU-aware unless the caller asks for the mpi_device transport.
#if defined(OPEN_MPI) && OPEN_MPI && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

namespace ndzip::mpi::detail {

template <class ExecSpace>
bool mpi_reports_gpu_support() {
#if defined(KOKKOS_ENABLE_CUDA) && defined(MPIX_CUDA_AWARE_SUPPORT)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) return MPIX_Query_cuda_support() == 1;
#endif
#if defined(KOKKOS_ENABLE_HIP) && defined(MPIX_ROCM_AWARE_SUPPORT)
  if constexpr (std::is_same_v<ExecSpace, ::ndzip::detail::hip_space>)
    return MPIX_Query_rocm_support() == 1;
#endif
  return false;
}

}  // namespace ndzip::mpi::detail
