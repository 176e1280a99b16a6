// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Definitions of ndzip::compressor's members: every call is handed to the mode's engine
// (core/engine.hpp). Included by the explicit instantiation units.

#include <cstddef>
#include <cstdint>

#include "core/engine.hpp"
#include "core/make_engine.hpp"
#include "ndzip/compressor.hpp"

namespace ndzip {

template <class T, int Dims, class ExecSpace>
compressor<T, Dims, ExecSpace>::compressor(const ExecSpace& exec, const extent<Dims>& grid,
                                           codec_mode mode)
    : m_exec(exec),
      m_grid(grid),
      m_mode(mode),
      m_engine(core::make_engine<T, Dims>(exec, grid, mode)) {}

template <class T, int Dims, class ExecSpace>
compressor<T, Dims, ExecSpace>::~compressor() = default;
template <class T, int Dims, class ExecSpace>
compressor<T, Dims, ExecSpace>::compressor(compressor&&) noexcept = default;
template <class T, int Dims, class ExecSpace>
compressor<T, Dims, ExecSpace>& compressor<T, Dims, ExecSpace>::operator=(compressor&&) noexcept =
    default;

template <class T, int Dims, class ExecSpace>
void compressor<T, Dims, ExecSpace>::check_stream_size(std::size_t stream_size) const {
  m_engine->check_stream_size(stream_size);
}

template <class T, int Dims, class ExecSpace>
std::size_t compressor<T, Dims, ExecSpace>::check_outcome(const decompress_outcome& outcome) const {
  return m_engine->check_outcome(outcome, 0);
}

template <class T, int Dims, class ExecSpace>
std::size_t compressor<T, Dims, ExecSpace>::compress_raw(const T* values, std::byte* stream,
                                                         std::size_t stream_capacity) {
  return m_engine->compress(values, stream, stream_capacity);
}

template <class T, int Dims, class ExecSpace>
std::size_t compressor<T, Dims, ExecSpace>::decompress_raw(const std::byte* stream,
                                                           std::size_t stream_size, T* values) {
  return m_engine->decompress(stream, stream_size, values);
}

template <class T, int Dims, class ExecSpace>
void compressor<T, Dims, ExecSpace>::compress_raw_async(const T* values, std::byte* stream,
                                                        std::size_t stream_capacity,
                                                        std::uint64_t* stream_size) {
  m_engine->compress_async(values, stream, stream_capacity, stream_size);
}

template <class T, int Dims, class ExecSpace>
void compressor<T, Dims, ExecSpace>::decompress_raw_async(const std::byte* stream,
                                                          std::size_t stream_size, T* values,
                                                          decompress_outcome* outcome) {
  m_engine->decompress_async(stream, stream_size, values, outcome);
}

template <class T, int Dims, class ExecSpace>
std::size_t compressor<T, Dims, ExecSpace>::decompress_region_raw(
    const std::byte* stream, std::size_t stream_size, const std::array<std::size_t, Dims>& start,
    const extent<Dims>& count, T* values) {
  core::region_box<Dims> box;
  for (int a = 0; a < Dims; ++a) box.start[a] = start[a];
  box.count = count;
  return m_engine->decompress_region(stream, stream_size, box, values);
}

}  // namespace ndzip
