// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Atomic adds and ORs on 32-bit words in team scratch, for the high-ratio kernels' counters and
// staged blocks. Kokkos' atomics take a generic address: on CUDA each one became a test of the
// address's space, a branch and a generic atomic (about twelve instructions; a third of the
// high-ratio gray step's, H100 SASS), where the space is known to be shared memory. The CUDA
// specialisation says so (red.shared); every other space uses Kokkos' atomics.

#include <Kokkos_Core.hpp>
#include <cstdint>

namespace ndzip::backend {

template <class ExecSpace>
struct scratch_atomics {
  KOKKOS_INLINE_FUNCTION static void add(std::uint32_t* at, std::uint32_t value) {
    Kokkos::atomic_add(at, value);
  }
  KOKKOS_INLINE_FUNCTION static void bit_or(std::uint32_t* at, std::uint32_t value) {
    Kokkos::atomic_or(at, value);
  }
};

#ifdef KOKKOS_ENABLE_CUDA
template <>
struct scratch_atomics<Kokkos::Cuda> {
  // `at` must point into team scratch (shared memory).
  KOKKOS_INLINE_FUNCTION static void add(std::uint32_t* at, std::uint32_t value) {
#ifdef __CUDA_ARCH__
    asm volatile(
        "red.shared.add.u32 [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(at))),
        "r"(value)
        : "memory");
#else
    Kokkos::atomic_add(at, value);  // never called on the host
#endif
  }
  KOKKOS_INLINE_FUNCTION static void bit_or(std::uint32_t* at, std::uint32_t value) {
#ifdef __CUDA_ARCH__
    asm volatile(
        "red.shared.or.b32 [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(at))),
        "r"(value)
        : "memory");
#else
    Kokkos::atomic_or(at, value);   // never called on the host
#endif
  }
};
#endif

}  // namespace ndzip::backend
