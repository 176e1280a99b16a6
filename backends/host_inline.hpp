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
