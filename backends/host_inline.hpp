// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// NDZIP_HOST_FORCEINLINE: forced inlining for the host compiler, where GCC needs it (the
// encoder's steps, see core/chunk_packing.hpp), and plain KOKKOS_INLINE_FUNCTION in the device
// passes, where the device compilers inline by themselves and forcing cost up to 3 % (H200,
// 256^3 double compression).

#include <Kokkos_Core.hpp>

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define NDZIP_HOST_FORCEINLINE KOKKOS_INLINE_FUNCTION
#else
#define NDZIP_HOST_FORCEINLINE KOKKOS_FORCEINLINE_FUNCTION
#endif

// NDZIP_INLINE_LAMBDA, after a lambda's parameter list: always inlined by GCC and Clang on the
// host, so that a host team's whole work, lambdas included, is inlined into the instruction-set
// clone that runs it (backends/host/isa.hpp); GCC 12's `flatten` left some of them out. Nothing
// for the device compilers, which inline by themselves.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define NDZIP_INLINE_LAMBDA __attribute__((always_inline))
#else
#define NDZIP_INLINE_LAMBDA
#endif
