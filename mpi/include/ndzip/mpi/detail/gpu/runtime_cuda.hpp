// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The CUDA half of the GPU stream seam (stream.hpp): the runtime's header, the prefix of its
// calls and types, and the instance's stream. Not part of the API.

#include <cuda_runtime.h>

#include <Kokkos_Core.hpp>

// cuda##name: the HIP half maps the same names onto hip##name.
#define NDZIP_MPI_GPU(name) cuda##name

namespace ndzip::mpi::detail::gpu {

using space = Kokkos::Cuda;
// What the runtime's calls are named with, in errors.
inline constexpr const char* call_prefix = "cuda";
inline cudaStream_t stream_of(const space& exec) { return exec.cuda_stream(); }

}  // namespace ndzip::mpi::detail::gpu
