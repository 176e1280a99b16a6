// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The per-word maps of the ndzip transform: rotate the sign bit to bit 0 before differencing,
// and fold negative residuals so that small magnitudes of either sign have zero high bits.

#include <type_traits>

#include <Kokkos_Core.hpp>

namespace ndzip::core {

template <class Bits>
KOKKOS_FORCEINLINE_FUNCTION constexpr Bits rotate_left_1(Bits v) {
  static_assert(std::is_unsigned_v<Bits>);
  return static_cast<Bits>(v << 1) | static_cast<Bits>(v >> (sizeof(Bits) * 8 - 1));
}

template <class Bits>
KOKKOS_FORCEINLINE_FUNCTION constexpr Bits rotate_right_1(Bits v) {
  static_assert(std::is_unsigned_v<Bits>);
  return static_cast<Bits>(v >> 1) | static_cast<Bits>(v << (sizeof(Bits) * 8 - 1));
}

// fold(r) = r if the top bit is clear, else r with every bit but the top one flipped.
// An involution, so it serves both directions.
// Written as an arithmetic shift and one three-input logic operation (on GPUs one instruction
// fewer than a shift, a negation and a shift: H200 SASS).
template <class Bits>
KOKKOS_FORCEINLINE_FUNCTION constexpr Bits fold(Bits r) {
  static_assert(std::is_unsigned_v<Bits>);
  using signed_bits = std::make_signed_t<Bits>;
  const auto sign = static_cast<Bits>(static_cast<signed_bits>(r) >> (sizeof(Bits) * 8 - 1));
  return r ^ (sign & static_cast<Bits>(~Bits{0} >> 1));
}

}  // namespace ndzip::core
