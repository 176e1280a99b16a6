// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// One chunk through ndzip, in the buffers HDF5's filter pipeline works with: the result is
// allocated with malloc, because HDF5 takes it over and releases it with free.

#include <cstddef>
#include <cstdlib>
#include <memory>

#include "chunk_parameters.hpp"

namespace ndzip::hdf5_plugin {

struct free_deleter {
  void operator()(void* p) const { std::free(p); }
};

struct filtered_chunk {
  std::unique_ptr<std::byte, free_deleter> bytes;
  std::size_t capacity = 0;  // bytes allocated
  std::size_t size = 0;      // bytes of data
};

// Compresses the `size` bytes at `chunk_data`, which must be one whole chunk (HDF5 hands edge
// chunks over at full size too), into an ndzip stream, behind its checksum where the chunk's
// layout has one (chunk_parameters.hpp). Throws on failure.
filtered_chunk compress_chunk(const chunk_parameters& chunk, const void* chunk_data,
                              std::size_t size);

// Decompresses a stored chunk of `size` bytes, which must be exactly one ndzip stream of the
// chunk's element type and extents, behind its checksum where the layout has one, into the
// chunk. The checksum is verified before the stream is decoded. Throws ndzip::stream_error
// naming the chunk's shape and size for a damaged chunk, other exceptions for other failures.
filtered_chunk decompress_chunk(const chunk_parameters& chunk, const void* stored,
                                std::size_t size);

}  // namespace ndzip::hdf5_plugin
