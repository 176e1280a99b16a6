// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The 32 bytes of a segment head (docs/FORMAT.md "MPI messages"), written by the host
// (wire_format.cpp) or, on a device, by the kernel that finishes a segment in device memory
// (segment_pipeline.hpp). Not part of the API.

#include <Kokkos_Macros.hpp>
#include <cstddef>
#include <cstdint>

namespace ndzip::mpi::detail {

inline constexpr std::size_t segment_head_bytes = 32;
inline constexpr std::uint32_t segment_magic = 0x6773'7a6e;  // "nzsg"

enum class segment_kind : std::uint32_t { stream = 0, raw = 1 };

// Little-endian, byte by byte: the head of a message is not aligned for wider stores.
KOKKOS_INLINE_FUNCTION void put_le(std::byte* out, std::uint64_t value, int bytes) {
  for (int b = 0; b < bytes; ++b) out[b] = static_cast<std::byte>(value >> (8 * b) & 0xff);
}

// Layout: magic (4), kind (4), index (8), payload bytes (8), checksum or 0 (8).
KOKKOS_INLINE_FUNCTION void put_segment_head(std::byte* out, segment_kind kind, std::uint64_t index,
                                             std::uint64_t payload_bytes, std::uint64_t checksum) {
  put_le(out, segment_magic, 4);
  put_le(out + 4, static_cast<std::uint32_t>(kind), 4);
  put_le(out + 8, index, 8);
  put_le(out + 16, payload_bytes, 8);
  put_le(out + 24, checksum, 8);
}

}  // namespace ndzip::mpi::detail
