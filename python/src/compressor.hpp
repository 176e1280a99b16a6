// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip.Compressor (py_compressor) and the module's one-shot functions over it, for host arrays
// and buffers (NumPy, the buffer protocol, host DLPack) and for device arrays (DLPack,
// __cuda_array_interface__; device_arrays.hpp), which are read and written where they lie.

#include <Python.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <ndzip/dynamic.hpp>
#include <ndzip/error.hpp>
#include <ndzip/frame_format.hpp>

#include "arrays.hpp"
#include "device_arrays.hpp"
#include "session.hpp"

namespace ndzip_python {

// ndzip.Compressor: a dynamic_compressor for one dtype, shape, mode and backend, kept for many
// calls (its scratch, and a GPU's staging memory, are reused), as ndzip::compressor is in C++.
// The module's functions make one per call. Device arrays run on a second dynamic_compressor,
// made on the stream of the call (native_stream) and kept while calls come on that stream.
class py_compressor {
 public:
  // `folding`: how its frames code the array (ndzip/folding.hpp); bare streams never fold.
  py_compressor(const ndzip::array_shape& shape, const std::optional<std::string>& backend,
                ndzip::codec_mode mode, ndzip::folding folding = ndzip::folding::automatic);

  static py_compressor for_array(const py::object& dtype, const std::vector<std::uint64_t>& extents,
                                 const std::optional<std::string>& backend,
                                 const py::object& mode, const py::object& folding) {
    return py_compressor(shape_named(dtype, extents), backend, mode_named(mode),
                         folding_named(folding));
  }

  const ndzip::array_shape& shape() const { return m_shape; }
  const std::string& backend() const { return m_backend; }
  ndzip::codec_mode mode() const { return m_mode; }
  ndzip::folding folding() const { return m_folding; }
  // The grid its frames code.
  const ndzip::array_shape& frame_coded_shape() const { return m_frame_shape; }
  std::size_t size_bound() const { return m_size_bound; }
  std::size_t frame_size_bound() const { return m_frame_size_bound; }

  // The frame (or bare stream) of `object`, which must have this compressor's dtype and shape.
  // Host arrays: a new bytes object, or into `out` (a writable buffer), returning the memoryview
  // of the bytes written. Device arrays, on `stream` (see stream_for_call): a frame in host
  // memory as for host arrays; a bare stream into a new 1-D uint8 array of the array's library
  // on its device, or into `out` (a device array there), returning its first bytes written.
  py::object compress(const py::object& object, const std::optional<py::object>& out,
                      bool framed, const py::object& stream);
  // A host array already taken, or a device array already borrowed (the one-shot functions
  // learn the shape from it, and take an array once).
  py::object compress_host(const py::array& array, const std::optional<py::object>& out,
                           bool framed);
  py::object compress_device(const py::object& object, const device_array& values,
                             const call_stream& stream, const std::optional<py::object>& out,
                             bool framed);

  // RuntimeError if this Compressor's backend cannot run on the calling thread (it was made on
  // another); with the GIL held, before each call.
  void check_thread() const { require_this_thread(m_backend); }

  // Decodes a frame (checked whole, and to hold this compressor's array and mode; in host
  // memory) or a bare stream (exactly one, no bytes after it; in host or device memory) into a
  // new array, or into `out` (checked). The result lies where `out` lies, else on the stream's
  // device, else where `like` (an array) lies, of its library; else in a new NumPy array.
  py::object decompress(const py::object& buffer, const std::optional<py::object>& out,
                        bool framed, const py::object& stream, const py::object& like);

 private:
  // ValueError unless this compressor's backend runs on `where`.
  void check_device(const device_location& where) const;
  // f(codec), the GIL released: the codec on the backend's instance, or on `stream`.
  // RuntimeError once Kokkos has been finalised.
  template <class F>
  decltype(auto) with_codec(const F& f);
  // `stream` is a handle of `device` (0: its legacy default stream), made current meanwhile.
  template <class F>
  decltype(auto) with_stream_codec(std::uintptr_t stream, int device, const F& f);

  py::array decompress_host(const py::object& buffer, const std::optional<py::object>& out,
                            bool framed);
  py::object decompress_device(const py::object& buffer,
                               const std::optional<device_location>& buffer_on,
                               const py::object& target, const device_location& where,
                               const call_stream& stream, bool framed);

  ndzip::array_shape m_shape;
  ndzip::codec_mode m_mode;
  ndzip::folding m_folding;
  ndzip::array_shape m_frame_shape;
  std::string m_backend;
  std::size_t m_size_bound = 0, m_frame_size_bound = 0;
  std::shared_ptr<codec_slot> m_slot;
};

// One compressor per call: ndzip.compress / compress_raw, ndzip.decompress of a frame (its
// header read first: it says what to allocate), ndzip.decompress_raw. `backend` None: the
// device's backend for device arrays, else the library's default.
py::object compress(const py::object& object, const std::optional<py::object>& out,
                    const std::optional<std::string>& backend, const py::object& mode,
                    bool framed, const py::object& stream,
                    ndzip::folding folding = ndzip::folding::automatic);
py::object decompress(const py::object& buffer, const std::optional<py::object>& out,
                      const std::optional<std::string>& backend, const py::object& stream,
                      const py::object& like);
py::object decompress_raw(const py::object& buffer, const py::object& dtype,
                          const std::vector<std::uint64_t>& extents,
                          const std::optional<py::object>& out,
                          const std::optional<std::string>& backend, const py::object& mode,
                          const py::object& stream, const py::object& like);
// What a frame's header says, without decoding it (a chunked frame: its header, index and slab
// heads).
py::dict frame_info(const py::object& buffer);
// The box at `start` of extents `count` (slowest first) of the array a frame of any version
// holds, decoding only what it touches (ndzip::decompress_frame_region): a new array of the box's
// shape, or into `out` (of the box's shape, or of `indexed` where given: the same memory), or a
// new array of the library and device of `like`, as decompress() places its result.
py::object decompress_region(const py::object& buffer, const std::vector<std::uint64_t>& start,
                             const std::vector<std::uint64_t>& count,
                             const std::optional<std::vector<py::ssize_t>>& indexed,
                             const std::optional<py::object>& out,
                             const std::optional<std::string>& backend, const py::object& stream,
                             const py::object& like);

}  // namespace ndzip_python
