#pragma once
// Host lane-ops: one lane holds a whole chunk in registers, and the bit-plane transposition is
// a recursive block swap on W words (log2(W) stages of masked shifts). The stages are written
// as contiguous loops over row pairs so that the compiler can vectorise them.

#include <cstdint>
#include <type_traits>

#include <Kokkos_Core.hpp>

namespace ndzip::backend {

struct host_lane_ops {
  // Threads per team and lanes per thread that the core kernels use on the host.
  static constexpr int team_size = 1;
  static constexpr int vector_length = 1;

  // Bit-parallel count: compilers turn it into a popcnt instruction where the target has one,
  // and it avoids a library call where it has not (the default x86-64 target).
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static int popcount(Bits v) {
    static_assert(std::is_unsigned_v<Bits>);
    constexpr Bits ones = static_cast<Bits>(~Bits{0});
    v = v - ((v >> 1) & (ones / 3));
    v = (v & (ones / 15 * 3)) + ((v >> 2) & (ones / 15 * 3));
    v = (v + (v >> 4)) & (ones / 255 * 15);
    return static_cast<int>(static_cast<Bits>(v * (ones / 255)) >> (sizeof(Bits) * 8 - 8));
  }

  // Transposes the W x W bit matrix held in rows[0..W) in place, most significant bit first:
  // afterwards bit (W-1-j) of rows[i] is what bit (W-1-i) of rows[j] was. Applied to the W rows
  // of a chunk this yields the bit-plane columns with plane W-1 in rows[0]; it is its own inverse.
  template <class Bits>
  KOKKOS_INLINE_FUNCTION static void transpose(Bits* rows) {
    static_assert(std::is_unsigned_v<Bits>);
    constexpr int w = static_cast<int>(sizeof(Bits) * 8);
    Bits mask = static_cast<Bits>(~Bits{0}) >> (w / 2);  // low half of each 2j-bit group
    for (int j = w / 2; j != 0;) {
      for (int base = 0; base < w; base += 2 * j) {
        for (int k = base; k < base + j; ++k) {
          const Bits t = (rows[k] ^ (rows[k + j] >> j)) & mask;
          rows[k] ^= t;
          rows[k + j] ^= static_cast<Bits>(t << j);
        }
      }
      j >>= 1;
      mask ^= static_cast<Bits>(mask << j);
    }
  }
};

}  // namespace ndzip::backend
