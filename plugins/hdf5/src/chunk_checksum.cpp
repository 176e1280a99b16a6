// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "chunk_checksum.hpp"

#include <vector>

// xxHash compiled into this file only (every function static), as in the library's frame: the
// plugin cannot clash with another xxHash loaded into the same process by HDF5 or Python.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ndzip::hdf5_plugin {
namespace {

// The cd_values as the checksum covers them: each value as 4 little-endian bytes, in order.
std::vector<std::byte> parameter_bytes(const chunk_parameters& chunk) {
  std::vector<std::byte> bytes;
  for (const unsigned value : to_cd_values(chunk))
    for (int shift = 0; shift < 32; shift += 8)
      bytes.push_back(static_cast<std::byte>(value >> shift & 0xffu));
  return bytes;
}

}  // namespace

std::size_t checksum_head_bytes(const chunk_parameters& chunk) {
  return chunk.layout >= 3 || (chunk.layout == 2 && chunk.checksum) ? checksum_bytes : 0;
}

std::uint64_t chunk_checksum(const chunk_parameters& chunk, const std::byte* stream,
                             std::size_t size) {
  if (chunk.layout == 2) return stream_checksum(stream, size);
  // The hash of the parameters followed by the stream, without copying the stream behind them.
  const std::vector<std::byte> parameters = parameter_bytes(chunk);
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, parameters.data(), parameters.size());
  if (chunk.checksum) XXH3_64bits_update(&state, stream, size);
  return XXH3_64bits_digest(&state);
}

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
