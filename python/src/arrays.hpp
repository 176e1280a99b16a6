// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The Python extension's adapters between Python objects and the run-time layer: dtypes and
// shapes, mode names, NumPy arrays in C order, checked output arrays, and the buffers a call
// reads from or writes into (held for the call; the GIL released around the codec).

#include <Python.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ndzip/dynamic.hpp>
#include <ndzip/folding.hpp>
#include <ndzip/error.hpp>

#include "device_arrays.hpp"

namespace ndzip_python {

namespace py = pybind11;

// The codec mode of this name (ndzip/codec_mode.hpp); another name is a ValueError, anything
// but a string a TypeError (mode= is taken as any object, so that pybind11's generic message
// about the function's arguments is not what a user sees).
inline ndzip::codec_mode mode_named(const py::handle& mode) {
  if (!PyUnicode_Check(mode.ptr()))
    throw py::type_error("ndzip: mode is a name (one of: " + ndzip::codec_mode_names() +
                         "), not " + py::repr(mode).cast<std::string>());
  const std::string name = mode.cast<std::string>();
  if (const std::optional<ndzip::codec_mode> parsed = ndzip::parse_codec_mode(name))
    return *parsed;
  throw py::value_error("ndzip: unknown mode '" + name + "' (use one of: " +
                        ndzip::codec_mode_names() + ")");
}

inline ndzip::folding folding_named(const py::handle& folding) {
  if (!PyUnicode_Check(folding.ptr()))
    throw py::type_error("ndzip: folding is 'automatic' or 'none', not " +
                         py::repr(folding).cast<std::string>());
  const std::string name = folding.cast<std::string>();
  if (const std::optional<ndzip::folding> parsed = ndzip::parse_folding(name)) return *parsed;
  throw py::value_error("ndzip: unknown folding '" + name + "' (use 'automatic' or 'none')");
}

// float32 or float64 in this machine's byte order; anything else is a TypeError.
inline ndzip::element_type element_type_of(const py::dtype& dtype) {
  if (dtype.equal(py::dtype::of<float>())) return ndzip::element_type::float32;
  if (dtype.equal(py::dtype::of<double>())) return ndzip::element_type::float64;
  throw py::type_error("ndzip compresses float32 and float64 arrays in native byte order, not " +
                       py::repr(dtype).cast<std::string>());
}

inline py::dtype dtype_of(ndzip::element_type type) {
  return type == ndzip::element_type::float32 ? py::dtype::of<float>() : py::dtype::of<double>();
}

inline ndzip::array_shape shape_of(const py::array& array) {
  const auto type = element_type_of(array.dtype());
  if (array.ndim() < 1 || array.ndim() > 3)
    throw py::value_error("ndzip compresses arrays of 1 to 3 dimensions, not " +
                          std::to_string(array.ndim()));
  std::uint64_t extents[3] = {};
  for (py::ssize_t a = 0; a < array.ndim(); ++a)
    extents[a] = static_cast<std::uint64_t>(array.shape(a));
  return ndzip::array_shape(type, static_cast<int>(array.ndim()), extents);
}

// The shape of a dtype and extents given by name (decompress_raw, Compressor, size_bound).
inline ndzip::array_shape shape_named(const py::object& dtype,
                                      const std::vector<std::uint64_t>& extents) {
  const auto type = element_type_of(py::dtype::from_args(dtype));
  if (extents.empty() || extents.size() > 3)
    throw py::value_error("ndzip: a shape of 1 to 3 extents, not " +
                          std::to_string(extents.size()));
  return ndzip::array_shape(type, static_cast<int>(extents.size()), extents.data());
}

inline std::vector<py::ssize_t> py_shape(const ndzip::array_shape& shape) {
  std::vector<py::ssize_t> dims;
  for (int a = 0; a < shape.rank(); ++a) dims.push_back(static_cast<py::ssize_t>(shape.extent(a)));
  return dims;
}

// The values of `array` in C order: the array itself where it is C-contiguous, else a copy.
inline py::array c_order(const py::array& array) {
  return py::array::ensure(array, py::array::c_style | py::array::forcecast);
}

// `out` checked to be what decoding `shape` writes: exactly its dtype and shape, C-contiguous
// and writable; or a new array.
inline py::array output_for(const ndzip::array_shape& shape, const std::optional<py::array>& out) {
  if (!out) return py::array(dtype_of(shape.type()), py_shape(shape));
  const py::array& a = *out;
  if (!a.dtype().equal(dtype_of(shape.type())))
    throw py::type_error("ndzip: out has dtype " + py::repr(a.dtype()).cast<std::string>() +
                         ", the data holds " + shape.to_string() + " (" +
                         py::repr(dtype_of(shape.type())).cast<std::string>() + ")");
  bool same_shape = a.ndim() == shape.rank();
  for (int d = 0; same_shape && d < shape.rank(); ++d)
    same_shape = static_cast<std::uint64_t>(a.shape(d)) == shape.extent(d);
  if (!same_shape) {
    std::string given;
    for (py::ssize_t d = 0; d < a.ndim(); ++d)
      given += (d ? "x" : "") + std::to_string(a.shape(d));
    throw py::value_error("ndzip: out has shape " + (given.empty() ? "()" : given) +
                          ", the data holds " + shape.to_string());
  }
  if (!(a.flags() & py::array::c_style))
    throw py::value_error("ndzip: out is not C-contiguous");
  if (!a.writeable()) throw py::value_error("ndzip: out is not writable");
  return a;
}

// A contiguous read-only view of any buffer-protocol object (bytes, bytearray, memoryview,
// NumPy array), held for the duration of a call.
class input_buffer {
 public:
  explicit input_buffer(const py::object& object) {
    if (PyObject_GetBuffer(object.ptr(), &m_view, PyBUF_C_CONTIGUOUS) != 0)
      throw py::error_already_set();
  }
  ~input_buffer() { PyBuffer_Release(&m_view); }
  input_buffer(const input_buffer&) = delete;
  input_buffer& operator=(const input_buffer&) = delete;

  const std::byte* data() const { return static_cast<const std::byte*>(m_view.buf); }
  std::size_t size() const { return static_cast<std::size_t>(m_view.len); }

 private:
  Py_buffer m_view{};
};

// A bytes object of `capacity` bytes, filled by `write` (with the GIL released) and cut to the
// size it returns.
template <class Write>
inline py::bytes new_bytes(std::size_t capacity, const Write& write) {
  PyObject* raw = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(capacity));
  if (!raw) throw py::error_already_set();
  auto bytes = py::reinterpret_steal<py::bytes>(raw);
  std::size_t size = 0;
  {
    py::gil_scoped_release release;
    size = write(reinterpret_cast<std::byte*>(PyBytes_AS_STRING(raw)));
  }
  if (size != capacity) {
    PyObject* resized = bytes.release().ptr();
    if (_PyBytes_Resize(&resized, static_cast<Py_ssize_t>(size)) != 0)
      throw py::error_already_set();
    bytes = py::reinterpret_steal<py::bytes>(resized);
  }
  return bytes;
}

// Anything NumPy turns into an array (an array, a scalar, nested lists), or a host array that
// only speaks DLPack; else a TypeError.
inline py::array as_array(const py::object& object) {
  if (py::isinstance<py::array>(object)) return py::reinterpret_borrow<py::array>(object);
  // Before NumPy's conversion, which would wrap an object it does not know in a 0-d array.
  if (auto exported = host_array_from_dlpack(object)) return *exported;
  py::array array = py::array::ensure(object);
  if (array) return array;
  PyErr_Clear();
  throw py::type_error("ndzip: expected an array (NumPy, DLPack or __cuda_array_interface__), "
                       "got " + py::repr(py::type::of(object)).cast<std::string>());
}

// `out` of a decompression into host memory: a NumPy array or a host DLPack array, written in
// place (never a converted copy); else a TypeError.
inline py::array host_out_array(const py::object& out) {
  if (py::isinstance<py::array>(out)) return py::reinterpret_borrow<py::array>(out);
  if (auto exported = host_array_from_dlpack(out)) return *exported;
  throw py::type_error("ndzip: out is " + py::repr(py::type::of(out)).cast<std::string>() +
                       ", not a NumPy array (or a DLPack or device array)");
}

// A C-contiguous writable buffer of the caller's (bytearray, NumPy array of any dtype and shape,
// memoryview of one), held for the duration of a call; what it is not is said.
class output_buffer {
 public:
  explicit output_buffer(const py::object& object) {
    if (PyObject_GetBuffer(object.ptr(), &m_view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) == 0) return;
    PyErr_Clear();
    const std::string type = py::repr(py::type::of(object)).cast<std::string>();
    const std::string kinds = "a bytearray, a NumPy array, or a memoryview of one";
    if (!PyObject_CheckBuffer(object.ptr()))
      throw py::type_error("ndzip: out is not a buffer but " + type + "; pass " + kinds);
    Py_buffer readable{};
    if (PyObject_GetBuffer(object.ptr(), &readable, PyBUF_C_CONTIGUOUS) == 0) {
      PyBuffer_Release(&readable);
      throw py::value_error("ndzip: out is read-only (" + type + "); pass a writable buffer: " +
                            kinds);
    }
    PyErr_Clear();
    throw py::value_error("ndzip: out is not C-contiguous (" + type + "); the bytes are written "
                          "in one run: pass a contiguous buffer, " + kinds);
  }
  ~output_buffer() { PyBuffer_Release(&m_view); }
  output_buffer(const output_buffer&) = delete;
  output_buffer& operator=(const output_buffer&) = delete;

  std::byte* data() const { return static_cast<std::byte*>(m_view.buf); }
  std::size_t size() const { return static_cast<std::size_t>(m_view.len); }

 private:
  Py_buffer m_view{};
};

// The first `size` bytes of `out` (written by a compressor) as a memoryview of bytes: one
// dimension, format 'B', whatever out's item type and shape. Slicing a memoryview of `out` itself
// would count its items (a float64 array's first `size` items are 8 * size bytes) and keep its
// shape; the cast to bytes needs out C-contiguous, which output_buffer has checked.
inline py::object written_bytes(const py::object& out, std::size_t size) {
  const py::object bytes = py::memoryview(out).attr("cast")("B");
  return bytes[py::slice(0, static_cast<py::ssize_t>(size), 1)];
}

}  // namespace ndzip_python
