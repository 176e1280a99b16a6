// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The codec engine that ndzip::compressor and ndzip::batch_compressor hold behind a pointer
// (core/engine.hpp; not part of the API).

namespace ndzip::core {
template <class T, int Dims, class ExecSpace>
class engine;
}  // namespace ndzip::core
