// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "chunk_codec.hpp"

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "chunk_grid.hpp"
#include "kokkos_runtime.hpp"
#include "ndzip/compressor.hpp"
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

// The ndzip API reads both values and streams as arrays of T. HDF5's buffers come from malloc
// and so are aligned; one that is not is copied rather than read misaligned.
template <class T>
class aligned_input {
 public:
  aligned_input(const void* data, std::size_t size) : m_data(data) {
    if (reinterpret_cast<std::uintptr_t>(data) % alignof(T) != 0) {
      m_copy.resize((size + sizeof(T) - 1) / sizeof(T));
      std::memcpy(m_copy.data(), data, size);
      m_data = m_copy.data();
    }
  }
  const T* values() const { return static_cast<const T*>(m_data); }
  const std::byte* bytes() const { return static_cast<const std::byte*>(m_data); }

 private:
  const void* m_data;
  std::vector<T> m_copy;
};

}  // namespace

filtered_chunk compress_chunk(const chunk_parameters& chunk, const void* chunk_data,
                              std::size_t size) {
  if (size != chunk.chunk_bytes())
    throw std::runtime_error("ndzip HDF5 filter: a chunk of " + std::to_string(size) +
                             " bytes, where the filter parameters describe one of " +
                             std::to_string(chunk.chunk_bytes()));
  require_kokkos();
  filtered_chunk out;
  with_chunk_grid(chunk, [&](auto tag, const auto& grid) {
    using T = typename decltype(tag)::type;
    constexpr int dims = std::decay_t<decltype(grid)>::dimensions;
    const aligned_input<T> input(chunk_data, size);
    with_host_backend([&](const auto& exec) {
      compressor<T, dims, std::decay_t<decltype(exec)>> codec(exec, grid);
      out = allocate(codec.size_bound());
      out.size = codec.compress_raw(input.values(), out.bytes.get(), out.capacity);
      exec.fence();
    });
  });
  return out;
}

filtered_chunk decompress_chunk(const chunk_parameters& chunk, const void* stream,
                                std::size_t size) {
  require_kokkos();
  filtered_chunk out = allocate(chunk.chunk_bytes());
  out.size = out.capacity;
  with_chunk_grid(chunk, [&](auto tag, const auto& grid) {
    using T = typename decltype(tag)::type;
    constexpr int dims = std::decay_t<decltype(grid)>::dimensions;
    const aligned_input<T> input(stream, size);
    with_host_backend([&](const auto& exec) {
      compressor<T, dims, std::decay_t<decltype(exec)>> codec(exec, grid);
      const std::size_t consumed =
          codec.decompress_raw(input.bytes(), size, reinterpret_cast<T*>(out.bytes.get()));
      // HDF5 stores each chunk's exact size: bytes beyond the stream are damage too.
      if (consumed != size)
        throw stream_error("ndzip HDF5 filter: the chunk holds " + std::to_string(size) +
                           " bytes, its ndzip stream " + std::to_string(consumed));
    });
  });
  return out;
}

}  // namespace ndzip::hdf5_plugin
