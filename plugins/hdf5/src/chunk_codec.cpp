// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "chunk_codec.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "chunk_checksum.hpp"
#include "kokkos_runtime.hpp"
#include "ndzip/dynamic.hpp"
#include "ndzip/error.hpp"

namespace ndzip::hdf5_plugin {
namespace {

filtered_chunk allocate(std::size_t capacity) {
  filtered_chunk out;
  out.bytes.reset(static_cast<std::byte*>(std::malloc(capacity)));
  if (!out.bytes) throw std::bad_alloc();
  out.capacity = capacity;
  return out;
}

std::string hex(std::uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(value));
  return text;
}

// Why a chunk whose checksum does not match is refused: what the checksum covers in its layout.
std::string checksum_mismatch(const chunk_parameters& chunk, std::uint64_t actual,
                              std::uint64_t recorded) {
  std::string what;
  if (chunk.layout < 3)
    what = "the chunk is damaged (its stream hashes";
  else if (chunk.checksum)
    what = "the chunk or the dataset's filter parameters are damaged (its parameters and stream "
           "hash";
  else
    what = "the dataset's filter parameters are not those the chunk was written with, or its "
           "checksum is damaged (its parameters hash";
  return "checksum mismatch, " + what + " to " + hex(actual) + ", its checksum says " +
         hex(recorded) + "; XXH3-64, chunk layout " + std::to_string(chunk.layout) + ")";
}

}  // namespace

filtered_chunk compress_chunk(const chunk_parameters& chunk, const void* chunk_data,
                              std::size_t size) {
  if (size != chunk.shape.byte_size())
    throw std::runtime_error("ndzip HDF5 filter: a chunk of " + std::to_string(size) +
                             " bytes, where the filter parameters describe one of " +
                             std::to_string(chunk.shape.byte_size()) + " (" +
                             chunk.shape.to_string() + ")");
  const std::size_t head = checksum_head_bytes(chunk);
  dynamic_compressor codec(host_backend(), chunk.coded_shape(), chunk.mode);
  filtered_chunk out = allocate(head + codec.size_bound());
  out.size = head + codec.compress(chunk_data, out.bytes.get() + head, out.capacity - head);
  if (head != 0)
    store_checksum(chunk_checksum(chunk, out.bytes.get() + head, out.size - head),
                   out.bytes.get());
  return out;
}

filtered_chunk decompress_chunk(const chunk_parameters& chunk, const void* stored,
                                std::size_t size) {
  const std::size_t head = checksum_head_bytes(chunk);
  const std::string which = "ndzip HDF5 filter: chunk of " + chunk.shape.to_string() +
                            " stored in " + std::to_string(size) + " bytes";
  if (size < head)
    throw stream_error(which + ": shorter than its " + std::to_string(head) +
                       "-byte checksum, the chunk is damaged");
  const std::byte* const stored_bytes = static_cast<const std::byte*>(stored);
  if (head != 0) {
    const std::uint64_t recorded = load_checksum(stored_bytes);
    const std::uint64_t actual = chunk_checksum(chunk, stored_bytes + head, size - head);
    if (actual != recorded)
      throw stream_error(which + ": " + checksum_mismatch(chunk, actual, recorded));
  }
  filtered_chunk out = allocate(chunk.shape.byte_size());
  out.size = out.capacity;
  const std::size_t stream_size = size - head;
  dynamic_compressor codec(host_backend(), chunk.coded_shape(), chunk.mode);
  std::size_t consumed = 0;
  try {
    consumed = codec.decompress(stored_bytes + head, stream_size, out.bytes.get());
  } catch (const stream_error& e) {
    throw stream_error(which + ": " + e.what());
  }
  // HDF5 stores each chunk's exact size: bytes beyond the stream are damage too.
  if (consumed != stream_size)
    throw stream_error(which + ": its ndzip stream ends " + std::to_string(stream_size - consumed) +
                       " bytes before the chunk does, the chunk is damaged");
  return out;
}

}  // namespace ndzip::hdf5_plugin
