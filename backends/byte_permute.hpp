// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// CUDA's byte permutation (__byte_perm, PTX prmt in its default mode) in portable code, for the
// host emulation of the GPU lane-ops (backends/emulated) and the CUDA backend's host pass.

#include <cstdint>

#include <Kokkos_Core.hpp>

namespace ndzip::backend {

// Result byte n is byte (selector >> 4n) & 7 of the eight bytes y:x (x's bytes 0-3, y's 4-7).
KOKKOS_INLINE_FUNCTION constexpr std::uint32_t portable_byte_permute(std::uint32_t x,
                                                                     std::uint32_t y,
                                                                     unsigned selector) {
  const std::uint64_t bytes = std::uint64_t{y} << 32 | x;
  std::uint32_t result = 0;
  for (int n = 0; n < 4; ++n) {
    const unsigned byte = selector >> (4 * n) & 7u;
    result |= static_cast<std::uint32_t>(bytes >> (8 * byte) & 0xffu) << (8 * n);
  }
  return result;
}

}  // namespace ndzip::backend
