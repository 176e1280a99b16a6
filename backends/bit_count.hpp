// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// backend::popcount: the set bits of a 32- or 64-bit word on every backend, the device
// compilers' instruction on a GPU and a bit-parallel count on the host, which compilers turn into
// a popcnt instruction where the target has one and which needs no library call where it has not
// (the default x86-64 target).

#include <type_traits>

#include <Kokkos_Core.hpp>

#include "backends/host_inline.hpp"

namespace ndzip::backend {

template <class Bits>
NDZIP_HOST_FORCEINLINE int popcount(Bits v) {
  static_assert(std::is_unsigned_v<Bits>);
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  if constexpr (sizeof(Bits) == 4)
    return __popc(v);
  else
    return __popcll(v);
#else
  constexpr Bits ones = static_cast<Bits>(~Bits{0});
  v = v - ((v >> 1) & (ones / 3));
  v = (v & (ones / 15 * 3)) + ((v >> 2) & (ones / 15 * 3));
  v = (v + (v >> 4)) & (ones / 255 * 15);
  return static_cast<int>(static_cast<Bits>(v * (ones / 255)) >> (sizeof(Bits) * 8 - 8));
#endif
}

}  // namespace ndzip::backend
