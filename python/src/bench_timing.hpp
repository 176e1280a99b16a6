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

// ndzip.bench --device's C++ side: median seconds of dynamic_compressor::compress and
// decompress on buffers in the backend's memory (the device array `values`, and `stream` and
// `decoded` for the results, of a library's), on the backend's default instance, each call
// complete on return as Compressor's; and the stream's size. Checks nothing: the caller compares
// the bytes.
pybind11::dict time_cpp_device(const pybind11::object& values, const pybind11::object& stream,
                               const pybind11::object& decoded, int repeats);

}  // namespace ndzip_python
