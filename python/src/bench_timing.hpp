// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip.bench's C++ side, in the private submodule ndzip._ndzip._bench (not part of the
// package's API).

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

namespace ndzip_python {

// ndzip.bench's C++ side: median seconds, over `repeats`, of the C++ calls behind the module's
// functions (a new compressor per call) and behind a reused ndzip.Compressor with buffers of the
// caller's (one compressor, the same buffers every time), frames both; on the same array and
// backend, without the binding.
pybind11::dict time_cpp(const pybind11::object& object, const std::optional<std::string>& backend,
                        int repeats);

}  // namespace ndzip_python
