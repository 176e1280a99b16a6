// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The W x W bit-matrix transposition of a chunk (backends/host/lane_ops.hpp, transpose) with
// GFNI and AVX-512 VBMI, for the clone of the host kernels that has them (backends/host/isa.hpp,
// host_isa::avx512_gfni: Intel Ice Lake and later, AMD Zen 4 and later). The matrix is cut into
// 8 x 8 blocks of bits: byte permutations gather each block's eight bytes (one byte column of
// eight rows) into a 64-bit lane, one gf2p8affineqb per vector transposes every block across its
// anti-diagonal (the columns are numbered from the most significant bit, the rows of a block
// from its lowest byte), and permutations place the blocks. A float chunk takes six instructions
// (two vectors), a double chunk 48 (eight vectors); the masked-shift block swap takes about 120
// and 320.
//
// Each function has the clone's target attribute and no inline constraint, as in
// avx512_columns.hpp: the clone's `flatten` inlines it, the other clones never call it.

#include "backends/host/isa.hpp"

#if NDZIP_HOST_ISA_CLONES

#include <cstdint>
#include <type_traits>

#include <immintrin.h>

namespace ndzip::backend::gfni {

#define NDZIP_GFNI_TARGET                                                                \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,gfni,avx2,bmi,bmi2," \
                        "popcnt,fma")))

// gf2p8affineqb(x = this, A = block) gives byte m, bit n = bit 7-m of block byte 7-n: the
// block transposed across its anti-diagonal, which is the transposition of 8 x 8 bits when
// columns count from the most significant bit and rows from the lowest byte.
inline constexpr long long anti_diagonal = 0x0102040810204080;

// Byte indices of the permutations, built at compile time.
struct byte_indices {
  alignas(64) unsigned char at[2][64];
};

// Float: rows 0-15 in one vector, 16-31 in the other (four bytes a row). Block (R, b) is rows
// 8R..8R+7, byte b; it goes to 64-bit lane 4R + b (mod 8) of its rows' vector, each vector's
// lanes gathered by the same index.
constexpr byte_indices gather_float() {
  byte_indices g{};
  for (int lane = 0; lane < 8; ++lane)
    for (int row = 0; row < 8; ++row)
      g.at[0][lane * 8 + row] = static_cast<unsigned char>((8 * (lane / 4) + row) * 4 + lane % 4);
  return g;
}
// Transposed, block (R, b) byte m is row 8(3-b)+m, byte 3-R: from lane 4R + b of the first
// vector (R < 2) or the second, for each half of the output.
constexpr byte_indices place_float() {
  byte_indices p{};
  for (int out = 0; out < 128; ++out) {
    const int row = out / 4, byte = out % 4;
    const int b = 3 - row / 8, m = row % 8, r = 3 - byte, lane = 4 * r + b;
    p.at[out / 64][out % 64] = static_cast<unsigned char>((lane / 8) * 64 + (lane % 8) * 8 + m);
  }
  return p;
}
// Double: vector R holds rows 8R..8R+7 (eight bytes a row); block (R, b) goes to its lane b,
// and after the lanes' transposition across vectors (lane R of vector b) its byte m is row
// 8(7-b)+m, byte 7-R: from byte 8R + m of vector b.
constexpr byte_indices gather_place_double() {
  byte_indices g{};
  for (int lane = 0; lane < 8; ++lane)
    for (int row = 0; row < 8; ++row) {
      g.at[0][lane * 8 + row] = static_cast<unsigned char>(row * 8 + lane);
      g.at[1][row * 8 + lane] = static_cast<unsigned char>((7 - lane) * 8 + row);
    }
  return g;
}
inline constexpr byte_indices float_gather = gather_float(), float_place = place_float(),
                              double_bytes = gather_place_double();

// Step k of the 8 x 8 transposition of 64-bit lanes across eight vectors: vectors v and v + k
// (v & k == 0) exchange the lanes whose index differs from the vector's in bit k.
struct lane_indices {
  alignas(64) long long at[2][8];
};
constexpr lane_indices exchange(int k) {
  lane_indices e{};
  for (int b = 0; b < 8; ++b) {
    e.at[0][b] = b & k ? 8 + (b ^ k) : b;
    e.at[1][b] = b & k ? 8 + b : (b ^ k);
  }
  return e;
}
inline constexpr lane_indices exchanges[3] = {exchange(1), exchange(2), exchange(4)};

template <class Bits, int W>
NDZIP_GFNI_TARGET inline void transpose(Bits* words) {
  static_assert(std::is_unsigned_v<Bits> && W == 8 * sizeof(Bits));
  const __m512i blocks = _mm512_set1_epi64(anti_diagonal);
  // Zero-masked permutations with every byte kept: GCC 12's unmasked one reads an undefined
  // vector (-Wuninitialized).
  const __mmask64 all = ~__mmask64{0};
  if constexpr (sizeof(Bits) == 4) {
    const __m512i gather = _mm512_load_si512(float_gather.at[0]);
    const __m512i low = _mm512_gf2p8affine_epi64_epi8(
        blocks, _mm512_maskz_permutexvar_epi8(all, gather, _mm512_loadu_si512(words)), 0);
    const __m512i high = _mm512_gf2p8affine_epi64_epi8(
        blocks, _mm512_maskz_permutexvar_epi8(all, gather, _mm512_loadu_si512(words + 16)), 0);
    _mm512_storeu_si512(words,
                        _mm512_permutex2var_epi8(low, _mm512_load_si512(float_place.at[0]), high));
    _mm512_storeu_si512(words + 16,
                        _mm512_permutex2var_epi8(low, _mm512_load_si512(float_place.at[1]), high));
  } else {
    const __m512i gather = _mm512_load_si512(double_bytes.at[0]);
    __m512i v[8];
    for (int r = 0; r < 8; ++r) {
      const __m512i rows = _mm512_loadu_si512(words + 8 * r);
      v[r] = _mm512_gf2p8affine_epi64_epi8(blocks, _mm512_maskz_permutexvar_epi8(all, gather, rows),
                                           0);
    }
    for (int step = 0; step < 3; ++step) {
      const int k = 1 << step;
      const __m512i keep = _mm512_load_si512(exchanges[step].at[0]);
      const __m512i take = _mm512_load_si512(exchanges[step].at[1]);
      for (int r = 0; r < 8; ++r)
        if ((r & k) == 0) {
          const __m512i a = v[r], b = v[r + k];
          v[r] = _mm512_permutex2var_epi64(a, keep, b);
          v[r + k] = _mm512_permutex2var_epi64(a, take, b);
        }
    }
    const __m512i place = _mm512_load_si512(double_bytes.at[1]);
    for (int b = 0; b < 8; ++b)
      _mm512_storeu_si512(words + 8 * (7 - b), _mm512_maskz_permutexvar_epi8(all, place, v[b]));
  }
}

#undef NDZIP_GFNI_TARGET

}  // namespace ndzip::backend::gfni

#endif
