// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The checksum at the head of a checksummed chunk (layout 2): XXH3-64 with seed 0 of the ndzip
// stream that follows it, stored as 8 little-endian bytes. XXH3-64, as the library's frame
// uses: it is checked at tens of GB/s per core, far faster than the stream decodes.

#include <cstddef>
#include <cstdint>

namespace ndzip::hdf5_plugin {

inline constexpr std::size_t checksum_bytes = 8;

std::uint64_t stream_checksum(const std::byte* stream, std::size_t size);

void store_checksum(std::uint64_t checksum, std::byte* head);
std::uint64_t load_checksum(const std::byte* head);

}  // namespace ndzip::hdf5_plugin
