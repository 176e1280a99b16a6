// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The checksum at the head of a stored chunk: an XXH3-64 with seed 0, stored as 8 little-endian
// bytes in front of the stream. XXH3-64, as the library's frame uses: it is checked at tens of
// GB/s per core, far faster than the stream decodes. What it covers depends on the layout
// (chunk_parameters.hpp):
//   layout 3 (the default): the chunk's cd_values, each as 4 little-endian bytes, then, in a
//            checksummed chunk, the stream; so a chunk read with parameters other than those
//            it was written with fails its checksum whether its stream is checksummed or not;
//   layout 2, checksummed: the stream only;
//   layout 2 without the checksum, and layout 1: there is no checksum.

#include <cstddef>
#include <cstdint>

#include "chunk_parameters.hpp"

namespace ndzip::hdf5_plugin {

inline constexpr std::size_t checksum_bytes = 8;

// The bytes in front of the stream in a stored chunk of `chunk`'s layout: checksum_bytes or 0.
std::size_t checksum_head_bytes(const chunk_parameters& chunk);

// The checksum a chunk of `chunk`'s layout records for `stream` (one that has a checksum head).
std::uint64_t chunk_checksum(const chunk_parameters& chunk, const std::byte* stream,
                             std::size_t size);

// XXH3-64 of the stream alone: the checksum of a checksummed layout-2 chunk.
std::uint64_t stream_checksum(const std::byte* stream, std::size_t size);

void store_checksum(std::uint64_t checksum, std::byte* head);
std::uint64_t load_checksum(const std::byte* head);

}  // namespace ndzip::hdf5_plugin
