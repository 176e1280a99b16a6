// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip._ndzip: the extension behind the Python package `ndzip` (python/ndzip/__init__.py),
// NumPy arrays to frames and bare streams and back through the library's run-time layer
// (ndzip/dynamic.hpp). The GIL is released while the codec runs; Kokkos is brought up when the
// module is imported unless the process already has it, and finalised at interpreter exit if it
// was.

#include <Python.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
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
  ndzip::initialize_embedded_kokkos("python-ndzip");
  kokkos_owned = true;
}

void finalize_owned_kokkos() {
  if (kokkos_owned && Kokkos::is_initialized()) Kokkos::finalize();
  kokkos_owned = false;
}

// Kokkos 3 runs OpenMP work only on the thread that called Kokkos::initialize (a thread-local
// instance pointer, set on that thread alone; elsewhere Kokkos::OpenMP::in_parallel() is true),
// and the library refuses such calls (core/call_guard.hpp). Kokkos 4 has no such limit.
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
constexpr bool openmp_initial_thread_only = true;
#else
constexpr bool openmp_initial_thread_only = false;
#endif

// Whether `backend` can run on the calling thread (an unknown name: true, it is refused where
// the compressor is made, naming the build's backends).
bool runs_on_this_thread(const std::string& backend) {
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  // Finalised, Kokkos runs nothing on any thread: that is said where the call is made.
  if (backend == "openmp" && Kokkos::is_initialized()) return !Kokkos::OpenMP::in_parallel();
#else
  static_cast<void>(backend);
#endif
  return true;
}

// RuntimeError, before anything runs, where `backend` cannot run on the calling thread: it is not
// a bad argument (the same call runs on the right thread), and the library's own check would
// surface as std::logic_error, a ValueError here.
void require_this_thread(const std::string& backend) {
  if (runs_on_this_thread(backend)) return;
  throw std::runtime_error(
      "ndzip: the '" + backend + "' backend cannot run on this thread: Kokkos 3 runs OpenMP work "
      "only on the thread that initialised Kokkos (" +
      std::string(kokkos_owned ? "the thread that imported ndzip"
                               : "the thread of the application that called Kokkos::initialize") +
      "). On this thread pass backend='serial' (the same bytes, on one core), to the function "
      "or when making the Compressor; or call from that thread; Kokkos 4 has no such limit");
}

// The backend a call runs on: the one asked for, else the library's default, which is the same
// on every thread (the first of ndzip.backends()); RuntimeError if it cannot run on this thread.
std::string backend_for_call(const std::optional<std::string>& asked) {
  std::string name = asked ? *asked : ndzip::default_backend();
  require_this_thread(name);
  return name;
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

// The shape of a dtype and extents given by name (decompress_raw, Compressor, size_bound).
ndzip::array_shape shape_named(const py::object& dtype, const std::vector<std::uint64_t>& extents) {
  const auto type = element_type_of(py::dtype::from_args(dtype));
  if (extents.empty() || extents.size() > 3)
    throw py::value_error("ndzip: a shape of 1 to 3 extents, not " +
                          std::to_string(extents.size()));
  return ndzip::array_shape(type, static_cast<int>(extents.size()), extents.data());
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
py::object written_bytes(const py::object& out, std::size_t size) {
  const py::object bytes = py::memoryview(out).attr("cast")("B");
  return bytes[py::slice(0, static_cast<py::ssize_t>(size), 1)];
}

// A compressor's Kokkos memory must be released before Kokkos is finalised, by whoever finalises
// it (this module at interpreter exit, or the application): every ndzip.Compressor keeps its
// dynamic_compressor in a slot, and a Kokkos finalize hook empties all slots still alive. A
// Compressor used after that raises RuntimeError.
struct codec_slot {
  std::mutex mutex;  // taken only with the GIL released (no lock-order cycle with the GIL)
  std::optional<ndzip::dynamic_compressor> codec;
};

std::mutex slots_mutex;
std::vector<std::weak_ptr<codec_slot>> live_slots;

void release_all_slots() {
  const std::lock_guard<std::mutex> lock(slots_mutex);
  for (const auto& weak : live_slots)
    if (const auto slot = weak.lock()) {
      const std::lock_guard<std::mutex> slot_lock(slot->mutex);
      slot->codec.reset();
    }
  live_slots.clear();
}

void register_slot(const std::shared_ptr<codec_slot>& slot) {
  static std::once_flag hook;
  std::call_once(hook, [] { Kokkos::push_finalize_hook(release_all_slots); });
  const std::lock_guard<std::mutex> lock(slots_mutex);
  if (live_slots.size() >= 64)  // the one-shot functions' slots, long gone
    live_slots.erase(std::remove_if(live_slots.begin(), live_slots.end(),
                                    [](const auto& w) { return w.expired(); }),
                     live_slots.end());
  live_slots.push_back(slot);
}

// ndzip.Compressor: a dynamic_compressor for one dtype, shape, mode and backend, kept for many
// calls (its scratch, and a GPU's staging memory, are reused), as ndzip::compressor is in C++.
// The module's functions make one per call.
class py_compressor {
 public:
  py_compressor(const ndzip::array_shape& shape, const std::optional<std::string>& backend,
                ndzip::codec_mode mode)
      : m_shape(shape), m_mode(mode), m_slot(std::make_shared<codec_slot>()) {
    require_kokkos();
    m_backend = backend_for_call(backend);
    {
      py::gil_scoped_release release;
      m_slot->codec.emplace(m_backend, shape, mode);
      m_size_bound = m_slot->codec->size_bound();
    }
    register_slot(m_slot);
  }

  static py_compressor for_array(const py::object& dtype, const std::vector<std::uint64_t>& extents,
                                 const std::optional<std::string>& backend,
                                 const std::string& mode) {
    return py_compressor(shape_named(dtype, extents), backend, mode_named(mode));
  }

  const ndzip::array_shape& shape() const { return m_shape; }
  // Before each call, with the GIL held: RuntimeError if this Compressor's backend cannot run on
  // the calling thread (it was made on another).
  void check_thread() const { require_this_thread(m_backend); }
  // f(codec), the GIL released; RuntimeError once Kokkos has been finalised.
  template <class F>
  decltype(auto) with_codec(const F& f) {
    const std::lock_guard<std::mutex> lock(m_slot->mutex);
    if (!m_slot->codec)
      throw std::runtime_error("ndzip: Kokkos has been finalised; this Compressor can no longer "
                               "be used");
    return f(*m_slot->codec);
  }

  const std::string& backend() const { return m_backend; }
  ndzip::codec_mode mode() const { return m_mode; }
  std::size_t size_bound() const { return m_size_bound; }
  std::size_t frame_size_bound() const { return ndzip::frame_header_bytes + m_size_bound; }

  // The frame (or bare stream) of `object`, which must have this compressor's dtype and shape:
  // a new bytes object, or into `out` (a writable buffer), returning the memoryview of the
  // bytes written.
  py::object compress(const py::object& object, const std::optional<py::object>& out,
                      bool framed) {
    check_thread();
    const py::array array = as_array(object);
    const ndzip::array_shape given = shape_of(array);
    if (given.type() != m_shape.type())
      throw py::type_error("ndzip: a " + given.to_string() + " array for a compressor of " +
                           m_shape.to_string());
    if (given != m_shape)
      throw py::value_error("ndzip: a " + given.to_string() + " array for a compressor of " +
                            m_shape.to_string());
    const py::array values = c_order(array);
    const void* data = values.data();
    const auto write = [&](std::byte* to, std::size_t capacity) {
      return with_codec([&](ndzip::dynamic_compressor& codec) {
        return framed ? codec.compress_frame(data, to, capacity)
                      : codec.compress(data, to, capacity);
      });
    };
    const std::size_t bound = framed ? frame_size_bound() : size_bound();
    if (!out) return new_bytes(bound, [&](std::byte* to) { return write(to, bound); });
    std::size_t size = 0;
    {
      const output_buffer target(*out);
      py::gil_scoped_release release;
      size = write(target.data(), target.size());
    }
    return written_bytes(*out, size);
  }

  // Decodes a frame (checked whole, and to hold this compressor's array and mode) or a bare
  // stream (exactly one, no bytes after it) into a new array, or into `out` (checked).
  py::array decompress(const py::object& buffer, const std::optional<py::array>& out,
                       bool framed) {
    check_thread();
    const input_buffer input(buffer);
    if (!framed)  // before the output is allocated
      ndzip::check_stream_size(m_shape, input.size(), m_mode);
    py::array result = output_for(m_shape, out);
    void* values = result.mutable_data();
    std::size_t consumed = 0;
    {
      py::gil_scoped_release release;
      with_codec([&](ndzip::dynamic_compressor& codec) {
        if (framed)
          codec.decompress_frame(input.data(), input.size(), values);
        else
          consumed = codec.decompress(input.data(), input.size(), values);
      });
    }
    if (!framed && consumed != input.size())
      throw ndzip::stream_error("ndzip: the " + m_shape.to_string() + " stream ends after " +
                                std::to_string(consumed) + " of the buffer's " +
                                std::to_string(input.size()) + " bytes");
    return result;
  }

 private:
  ndzip::array_shape m_shape;
  ndzip::codec_mode m_mode;
  std::string m_backend;
  std::size_t m_size_bound = 0;
  std::shared_ptr<codec_slot> m_slot;
};

py::object compress(const py::object& object, const std::optional<py::object>& out,
                    const std::optional<std::string>& backend, const std::string& mode,
                    bool framed) {
  py_compressor codec(shape_of(as_array(object)), backend, mode_named(mode));
  return codec.compress(object, out, framed);
}

py::array decompress(const py::object& buffer, const std::optional<py::array>& out,
                     const std::optional<std::string>& backend) {
  ndzip::frame_info info;
  {
    // The header alone first: it says what to allocate (a damaged one is refused here).
    const input_buffer input(buffer);
    info = ndzip::read_frame_header(input.data(), input.size());
  }
  py_compressor codec(ndzip::array_shape::of(info), backend, info.mode);
  return codec.decompress(buffer, out, true);
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

// ndzip.bench's C++ side: median seconds, over `repeats`, of the C++ calls behind the module's
// functions (a new compressor per call) and behind a reused ndzip.Compressor with buffers of the
// caller's (one compressor, the same buffers every time), frames both; on the same array and
// backend, without the binding.
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
    const auto time = [](const auto& f) {
      const auto start = std::chrono::steady_clock::now();
      f();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    ndzip::dynamic_compressor reused(name, shape);
    std::vector<std::byte> frame(reused.frame_size_bound());
    std::vector<std::byte> decoded(shape.byte_size());
    std::size_t frame_bytes = 0;
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
          time([&] { frame_bytes = reused.compress_frame(data, frame.data(), frame.size()); }));
      reused_d.push_back(
          time([&] { reused.decompress_frame(frame.data(), frame_bytes, decoded.data()); }));
    }
  }
  py::dict d;
  d["fresh_compress"] = median(fresh_c);
  d["fresh_decompress"] = median(fresh_d);
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
  // Whether OpenMP runs only on the thread that initialised Kokkos (Kokkos 3 with OpenMP).
  m.attr("_openmp_initial_thread_only") = openmp_initial_thread_only;

  // Kokkos is brought up here, on the importing thread, and not on first use: with Kokkos 3
  // that thread is the one that can run OpenMP, so which thread it is must not depend on which
  // thread happens to call first.
  require_kokkos();

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
    } catch (const ndzip::capacity_error& e) {
      // An `out` too small: nothing was written.
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::logic_error& e) {
      // std::invalid_argument and the other misuses the library names.
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  m.def("backends", &ndzip::enabled_backends,
        "The backends of this build (Kokkos execution spaces), the default first.");
  m.def(
      "default_backend", [] { return ndzip::default_backend(); },
      "The backend of calls made without backend=: the first of backends() (the GPU where the "
      "build has one), the same on every thread. With Kokkos 3, OpenMP runs only on the thread "
      "that initialised Kokkos (the one that imported ndzip); other threads calling it get "
      "RuntimeError and pass backend='serial'.");
  // Whether `name` can run on the calling thread (ndzip.numcodecs picks a backend that can).
  m.def("_runs_on_this_thread", &runs_on_this_thread, py::arg("backend"));
  using opt_object = std::optional<py::object>;
  using opt_array = std::optional<py::array>;
  using opt_string = std::optional<std::string>;
  m.def(
      "compress",
      [](const py::object& array, const opt_object& out, const opt_string& backend,
         const std::string& mode) { return compress(array, out, backend, mode, true); },
      py::arg("array"), py::kw_only(), py::arg("out") = py::none(),
      py::arg("backend") = py::none(), py::arg("mode") = "ndzip");
  m.def(
      "compress_raw",
      [](const py::object& array, const opt_object& out, const opt_string& backend,
         const std::string& mode) { return compress(array, out, backend, mode, false); },
      py::arg("array"), py::kw_only(), py::arg("out") = py::none(),
      py::arg("backend") = py::none(), py::arg("mode") = "ndzip");
  m.def("decompress", &decompress, py::arg("buffer"), py::kw_only(), py::arg("out") = py::none(),
        py::arg("backend") = py::none());
  m.def(
      "decompress_raw",
      [](const py::object& buffer, const py::object& dtype,
         const std::vector<std::uint64_t>& shape, const opt_array& out,
         const opt_string& backend, const std::string& mode) {
        return py_compressor::for_array(dtype, shape, backend, mode).decompress(buffer, out, false);
      },
      py::arg("buffer"), py::arg("dtype"), py::arg("shape"), py::kw_only(),
      py::arg("out") = py::none(), py::arg("backend") = py::none(), py::arg("mode") = "ndzip");
  m.def(
      "size_bound",
      [](const py::object& dtype, const std::vector<std::uint64_t>& shape, const std::string& mode,
         bool frame) {
        return ndzip::compressed_size_bound(shape_named(dtype, shape), mode_named(mode)) +
               (frame ? ndzip::frame_header_bytes : 0);
      },
      py::arg("dtype"), py::arg("shape"), py::kw_only(), py::arg("mode") = "ndzip",
      py::arg("frame") = true);

  py::class_<py_compressor>(
      m, "Compressor",
      "Compressor(dtype, shape, backend=None, mode='ndzip'): a compressor kept for many arrays of "
      "one dtype and shape, its memory reused. backend=None: default_backend(). compress(out=) "
      "returns a memoryview of exactly the bytes written. Usable from any thread its backend "
      "runs on; with Kokkos 3 OpenMP runs only on the thread that initialised Kokkos (the one "
      "that imported ndzip), and a call from another thread raises RuntimeError: make a "
      "Compressor with backend='serial' for other threads (the same bytes).")
      .def(py::init(&py_compressor::for_array), py::arg("dtype"), py::arg("shape"),
           py::kw_only(), py::arg("backend") = py::none(), py::arg("mode") = "ndzip")
      .def_property_readonly("dtype",
                             [](const py_compressor& c) { return dtype_of(c.shape().type()); })
      .def_property_readonly(
          "shape", [](const py_compressor& c) { return py::tuple(py::cast(py_shape(c.shape()))); })
      .def_property_readonly("backend",
                             [](const py_compressor& c) { return c.backend(); })
      .def_property_readonly("mode",
                             [](const py_compressor& c) { return mode_name(c.mode()); })
      .def_property_readonly("size_bound",
                             [](const py_compressor& c) { return c.size_bound(); })
      .def_property_readonly("frame_size_bound",
                             [](const py_compressor& c) { return c.frame_size_bound(); })
      .def(
          "compress",
          [](py_compressor& c, const py::object& array, const opt_object& out) {
            return c.compress(array, out, true);
          },
          py::arg("array"), py::kw_only(), py::arg("out") = py::none())
      .def(
          "compress_raw",
          [](py_compressor& c, const py::object& array, const opt_object& out) {
            return c.compress(array, out, false);
          },
          py::arg("array"), py::kw_only(), py::arg("out") = py::none())
      .def(
          "decompress",
          [](py_compressor& c, const py::object& buffer, const opt_array& out) {
            return c.decompress(buffer, out, true);
          },
          py::arg("buffer"), py::kw_only(), py::arg("out") = py::none())
      .def(
          "decompress_raw",
          [](py_compressor& c, const py::object& buffer, const opt_array& out) {
            return c.decompress(buffer, out, false);
          },
          py::arg("buffer"), py::kw_only(), py::arg("out") = py::none())
      .def("__repr__", [](const py_compressor& c) {
        return "ndzip.Compressor(" + c.shape().to_string() + ", backend='" + c.backend() +
               "', mode='" + mode_name(c.mode()) + "')";
      });
  m.def("frame_info", &frame_info, py::arg("buffer"));
  m.def("_finalize", &finalize_owned_kokkos);
  m.def("_time_cpp", &time_cpp, py::arg("array"), py::arg("backend") = py::none(),
        py::arg("repeats") = 5);
}
