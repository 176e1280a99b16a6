// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Definitions of ndzip::batch_compressor's members: every call is handed to the mode's engine
// (core/engine.hpp). Included by the explicit instantiation units.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/engine.hpp"
#include "core/make_engine.hpp"
#include "ndzip/batch_compressor.hpp"

namespace ndzip {

template <class T, int Dims, class ExecSpace>
batch_compressor<T, Dims, ExecSpace>::batch_compressor(const ExecSpace& exec,
                                                       const std::vector<extent<Dims>>& grids,
                                                       codec_mode mode)
    : m_exec(exec),
      m_grids(grids),
      m_mode(mode),
      m_engine(core::make_engine<T, Dims>(exec, grids, mode)) {}

template <class T, int Dims, class ExecSpace>
batch_compressor<T, Dims, ExecSpace>::~batch_compressor() = default;
template <class T, int Dims, class ExecSpace>
batch_compressor<T, Dims, ExecSpace>::batch_compressor(batch_compressor&&) noexcept = default;
template <class T, int Dims, class ExecSpace>
batch_compressor<T, Dims, ExecSpace>& batch_compressor<T, Dims, ExecSpace>::operator=(
    batch_compressor&&) noexcept = default;

template <class T, int Dims, class ExecSpace>
void batch_compressor<T, Dims, ExecSpace>::check_count(std::size_t count, const char* what) const {
  if (count != size())
    throw std::invalid_argument("ndzip: the batch has " + std::to_string(size()) +
                                " grids but the " + what + " View holds " + std::to_string(count));
}

template <class T, int Dims, class ExecSpace>
void batch_compressor<T, Dims, ExecSpace>::check_contiguous(bool contiguous,
                                                            const char* what) const {
  if (!contiguous)
    throw std::invalid_argument(std::string("ndzip: the batch's ") + what +
                                " View must be contiguous");
}

template <class T, int Dims, class ExecSpace>
std::size_t batch_compressor<T, Dims, ExecSpace>::check_outcome(
    std::size_t i, const decompress_outcome& outcome) const {
  if (outcome.failure == decompress_outcome::no_failure) return outcome.stream_bytes;
  // "ndzip: invalid stream: ..." -> "ndzip: array i: invalid stream: ..."
  throw stream_error("ndzip: array " + std::to_string(i) + ": " +
                     m_engine->describe_failure(outcome, i).substr(7));
}

template <class T, int Dims, class ExecSpace>
void batch_compressor<T, Dims, ExecSpace>::compress_raw_async(item_type* items,
                                                              std::uint64_t* sizes) {
  m_engine->compress_batch(items, sizes);
}

template <class T, int Dims, class ExecSpace>
void batch_compressor<T, Dims, ExecSpace>::decompress_raw_async(const item_type* items,
                                                                decompress_outcome* outcomes) {
  m_engine->decompress_batch(items, outcomes);
}

}  // namespace ndzip
