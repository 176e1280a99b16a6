// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Arrays of other libraries (CuPy, PyTorch, JAX, Numba, NumPy through DLPack): where their memory
// lies, their memory borrowed for a call through DLPack or __cuda_array_interface__, the stream a
// call runs on, and new arrays of the input's library for results (through ndzip._device). The
// GPU runtime's few calls (a pointer's device, ordering one stream after another) are in
// device_runtime.hpp.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <ndzip/array_shape.hpp>
#include <ndzip/frame_format.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ndzip_python {

namespace py = pybind11;

// Memory of a GPU: which runtime, which device.
struct device_location {
  enum class runtime { cuda, rocm };
  runtime api = runtime::cuda;
  int device = 0;  // -1: not known (a build without a GPU backend, which refuses the array)

  // "cuda" or "hip": the backend that runs on it.
  const char* backend() const { return api == runtime::cuda ? "cuda" : "hip"; }
  std::string to_string() const;
};

// Where `object`'s memory lies when it is a GPU's: __dlpack_device__ naming CUDA or ROCm memory,
// else __cuda_array_interface__. Nothing for host memory (NumPy, buffers, CPU tensors, anything
// else: the host path takes or refuses it). TypeError for DLPack memory of another kind.
std::optional<device_location> device_location_of(const py::object& object);

// The stream a call runs on: a handle (0: the legacy default stream of the array's device), and
// whether it is the current stream of the arrays' library (no stream= given), where their
// memory is ready already.
struct call_stream {
  std::uintptr_t handle = 0;
  bool libraries_current = true;
};

// A device array's memory, borrowed for the length of a call (keeper holds it).
struct device_array {
  device_location where;
  void* data = nullptr;
  std::optional<ndzip::element_type> type;  // float32 or float64; else nothing
  std::string type_name;                    // as the exporter named it, for messages
  std::size_t item_bytes = 0;
  std::vector<std::int64_t> shape;
  bool c_contiguous = true;
  bool read_only = false;
  bool unsigned_bytes = false;  // of uint8 items
  py::object keeper;

  std::size_t bytes() const;
  std::string shape_text() const;  // "4x5", "()" for a scalar
};

// `object`'s memory through __dlpack__ (the exporter orders it before `stream`) or
// __cuda_array_interface__ (its stream, if it names one, is ordered before `stream`). On the
// library's current stream, where nothing is to be ordered, the cheapest first: a CuPy array's
// or PyTorch tensor's own attributes (1 us), else the interface where the object has it
// (PyTorch's __dlpack__ costs 17 us a call, its interface 2.5), else DLPack.
device_array borrow_device_array(const py::object& object, const device_location& where,
                                 const call_stream& stream);

// The values of a host DLPack object (kDLCPU) as a NumPy array over the same memory; nothing if
// `object` has no __dlpack__.
std::optional<py::array> host_array_from_dlpack(const py::object& object);

// The stream a call on `where` runs on: `stream` (an integer handle, or an object with
// __cuda_stream__, .cuda_stream or .ptr), else the current stream of the library of `array`
// (CuPy, PyTorch) on that device, else the legacy default stream (0).
call_stream stream_for_call(const py::object& stream, const py::object& array,
                            const device_location& where);

// A new C-contiguous array of `like`'s library (CuPy, PyTorch; other libraries' arrays: CuPy,
// else PyTorch) on `where`, of `dtype` (a NumPy dtype) and `shape`.
py::object new_device_array(const py::object& like, const device_location& where,
                            const py::dtype& dtype, const std::vector<py::ssize_t>& shape);
// The first `bytes` bytes of the C-contiguous device array `array` (whose memory is `memory`),
// as a 1-D uint8 array of its library (what compress_raw returns).
py::object device_byte_prefix(const py::object& array, const device_array& memory,
                              std::size_t bytes);

}  // namespace ndzip_python
