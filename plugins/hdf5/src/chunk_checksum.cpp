// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "chunk_checksum.hpp"

// xxHash compiled into this file only (every function static), as in the library's frame: the
// plugin cannot clash with another xxHash loaded into the same process by HDF5 or Python.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ndzip::hdf5_plugin {

std::uint64_t stream_checksum(const std::byte* stream, std::size_t size) {
  return XXH3_64bits(stream, size);
}

void store_checksum(std::uint64_t checksum, std::byte* head) {
  for (std::size_t i = 0; i < checksum_bytes; ++i)
    head[i] = static_cast<std::byte>(checksum >> (8 * i));
}

std::uint64_t load_checksum(const std::byte* head) {
  std::uint64_t checksum = 0;
  for (std::size_t i = 0; i < checksum_bytes; ++i)
    checksum |= std::uint64_t{std::to_integer<unsigned>(head[i])} << (8 * i);
  return checksum;
}

}  // namespace ndzip::hdf5_plugin
