// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Compaction and expansion of a chunk's bit-plane columns with AVX-512's compress and expand
// instructions (vpcompressd/q, vpexpandd/q), for the AVX-512 clone of the host kernels
// (backends/host/isa.hpp). Scalar, these were a third of the host encoder's and decoder's time
// on images, whose heads have zero columns among the non-zero ones: a column per step, each
// step's place depending on the one before.
//
// Each function has the AVX-512 clone's target attribute and no inline constraint: the clone's
// `flatten` inlines it (its target is a superset), the other clones keep an out-of-line call
// that they never make (the host lane-ops call these only while the AVX-512 clone runs).
// always_inline would not do: GCC checks an always_inline callee's target against every caller,
// the lane-ops compiled for the baseline too.

#include "backends/host/isa.hpp"

#if NDZIP_HOST_ISA_CLONES

#include <cstdint>
#include <type_traits>

#include <immintrin.h>

namespace ndzip::backend::avx512 {

#define NDZIP_AVX512_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,bmi,bmi2,popcnt,fma")))

// Bit i of the result is bit W-1-i of `head`: chunk heads number columns from the most
// significant bit, vector masks lanes from the least.
template <class Bits>
NDZIP_AVX512_TARGET inline Bits reversed(Bits head) {
  std::uint64_t v = head;
  v = __builtin_bswap64(v);
  v = (v & 0x0f0f0f0f0f0f0f0fu) << 4 | (v >> 4 & 0x0f0f0f0f0f0f0f0fu);
  v = (v & 0x3333333333333333u) << 2 | (v >> 2 & 0x3333333333333333u);
  v = (v & 0x5555555555555555u) << 1 | (v >> 1 & 0x5555555555555555u);
  return static_cast<Bits>(v >> (64 - 8 * sizeof(Bits)));
}

// Lanes of a 64-byte vector of Bits.
template <class Bits>
inline constexpr int lanes = 64 / static_cast<int>(sizeof(Bits));

// The non-zero columns of columns[0..W) to out[0..count), column 0 first; writes nothing
// beyond them (the words after a block may be another team's).
template <class Bits, int W>
NDZIP_AVX512_TARGET inline void compact(const Bits* columns, Bits* out) {
  static_assert(std::is_unsigned_v<Bits> && W == 8 * sizeof(Bits) && W % lanes<Bits> == 0);
  for (int v = 0; v < W / lanes<Bits>; ++v) {
    const __m512i words = _mm512_loadu_si512(columns + v * lanes<Bits>);
    if constexpr (sizeof(Bits) == 4) {
      const __mmask16 nonzero = _mm512_test_epi32_mask(words, words);
      const int count = __builtin_popcount(nonzero);
      _mm512_mask_storeu_epi32(out, static_cast<__mmask16>((1u << count) - 1),
                               _mm512_maskz_compress_epi32(nonzero, words));
      out += count;
    } else {
      const __mmask8 nonzero = _mm512_test_epi64_mask(words, words);
      const int count = __builtin_popcount(nonzero);
      _mm512_mask_storeu_epi64(out, static_cast<__mmask8>((1u << count) - 1),
                               _mm512_maskz_compress_epi64(nonzero, words));
      out += count;
    }
  }
}

// The inverse: column i is the next word of `in` where head bit W-1-i is set, zero elsewhere.
// Reads only the words it places.
template <class Bits, int W>
NDZIP_AVX512_TARGET inline void expand(Bits head, const Bits* in, Bits* columns) {
  static_assert(std::is_unsigned_v<Bits> && W == 8 * sizeof(Bits) && W % lanes<Bits> == 0);
  const Bits set = reversed(head);
  for (int v = 0; v < W / lanes<Bits>; ++v) {
    const unsigned mask =
        static_cast<unsigned>(set >> (v * lanes<Bits>)) & ((1u << lanes<Bits>) - 1);
    if constexpr (sizeof(Bits) == 4)
      _mm512_storeu_si512(columns + v * lanes<Bits>,
                          _mm512_maskz_expandloadu_epi32(static_cast<__mmask16>(mask), in));
    else
      _mm512_storeu_si512(columns + v * lanes<Bits>,
                          _mm512_maskz_expandloadu_epi64(static_cast<__mmask8>(mask), in));
    in += __builtin_popcount(mask);
  }
}

#undef NDZIP_AVX512_TARGET

}  // namespace ndzip::backend::avx512

#endif
