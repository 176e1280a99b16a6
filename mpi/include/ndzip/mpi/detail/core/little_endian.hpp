// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The little-endian integers of the heads on the wire (docs/FORMAT.md "MPI messages"), written
// and read byte by byte: a head inside a message is not aligned for wider loads and stores.
// Callable on the host and in kernels (the kernel that finishes a segment writes its head).
// Not part of the API.

#include <Kokkos_Macros.hpp>
#include <cstddef>
#include <cstdint>

namespace ndzip::mpi::detail {

KOKKOS_INLINE_FUNCTION void put_le(std::byte* out, std::uint64_t value, int bytes) {
  for (int b = 0; b < bytes; ++b) out[b] = static_cast<std::byte>(value >> (8 * b) & 0xff);
}

KOKKOS_INLINE_FUNCTION std::uint64_t get_le(const std::byte* in, int bytes) {
  std::uint64_t value = 0;
  for (int b = 0; b < bytes; ++b) value |= static_cast<std::uint64_t>(in[b]) << (8 * b);
  return value;
}

}  // namespace ndzip::mpi::detail
