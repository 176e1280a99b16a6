// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip._ndzip: the extension behind the Python package `ndzip` (python/ndzip/__init__.py),
// NumPy arrays to frames and bare streams and back through the library's run-time layer
// (ndzip/dynamic.hpp). The GIL is released while the codec runs; Kokkos is brought up on first
// use unless the process already has it, and finalised at interpreter exit if it was.

#include <Python.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ndzip/backends.hpp>
#include <ndzip/dynamic.hpp>
#include <ndzip/error.hpp>
#include <ndzip/frame_format.hpp>
#include <ndzip/version.hpp>

namespace py = pybind11;

namespace {

// Whether this module initialised Kokkos (and so finalises it at exit).
bool kokkos_owned = false;

void require_kokkos() {
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  if (Kokkos::is_initialized()) return;
#if KOKKOS_VERSION >= 40000
  if (Kokkos::is_finalized())
    throw std::runtime_error("ndzip: Kokkos has been finalised and cannot be initialised again");
#endif
  std::vector<std::string> args{"python-ndzip"};
  for (auto& arg : ndzip::embedded_kokkos_arguments()) args.push_back(std::move(arg));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  Kokkos::initialize(argc, argv.data());
  kokkos_owned = true;
}

void finalize_owned_kokkos() {
  if (kokkos_owned && Kokkos::is_initialized()) Kokkos::finalize();
  kokkos_owned = false;
}

// The backend a call runs on: the one asked for, else the library's default, except where
// that is Kokkos 3's OpenMP backend and this thread cannot run it (only the thread that
// initialised Kokkos can): then Serial, where the build has it.
std::string backend_for_call(const std::optional<std::string>& asked) {
  if (asked) return *asked;
  const std::string fallback = ndzip::default_backend();
#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL) && KOKKOS_VERSION < 40000
  if (fallback == "openmp" && Kokkos::OpenMP::in_parallel()) return "serial";
#endif
  return fallback;
}

ndzip::codec_mode mode_named(const std::string& name) {
  if (name == "ndzip") return ndzip::codec_mode::ndzip;
  if (name == "high_ratio") return ndzip::codec_mode::high_ratio;
  throw py::value_error("ndzip: unknown mode '" + name + "' (use 'ndzip' or 'high_ratio')");
}

const char* mode_name(ndzip::codec_mode mode) {
  return mode == ndzip::codec_mode::high_ratio ? "high_ratio" : "ndzip";
}

// float32 or float64 in this machine's byte order; anything else is a TypeError.
ndzip::element_type element_type_of(const py::dtype& dtype) {
  if (dtype.equal(py::dtype::of<float>())) return ndzip::element_type::float32;
  if (dtype.equal(py::dtype::of<double>())) return ndzip::element_type::float64;
  throw py::type_error("ndzip compresses float32 and float64 arrays in native byte order, not " +
                       py::repr(dtype).cast<std::string>());
}

py::dtype dtype_of(ndzip::element_type type) {
  return type == ndzip::element_type::float32 ? py::dtype::of<float>() : py::dtype::of<double>();
}

ndzip::array_shape shape_of(const py::array& array) {
  const auto type = element_type_of(array.dtype());
  if (array.ndim() < 1 || array.ndim() > 3)
    throw py::value_error("ndzip compresses arrays of 1 to 3 dimensions, not " +
                          std::to_string(array.ndim()));
  std::uint64_t extents[3] = {};
  for (py::ssize_t a = 0; a < array.ndim(); ++a)
    extents[a] = static_cast<std::uint64_t>(array.shape(a));
  return ndzip::array_shape(type, static_cast<int>(array.ndim()), extents);
}

std::vector<py::ssize_t> py_shape(const ndzip::array_shape& shape) {
  std::vector<py::ssize_t> dims;
  for (int a = 0; a < shape.rank(); ++a) dims.push_back(static_cast<py::ssize_t>(shape.extent(a)));
  return dims;
}

// The values of `array` in C order: the array itself where it is C-contiguous, else a copy.
py::array c_order(const py::array& array) {
  return py::array::ensure(array, py::array::c_style | py::array::forcecast);
}

// `out` checked to be what decoding `shape` writes: exactly its dtype and shape, C-contiguous
// and writable; or a new array.
py::array output_for(const ndzip::array_shape& shape, const std::optional<py::array>& out) {
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
py::bytes new_bytes(std::size_t capacity, const Write& write) {
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

// Anything NumPy turns into an array (an array, a scalar, nested lists); else a TypeError.
py::array as_array(const py::object& object) {
  py::array array = py::array::ensure(object);
  if (!array) {
    PyErr_Clear();
    throw py::type_error("ndzip: expected a NumPy array, got " +
                         py::repr(py::type::of(object)).cast<std::string>());
  }
  return array;
}

py::bytes compress(const py::object& object, const std::optional<std::string>& backend,
                   const std::string& mode, bool framed) {
  const py::array array = as_array(object);
  const ndzip::array_shape shape = shape_of(array);
  const ndzip::codec_mode codec_mode = mode_named(mode);
  const py::array values = c_order(array);
  require_kokkos();
  const std::string name = backend_for_call(backend);
  std::optional<ndzip::dynamic_compressor> codec;
  {
    py::gil_scoped_release release;
    codec.emplace(name, shape, codec_mode);
  }
  const void* data = values.data();
  return new_bytes(framed ? codec->frame_size_bound() : codec->size_bound(),
                   [&](std::byte* out) {
                     return framed ? codec->compress_frame(data, out, codec->frame_size_bound())
                                   : codec->compress(data, out, codec->size_bound());
                   });
}

py::array decompress(const py::object& buffer, const std::optional<py::array>& out,
                     const std::optional<std::string>& backend) {
  const input_buffer input(buffer);
  // The header alone first: it says what to allocate (a damaged one is refused here).
  const ndzip::frame_info info = ndzip::read_frame_header(input.data(), input.size());
  const ndzip::array_shape shape = ndzip::array_shape::of(info);
  py::array result = output_for(shape, out);
  require_kokkos();
  const std::string name = backend_for_call(backend);
  void* values = result.mutable_data();
  {
    py::gil_scoped_release release;
    ndzip::dynamic_compressor codec(name, shape, info.mode);
    codec.decompress_frame(input.data(), input.size(), values);
  }
  return result;
}

py::array decompress_raw(const py::object& buffer, const py::object& dtype,
                         const std::vector<std::uint64_t>& extents,
                         const std::optional<py::array>& out,
                         const std::optional<std::string>& backend, const std::string& mode) {
  const auto type = element_type_of(py::dtype::from_args(dtype));
  if (extents.empty() || extents.size() > 3)
    throw py::value_error("ndzip: a shape of 1 to 3 extents, not " +
                          std::to_string(extents.size()));
  const ndzip::array_shape shape(type, static_cast<int>(extents.size()), extents.data());
  const ndzip::codec_mode codec_mode = mode_named(mode);
  const input_buffer input(buffer);
  // Before the output is allocated: a stream too short for the shape is refused as it is.
  ndzip::check_stream_size(shape, input.size(), codec_mode);
  py::array result = output_for(shape, out);
  require_kokkos();
  const std::string name = backend_for_call(backend);
  void* values = result.mutable_data();
  std::size_t consumed = 0;
  {
    py::gil_scoped_release release;
    ndzip::dynamic_compressor codec(name, shape, codec_mode);
    consumed = codec.decompress(input.data(), input.size(), values);
  }
  if (consumed != input.size())
    throw ndzip::stream_error("ndzip: the " + shape.to_string() + " stream ends after " +
                              std::to_string(consumed) + " of the buffer's " +
                              std::to_string(input.size()) + " bytes");
  return result;
}

// What a frame's header says, without decoding it.
py::dict frame_info(const py::object& buffer) {
  const input_buffer input(buffer);
  const ndzip::frame_info info = ndzip::inspect_frame(input.data(), input.size());
  const ndzip::array_shape shape = ndzip::array_shape::of(info);
  py::dict d;
  d["dtype"] = dtype_of(shape.type());
  d["shape"] = py::tuple(py::cast(py_shape(shape)));
  d["mode"] = mode_name(info.mode);
  d["stream_bytes"] = info.stream_bytes;
  return d;
}

// ndzip.bench's C++ side: median seconds, over `repeats`, of the C++ calls behind compress and
// decompress (a new compressor per call, frames) and of a reused compressor's bare-stream calls
// (the C++ API at its best), on the same array and backend, without the binding.
py::dict time_cpp(const py::object& object, const std::optional<std::string>& backend,
                  int repeats) {
  const py::array array = as_array(object);
  const ndzip::array_shape shape = shape_of(array);
  const py::array values = c_order(array);
  require_kokkos();
  const std::string name = backend_for_call(backend);
  const auto median = [](std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  std::vector<double> fresh_c, fresh_d, reused_c, reused_d;
  {
    py::gil_scoped_release release;
    const void* data = values.data();
    std::vector<std::byte> frame, stream;
    std::vector<std::byte> decoded(shape.byte_size());
    const auto time = [](const auto& f) {
      const auto start = std::chrono::steady_clock::now();
      f();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    ndzip::dynamic_compressor reused(name, shape);
    frame.resize(reused.frame_size_bound());
    stream.resize(reused.size_bound());
    std::size_t frame_bytes = 0, stream_bytes = 0;
    for (int r = 0; r < repeats; ++r) {
      fresh_c.push_back(time([&] {
        ndzip::dynamic_compressor codec(name, shape);
        frame_bytes = codec.compress_frame(data, frame.data(), frame.size());
      }));
      fresh_d.push_back(time([&] {
        ndzip::dynamic_compressor codec(name, shape);
        codec.decompress_frame(frame.data(), frame_bytes, decoded.data());
      }));
      reused_c.push_back(
          time([&] { stream_bytes = reused.compress(data, stream.data(), stream.size()); }));
      reused_d.push_back(
          time([&] { reused.decompress(stream.data(), stream_bytes, decoded.data()); }));
    }
  }
  py::dict d;
  d["frame_compress"] = median(fresh_c);
  d["frame_decompress"] = median(fresh_d);
  d["reused_compress"] = median(reused_c);
  d["reused_decompress"] = median(reused_d);
  d["backend"] = name;
  return d;
}

}  // namespace

PYBIND11_MODULE(_ndzip, m) {
  m.doc() = "ndzip-kokkos: lossless compression of float32/float64 arrays (the extension)";
  m.attr("__version__") = ndzip::version_string;
  m.attr("frame_header_bytes") = ndzip::frame_header_bytes;
  // Whether the library runs one call at a time, whatever the threads (Kokkos before 4.4).
  m.attr("_serialises_calls") = KOKKOS_VERSION < 40400;

  // A damaged or inconsistent frame or stream; a ValueError, so that code catching bad input
  // catches it too.
  static py::exception<ndzip::stream_error> stream_error(m, "StreamError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ndzip::stream_error& e) {
      PyErr_SetString(stream_error.ptr(), e.what());
    } catch (const ndzip::frame_error& e) {
      PyErr_SetString(stream_error.ptr(), e.what());
    } catch (const std::logic_error& e) {
      // std::invalid_argument and the other misuses the library names.
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  m.def("backends", &ndzip::enabled_backends);
  m.def("default_backend", [] {
    require_kokkos();
    return backend_for_call(std::nullopt);
  });
  m.def(
      "compress",
      [](const py::object& array, const std::optional<std::string>& backend,
         const std::string& mode) { return compress(array, backend, mode, true); },
      py::arg("array"), py::kw_only(), py::arg("backend") = py::none(),
      py::arg("mode") = "ndzip");
  m.def(
      "compress_raw",
      [](const py::object& array, const std::optional<std::string>& backend,
         const std::string& mode) { return compress(array, backend, mode, false); },
      py::arg("array"), py::kw_only(), py::arg("backend") = py::none(),
      py::arg("mode") = "ndzip");
  m.def("decompress", &decompress, py::arg("buffer"), py::kw_only(), py::arg("out") = py::none(),
        py::arg("backend") = py::none());
  m.def("decompress_raw", &decompress_raw, py::arg("buffer"), py::arg("dtype"), py::arg("shape"),
        py::kw_only(), py::arg("out") = py::none(), py::arg("backend") = py::none(),
        py::arg("mode") = "ndzip");
  m.def("frame_info", &frame_info, py::arg("buffer"));
  m.def("_finalize", &finalize_owned_kokkos);
  m.def("_time_cpp", &time_cpp, py::arg("array"), py::arg("backend") = py::none(),
        py::arg("repeats") = 5);
}
