// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip.Compressor (py_compressor) and the module's one-shot functions over it.

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
#include "session.hpp"

namespace ndzip_python {

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

// One compressor per call: ndzip.compress / compress_raw, and ndzip.decompress of a frame (its
// header read first: it says what to allocate).
py::object compress(const py::object& object, const std::optional<py::object>& out,
                    const std::optional<std::string>& backend, const std::string& mode,
                    bool framed);
py::array decompress(const py::object& buffer, const std::optional<py::array>& out,
                     const std::optional<std::string>& backend);
// What a frame's header says, without decoding it.
py::dict frame_info(const py::object& buffer);

}  // namespace ndzip_python
