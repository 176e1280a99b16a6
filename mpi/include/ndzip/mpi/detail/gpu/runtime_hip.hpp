// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The HIP half of the GPU stream seam (stream.hpp): the runtime's header, the prefix of its
// calls and types, and the instance's stream. Not part of the API.

#include <hip/hip_runtime.h>

#include <Kokkos_Core.hpp>

#include "ndzip/detail/execution_spaces.hpp"

// hip##name: HIP names its calls and types as CUDA does, with this prefix.
#define NDZIP_MPI_GPU(name) hip##name

namespace ndzip::mpi::detail::gpu {

using space = ::ndzip::detail::hip_space;
// What the runtime's calls are named with, in errors.
inline constexpr const char* call_prefix = "hip";
inline hipStream_t stream_of(const space& exec) { return exec.hip_stream(); }

}  // namespace ndzip::mpi::detail::gpu
