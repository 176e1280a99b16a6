// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip._ndzip: the extension behind the Python package `ndzip` (python/ndzip/__init__.py),
// NumPy arrays to frames and bare streams and back through the library's run-time layer
// (ndzip/dynamic.hpp). This file holds the bindings only: the Kokkos session and the threads a
// backend runs on (session.hpp), the adapters between Python objects and the run-time layer
// (arrays.hpp; device arrays through DLPack and __cuda_array_interface__: device_arrays.hpp,
// dlpack.hpp, device_runtime.hpp), ndzip.Compressor and the one-shot functions
// (compressor.hpp), and ndzip.bench's C++ timing in the private submodule _bench
// (bench_timing.hpp).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>

#include <ndzip/backends.hpp>
#include <ndzip/dynamic.hpp>
#include <ndzip/error.hpp>
#include <ndzip/folding.hpp>
#include <ndzip/frame_format.hpp>
#include <ndzip/version.hpp>

#include "bench_timing.hpp"
#include "border_warning.hpp"
#include "compressor.hpp"
#include "session.hpp"

namespace py = pybind11;
using namespace ndzip_python;

PYBIND11_MODULE(_ndzip, m) {
  m.doc() = "ndzip-kokkos: lossless compression of float32/float64 arrays (the extension)";
  m.attr("__version__") = ndzip::version_string;
  m.attr("frame_header_bytes") = ndzip::frame_header_bytes;
  // The codec modes' names, the default first (ndzip/codec_mode.hpp), and a mode's code as the
  // HDF5 filter stores it.
  py::list modes;
#define NDZIP_PYTHON_MODE_NAME(mode, code, name) modes.append(name);
  NDZIP_FOR_EACH_CODEC_MODE(NDZIP_PYTHON_MODE_NAME)
#undef NDZIP_PYTHON_MODE_NAME
  m.attr("modes") = py::tuple(modes);
  m.def(
      "_mode_code",
      [](const py::object& name) { return static_cast<unsigned>(mode_named(name)); },
      py::arg("mode"));
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
  define_border_warning(m);
  stream_error.attr("__doc__") =
      "A damaged or inconsistent frame or stream (a ValueError): nothing was decoded from it.";
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
  using opt_string = std::optional<std::string>;
  // stream=None: the current stream of a device array's library (device_arrays.hpp); like=None:
  // results of host input in NumPy arrays.
  const auto none = py::none();
  m.def(
      "compress",
      [](const py::object& array, const opt_object& out, const opt_string& backend,
         const py::object& mode, const py::object& stream, const py::object& folding) {
        return compress(array, out, backend, mode, true, stream, folding_named(folding));
      },
      "A frame of `array` (float32 or float64, 1 to 3 dimensions; NumPy, anything NumPy takes, "
      "DLPack or __cuda_array_interface__): the header (dtype, shape, mode), the stream and an "
      "XXH3-64 checksum, as bytes; or written into `out` (a writable C-contiguous buffer of at "
      "least size_bound() bytes), returning a memoryview of exactly the bytes written. `backend`: "
      "one of backends() (None: default_backend(), or a device array's GPU); `mode`: one of "
      "modes; `stream`: a GPU stream for device arrays (None: their library's current one); "
      "`folding`: 'automatic' (an array with few values in whole hypercubes is coded with its "
      "slowest dimensions merged, see coded_shape()) or 'none' (a frame that readers before "
      "folding also read). An array whose stream stores most of its values raw (outside whole "
      "hypercubes) draws an ndzip.BorderWarning, once per shape and mode. TypeError for another "
      "dtype, ValueError for another rank or a bad description.",
      py::arg("array"), py::kw_only(), py::arg("out") = none, py::arg("backend") = none,
      py::arg("mode") = "ndzip", py::arg("stream") = none, py::arg("folding") = "automatic");
  m.def(
      "compress_raw",
      [](const py::object& array, const opt_object& out, const opt_string& backend,
         const py::object& mode, const py::object& stream) {
        return compress(array, out, backend, mode, false, stream);
      },
      "The bare ndzip stream of `array` (no header, no checksum: the caller keeps dtype, shape "
      "and mode), as bytes, or into `out` as compress() does; for a device array, a 1-D uint8 "
      "array of its library on its device (or its `out`, a device array there). Arguments as for "
      "compress().",
      py::arg("array"), py::kw_only(), py::arg("out") = none, py::arg("backend") = none,
      py::arg("mode") = "ndzip", py::arg("stream") = none);
  m.def("decompress", &decompress,
        "The array of a frame (bytes or any buffer in host memory), checked whole first (header, "
        "length, checksum): a new NumPy array, or written into `out` (exactly the frame's dtype "
        "and shape, C-contiguous, writable; host or device), or a new array of the library and "
        "device of `like`. ndzip.StreamError (a ValueError) for a damaged or inconsistent frame.",
        py::arg("buffer"), py::kw_only(), py::arg("out") = none,
        py::arg("backend") = none, py::arg("stream") = none, py::arg("like") = none);
  // ndzip.decompress(region=) and ndzip.FrameArray (python/ndzip/_region.py) turn NumPy's
  // indexing into the box; this decodes it.
  m.def("_decompress_region", &decompress_region,
        "The box at `start` of extents `count` (slowest first) of a frame of any version, only "
        "what it touches decoded: a new array of the box's shape, or into `out` (of the box's "
        "shape or of `indexed`), or onto the device of `like`.",
        py::arg("buffer"), py::arg("start"), py::arg("count"), py::kw_only(),
        py::arg("indexed") = none, py::arg("out") = none, py::arg("backend") = none,
        py::arg("stream") = none, py::arg("like") = none);
  m.def("decompress_raw", &decompress_raw,
        "The array of a bare stream of `dtype` and `shape` in `mode` (exactly one stream, no "
        "bytes after it; host memory, or device memory for values on that device), as "
        "decompress() gives it. ndzip.StreamError where the stream is damaged or of another "
        "shape's length.",
        py::arg("buffer"), py::arg("dtype"), py::arg("shape"),
        py::kw_only(), py::arg("out") = none, py::arg("backend") = none,
        py::arg("mode") = "ndzip", py::arg("stream") = none, py::arg("like") = none);
  m.def(
      "size_bound",
      [](const py::object& dtype, const std::vector<std::uint64_t>& shape, const py::object& mode,
         bool frame) {
        const ndzip::array_shape array = shape_named(dtype, shape);
        const ndzip::codec_mode coding = mode_named(mode);
        if (!frame) return ndzip::compressed_size_bound(array, coding);
        // Folded or not: the larger.
        return ndzip::frame_header_bytes +
               std::max(ndzip::compressed_size_bound(array, coding),
                        ndzip::compressed_size_bound(
                            ndzip::coded_shape(array, ndzip::folding::automatic), coding));
      },
      "The most bytes a compression of an array of `dtype` and `shape` in `mode` writes: a frame "
      "(frame=True, the header included, folded or not) or a bare stream; the size an `out` "
      "needs.",
      py::arg("dtype"), py::arg("shape"), py::kw_only(), py::arg("mode") = "ndzip",
      py::arg("frame") = true);
  m.def(
      "coded_shape",
      [](const std::vector<std::uint64_t>& shape, const py::object& folding) {
        return py::tuple(py::cast(
            py_shape(ndzip::coded_shape(shape_named(py::str("float32"), shape),
                                        folding_named(folding)))));
      },
      "The shape of the grid a frame codes for an array of `shape`: with folding='automatic' "
      "(compress()'s default), where fewer than 3/4 of its values lie in whole hypercubes "
      "(4096, 64x64 or 16x16x16 values; the rest is stored raw), the folding of its slowest "
      "dimensions with the most values in them: coded_shape((5, 90, 180)) is (81000,); "
      "`shape` itself otherwise. The same for float32 and float64.",
      py::arg("shape"), py::kw_only(), py::arg("folding") = "automatic");
  m.def(
      "suggest_chunks",
      [](const std::vector<std::uint64_t>& chunks, const std::optional<std::vector<std::uint64_t>>& shape) {
        const ndzip::array_shape chunk = shape_named(py::str("float32"), chunks);
        return py::tuple(py::cast(py_shape(
            shape ? ndzip::suggested_chunk_shape(chunk, shape_named(py::str("float32"), *shape))
                  : ndzip::suggested_chunk_shape(chunk))));
      },
      "A chunk shape near `chunks` of which ndzip codes at least half in whole hypercubes (the "
      "shape ndzip.BorderWarning proposes): each extent rounded to a multiple of the hypercube's "
      "side (4096, 64 or 16 by rank), capped by the array's `shape` where given.",
      py::arg("chunks"), py::kw_only(), py::arg("shape") = none);

  py::class_<py_compressor>(
      m, "Compressor",
      "Compressor(dtype, shape, backend=None, mode='ndzip', folding='automatic'): a compressor "
      "kept for many arrays of one dtype and shape, its memory reused. backend=None: "
      "default_backend(); folding: how its frames code the array (coded_shape), bare streams "
      "never folded; decompress() reads frames of either folding. compress(out=) "
      "returns a memoryview of exactly the bytes written. Usable from any thread its backend "
      "runs on; with Kokkos 3 OpenMP runs only on the thread that initialised Kokkos (the one "
      "that imported ndzip), and a call from another thread raises RuntimeError: make a "
      "Compressor with backend='serial' for other threads (the same bytes).")
      .def(py::init(&py_compressor::for_array), py::arg("dtype"), py::arg("shape"),
           py::kw_only(), py::arg("backend") = py::none(), py::arg("mode") = "ndzip",
           py::arg("folding") = "automatic")
      .def_property_readonly("dtype",
                             [](const py_compressor& c) { return dtype_of(c.shape().type()); })
      .def_property_readonly(
          "shape", [](const py_compressor& c) { return py::tuple(py::cast(py_shape(c.shape()))); })
      .def_property_readonly("backend",
                             [](const py_compressor& c) { return c.backend(); })
      .def_property_readonly(
          "mode", [](const py_compressor& c) { return ndzip::codec_mode_name(c.mode()); })
      .def_property_readonly(
          "folding", [](const py_compressor& c) { return ndzip::folding_name(c.folding()); })
      .def_property_readonly("coded_shape",
                             [](const py_compressor& c) {
                               return py::tuple(py::cast(py_shape(c.frame_coded_shape())));
                             })
      .def_property_readonly("size_bound",
                             [](const py_compressor& c) { return c.size_bound(); })
      .def_property_readonly("frame_size_bound",
                             [](const py_compressor& c) { return c.frame_size_bound(); })
      .def(
          "compress",
          [](py_compressor& c, const py::object& array, const opt_object& out,
             const py::object& stream) { return c.compress(array, out, true, stream); },
          "A frame of `array` (of this Compressor's dtype and shape), as ndzip.compress() makes "
          "it, the scratch memory reused.",
          py::arg("array"), py::kw_only(), py::arg("out") = none, py::arg("stream") = none)
      .def(
          "compress_raw",
          [](py_compressor& c, const py::object& array, const opt_object& out,
             const py::object& stream) { return c.compress(array, out, false, stream); },
          "The bare stream of `array`, as ndzip.compress_raw() makes it.",
          py::arg("array"), py::kw_only(), py::arg("out") = none, py::arg("stream") = none)
      .def(
          "decompress",
          [](py_compressor& c, const py::object& buffer, const opt_object& out,
             const py::object& stream, const py::object& like) {
            return c.decompress(buffer, out, true, stream, like);
          },
          "The array of a frame, which must hold this Compressor's dtype, shape and mode, as "
          "ndzip.decompress() gives it.",
          py::arg("buffer"), py::kw_only(), py::arg("out") = none, py::arg("stream") = none,
          py::arg("like") = none)
      .def(
          "decompress_raw",
          [](py_compressor& c, const py::object& buffer, const opt_object& out,
             const py::object& stream, const py::object& like) {
            return c.decompress(buffer, out, false, stream, like);
          },
          "The array of a bare stream of this Compressor's dtype, shape and mode, as "
          "ndzip.decompress_raw() gives it.",
          py::arg("buffer"), py::kw_only(), py::arg("out") = none, py::arg("stream") = none,
          py::arg("like") = none)
      .def("__repr__", [](const py_compressor& c) {
        return "ndzip.Compressor(" + c.shape().to_string() + ", backend='" + c.backend() +
               "', mode='" + ndzip::codec_mode_name(c.mode()) + "', folding='" +
               ndzip::folding_name(c.folding()) + "')";
      });
  m.def("frame_info", &frame_info,
        "What a frame holds, from its header and length, without decoding it: a dict of dtype, "
        "shape, mode, version (1 to 4), and coded_shape (the grid its stream codes: shape, or "
        "shape folded) and stream_bytes; for a chunked frame (version 4; its index and slab "
        "heads checked too) slab_rows and slab_count instead, and mode 'mixed' where its slabs "
        "differ. ndzip.StreamError where the header or length is not a frame's.",
        py::arg("buffer"));
  m.def("_finalize", &finalize_owned_kokkos);
  // ndzip.bench's measurement of the C++ calls, out of the package's namespace.
  m.def_submodule("_bench", "ndzip.bench's C++ side (not part of the API)")
      .def("time_cpp", &time_cpp, py::arg("array"), py::arg("backend") = py::none(),
           py::arg("repeats") = 5)
      .def("time_cpp_device", &time_cpp_device, py::arg("values"), py::arg("stream"),
           py::arg("decoded"), py::arg("repeats") = 5);
}
