// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Selects the lane-ops of an execution space at compile time. core/ only ever names
// lane_ops_for_t<ExecSpace>; a new backend adds a header and a specialisation here.

#include <Kokkos_Core.hpp>

#include "backends/host/lane_ops.hpp"
#include "ndzip/detail/execution_spaces.hpp"
#ifdef KOKKOS_ENABLE_CUDA
#include "backends/cuda/lane_ops.hpp"
#endif
#ifdef KOKKOS_ENABLE_HIP
#include "backends/hip/lane_ops.hpp"
#endif

namespace ndzip::backend {

// Host execution spaces (Serial, OpenMP, Threads) share the register bit-transpose.
template <class ExecSpace>
struct lane_ops_for {
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible,
                "ndzip: no lane-ops for this execution space yet");
  using type = host_lane_ops;
};

#ifdef KOKKOS_ENABLE_CUDA
template <>
struct lane_ops_for<Kokkos::Cuda> {
  using type = cuda_lane_ops;
};
#endif

#ifdef KOKKOS_ENABLE_HIP
template <>
struct lane_ops_for<detail::hip_space> {
  using type = hip_lane_ops;
};
#endif

template <class ExecSpace>
using lane_ops_for_t = typename lane_ops_for<ExecSpace>::type;

}  // namespace ndzip::backend
