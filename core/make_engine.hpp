// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The one place that picks a mode's engine (core/engine.hpp): for one grid (ndzip::compressor)
// or for a batch (ndzip::batch_compressor). A new mode adds its case to the switch below.

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine.hpp"
#include "core/high_ratio/engine.hpp"
#include "core/ndzip_engine.hpp"
#include "ndzip/codec_mode.hpp"
#include "ndzip/extent.hpp"

namespace ndzip::core {

// The engine of `mode` made from `grids` (one extent<Dims>, or a vector of them for a batch).
// Throws std::invalid_argument for a value that is not a mode, and what the engine throws.
template <class T, int Dims, class ExecSpace, class Grids>
std::unique_ptr<engine<T, Dims, ExecSpace>> make_engine(const ExecSpace& exec, const Grids& grids,
                                                        codec_mode mode) {
  switch (mode) {
    case codec_mode::ndzip:
      return std::make_unique<ndzip_engine<T, Dims, ExecSpace>>(exec, grids);
    case codec_mode::high_ratio:
      return std::make_unique<high_ratio::engine<T, Dims, ExecSpace>>(exec, grids);
  }
  throw std::invalid_argument("ndzip: unknown codec mode " +
                              std::to_string(static_cast<unsigned>(mode)) + " (" +
                              codec_mode_codes() + ")");
}

}  // namespace ndzip::core
