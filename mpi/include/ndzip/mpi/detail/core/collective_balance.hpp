// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The balance of a collective call (docs/FORMAT.md "Collectives", the plain way): every rank
// adds a fingerprint of each piece it sends, as (source, destination, type, extents), and takes
// away one of each piece it expects, as its View says; summed over the ranks (modulo 2^64), the
// balance is 0 where every receiver expects what its sender sends, and, but for a collision of
// 64-bit fingerprints, not 0 otherwise. Not part of the API.

#include <cstdint>

#include "ndzip/mpi/detail/core/wire_format.hpp"

namespace ndzip::mpi::detail {

// A finaliser of splitmix64: consecutive inputs give unrelated outputs.
constexpr std::uint64_t mix_bits(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The fingerprint of a piece of `head`'s type and extents from rank `source` to `destination`.
inline std::uint64_t piece_fingerprint(int source, int destination, const transfer_head& head) {
  std::uint64_t h = mix_bits(static_cast<std::uint64_t>(source) + 1);
  const std::uint64_t fields[] = {static_cast<std::uint64_t>(destination),
                                  static_cast<std::uint64_t>(head.type), head.dims,
                                  head.extents[0], head.extents[1], head.extents[2]};
  for (const std::uint64_t f : fields) h = mix_bits(h ^ (f + 0x9e3779b97f4a7c15ull));
  return h;
}

}  // namespace ndzip::mpi::detail
