// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "compressor.hpp"

#include <ndzip/chunked_frame_format.hpp>

#include "border_warning.hpp"
#include "device_runtime.hpp"

namespace ndzip_python {

namespace {

bool same_place(const device_location& a, const device_location& b) {
  return a.api == b.api && a.device == b.device;
}

std::string place_of(const std::optional<device_location>& where) {
  return where ? where->to_string() : "host memory";
}

// The shape of a device array of float32 or float64 values, 1 to 3 dimensions.
ndzip::array_shape shape_of(const device_array& a) {
  if (!a.type)
    throw py::type_error("ndzip compresses float32 and float64 arrays, not " + a.type_name +
                         " (a " + a.where.to_string() + " array)");
  if (a.shape.empty() || a.shape.size() > 3)
    throw py::value_error("ndzip compresses arrays of 1 to 3 dimensions, not " +
                          std::to_string(a.shape.size()));
  std::uint64_t extents[3] = {};
  for (std::size_t d = 0; d < a.shape.size(); ++d)
    extents[d] = static_cast<std::uint64_t>(a.shape[d]);
  return ndzip::array_shape(*a.type, static_cast<int>(a.shape.size()), extents);
}

// TypeError (another dtype) or ValueError (another shape) saying what(), unless `given` is
// `expected` (the message is made only then: this runs on every call).
template <class What>
void require_shape(const ndzip::array_shape& given, const ndzip::array_shape& expected,
                   const What& what) {
  if (given == expected) return;
  if (given.type() != expected.type()) throw py::type_error(what());
  throw py::value_error(what());
}

// What write(to, capacity) writes into host memory: a new bytes object of `bound` bytes cut to
// size, or `out` (a writable buffer of the caller's) and the memoryview of the bytes written.
template <class Write>
py::object into_host_bytes(const std::optional<py::object>& out, std::size_t bound,
                           const Write& write) {
  if (!out) return new_bytes(bound, [&](std::byte* to) { return write(to, bound); });
  std::size_t size = 0;
  {
    const output_buffer target(*out);
    py::gil_scoped_release release;
    size = write(target.data(), target.size());
  }
  return written_bytes(*out, size);
}

// A device array is read and written where it lies, in place: one that is not C-contiguous is
// refused rather than copied.
void require_c_order(const device_array& a, const char* role) {
  if (!a.c_contiguous)
    throw py::value_error(std::string("ndzip: ") + role + " (a " + a.where.to_string() +
                          " array of shape " + a.shape_text() +
                          ") is not C-contiguous; device "
                          "arrays are not copied: pass a contiguous one (x.copy(), "
                          "x.contiguous())");
}

void require_writable(const device_array& a, const char* role) {
  require_c_order(a, role);
  if (a.read_only) throw py::value_error(std::string("ndzip: ") + role + " is read-only");
}

// The backend a one-shot call runs on: the one asked for, else the device's for a device array.
std::optional<std::string> backend_for(const std::optional<std::string>& asked,
                                       const std::optional<device_location>& where) {
  if (asked || !where) return asked;
  return std::string(where->backend());
}

// `out` for a stream written beside an array on `where`: a writable C-contiguous device array
// there.
device_array borrow_stream_out(const py::object& out, const device_location& where,
                               const call_stream& stream) {
  const auto out_on = device_location_of(out);
  if (!out_on || !same_place(*out_on, where))
    throw py::value_error("ndzip: out lies in " + place_of(out_on) + ", the array on " +
                          where.to_string() + "; a stream is written beside its array");
  device_array bytes = borrow_device_array(out, where, stream);
  require_writable(bytes, "out");
  return bytes;
}

// ValueError unless `backend` runs on `where` (py_compressor::check_device).
void check_backend_device(const std::string& backend, const device_location& where) {
  if (backend != where.backend())
    throw py::value_error("ndzip: a " + where.to_string() + " array for a compressor on the '" +
                          backend + "' backend: device arrays run on the '" + where.backend() +
                          "' backend (backend='" + where.backend() + "' or None)");
  if (runs_on_any_device()) return;
  const int device = backend_device();
  if (where.device != device)
    throw py::value_error("ndzip: the array lies on " + where.to_string() +
                          ", but this Kokkos (before 4.4 for CUDA, 4.6 for HIP) runs on one "
                          "device per process, device " +
                          std::to_string(device) +
                          " here (choose it before importing ndzip: CUDA_VISIBLE_DEVICES, or "
                          "KOKKOS_DEVICE_ID)");
}

[[noreturn]] void refuse_device_frame(const char* what) {
  throw py::value_error(std::string("ndzip: ") + what +
                        " lies in device memory, but frames are "
                        "files' and messages' bytes, checksummed on the host: pass them in host "
                        "memory, or use compress_raw/decompress_raw for streams kept on the "
                        "device");
}

bool is_chunked(const input_buffer& input) {
  return input.size() > 4 &&
         std::to_integer<std::uint8_t>(input.data()[4]) == ndzip::frame_version_chunked;
}

// The array a frame of any version holds, from its header alone (a damaged one refused).
ndzip::array_shape array_of_frame(const input_buffer& input) {
  if (!is_chunked(input))
    return ndzip::array_shape::of(ndzip::read_frame_header(input.data(), input.size()));
  const ndzip::chunked_frame_info info = ndzip::read_chunked_header(input.data(), input.size());
  return ndzip::array_shape(info.type, info.dimensions, info.extents.data());
}

bool same_extents(const ndzip::array_shape& box, const std::vector<py::ssize_t>& shape) {
  if (shape.size() != static_cast<std::size_t>(box.rank())) return false;
  for (int a = 0; a < box.rank(); ++a)
    if (static_cast<std::uint64_t>(shape[a]) != box.extent(a)) return false;
  return true;
}

// `out` of a region decode in host memory: of the box's shape, or of `indexed` (the same
// memory: the box with axes of extent 1 dropped or added), checked as output_for checks it.
py::array region_out(const ndzip::array_shape& box,
                     const std::optional<std::vector<py::ssize_t>>& indexed,
                     const py::array& out) {
  const std::vector<py::ssize_t> shape(out.shape(), out.shape() + out.ndim());
  if (!indexed || same_extents(box, shape) || shape != *indexed) return output_for(box, out);
  if (!(out.flags() & py::array::c_style))
    throw py::value_error("ndzip: out is not C-contiguous");
  return output_for(box, out.attr("reshape")(py::tuple(py::cast(py_shape(box)))));
}

}  // namespace

py_compressor::py_compressor(const ndzip::array_shape& shape,
                             const std::optional<std::string>& backend, ndzip::codec_mode mode,
                             ndzip::folding folding)
    : m_shape(shape),
      m_mode(mode),
      m_folding(folding),
      m_frame_shape(ndzip::coded_shape(shape, folding)),
      m_slot(std::make_shared<codec_slot>()) {
  require_kokkos();
  m_backend = backend_for_call(backend);
  {
    py::gil_scoped_release release;
    m_slot->codec.emplace(m_backend, shape, mode, folding);
    m_size_bound = m_slot->codec->size_bound();
    m_frame_size_bound = m_slot->codec->frame_size_bound();
  }
  register_slot(m_slot);
}

template <class F>
decltype(auto) py_compressor::with_codec(const F& f) {
  const std::lock_guard<std::mutex> lock(m_slot->mutex);
  if (m_slot->finalised)
    throw std::runtime_error(
        "ndzip: Kokkos has been finalised; this Compressor can no longer "
        "be used");
  return f(*m_slot->codec);
}

template <class F>
decltype(auto) py_compressor::with_stream_codec(std::uintptr_t stream, int device, const F& f) {
  const std::lock_guard<std::mutex> lock(m_slot->mutex);
  if (m_slot->finalised)
    throw std::runtime_error(
        "ndzip: Kokkos has been finalised; this Compressor can no longer "
        "be used");
  const current_device on(device);
  if (!m_slot->on_stream || m_slot->stream != stream || m_slot->device != device) {
    m_slot->on_stream.reset();  // its instance released first (the old stream's work done)
    m_slot->on_stream.emplace(m_backend, m_shape, m_mode, ndzip::native_stream{stream},
                              m_folding);
    m_slot->stream = stream;
    m_slot->device = device;
  }
  return f(*m_slot->on_stream);
}

void py_compressor::check_device(const device_location& where) const {
  check_backend_device(m_backend, where);
}

py::object py_compressor::compress(const py::object& object, const std::optional<py::object>& out,
                                   bool framed, const py::object& stream) {
  check_thread();
  if (const auto where = device_location_of(object)) {
    const call_stream handle = stream_for_call(stream, object, *where);
    return compress_device(object, borrow_device_array(object, *where, handle), handle, out,
                           framed);
  }
  return compress_host(as_array(object), out, framed);
}

py::object py_compressor::compress_host(const py::array& array,
                                        const std::optional<py::object>& out, bool framed) {
  const ndzip::array_shape given = shape_of(array);
  require_shape(given, m_shape, [&] {
    return "ndzip: a " + given.to_string() + " array for a compressor of " + m_shape.to_string();
  });
  if (out && device_location_of(*out))
    throw py::value_error(
        "ndzip: out lies in device memory but the array in host memory; "
        "compress a device array into device memory");
  warn_if_mostly_border(m_shape, framed ? m_frame_shape : m_shape, m_mode);
  const py::array values = c_order(array);
  const void* data = values.data();
  const auto write = [&](std::byte* to, std::size_t capacity) {
    return with_codec([&](ndzip::dynamic_compressor& codec) {
      return framed ? codec.compress_frame(data, to, capacity) : codec.compress(data, to, capacity);
    });
  };
  return into_host_bytes(out, framed ? frame_size_bound() : size_bound(), write);
}

py::object py_compressor::compress_device(const py::object& object, const device_array& values,
                                          const call_stream& stream,
                                          const std::optional<py::object>& out, bool framed) {
  const ndzip::array_shape given = shape_of(values);
  require_shape(given, m_shape, [&] {
    return "ndzip: a " + given.to_string() + " array for a compressor of " + m_shape.to_string();
  });
  require_c_order(values, "the array");
  warn_if_mostly_border(m_shape, framed ? m_frame_shape : m_shape, m_mode);
  if (framed) {
    // The stream goes to the host with its header: the checksum covers it.
    if (out && device_location_of(*out)) refuse_device_frame("out");
    check_device(values.where);
    const auto write = [&](std::byte* to, std::size_t capacity) {
      return with_stream_codec(
          stream.handle, values.where.device, [&](ndzip::dynamic_compressor& codec) {
            return codec.compress_frame(values.data, to, capacity, ndzip::buffer_location::backend);
          });
    };
    return into_host_bytes(out, frame_size_bound(), write);
  }
  std::optional<device_array> bytes;
  if (out) bytes = borrow_stream_out(*out, values.where, stream);
  check_device(values.where);
  const py::object target =
      out ? *out
          : new_device_array(object, values.where, py::dtype::of<std::uint8_t>(),
                             {static_cast<py::ssize_t>(size_bound())});
  if (!out) bytes = borrow_device_array(target, values.where, stream);
  std::size_t size = 0;
  {
    py::gil_scoped_release release;
    size = with_stream_codec(stream.handle, values.where.device,
                             [&](ndzip::dynamic_compressor& codec) {
                               return codec.compress(values.data, bytes->data, bytes->bytes(),
                                                     ndzip::buffer_location::backend);
                             });
  }
  return device_byte_prefix(target, *bytes, size);
}

py::object py_compressor::decompress(const py::object& buffer, const std::optional<py::object>& out,
                                     bool framed, const py::object& stream,
                                     const py::object& like) {
  check_thread();
  const auto buffer_on = device_location_of(buffer);
  if (buffer_on && framed) refuse_device_frame("the frame");
  std::optional<device_location> result_on;
  if (out)
    result_on = device_location_of(*out);
  else if (buffer_on)
    result_on = buffer_on;
  else if (!like.is_none())
    result_on = device_location_of(like);
  if (buffer_on && (!result_on || !same_place(*buffer_on, *result_on)))
    throw py::value_error("ndzip: out lies in " + place_of(result_on) + ", the stream on " +
                          buffer_on->to_string() + "; a stream is decoded beside it");
  if (!result_on) return decompress_host(buffer, out, framed);
  if (!buffer_on && !framed)
    throw py::value_error("ndzip: a stream in host memory for values on " + result_on->to_string() +
                          "; copy the stream to the device first, or "
                          "decompress a frame");
  const py::object& anchor = buffer_on ? buffer : out ? *out : like;
  const call_stream handle = stream_for_call(stream, anchor, *result_on);
  if (!out) check_device(*result_on);  // before anything is allocated there
  const py::object target =
      out ? *out
          : new_device_array(anchor, *result_on, dtype_of(m_shape.type()), py_shape(m_shape));
  return decompress_device(buffer, buffer_on, target, *result_on, handle, framed);
}

py::array py_compressor::decompress_host(const py::object& buffer,
                                         const std::optional<py::object>& out, bool framed) {
  const input_buffer input(buffer);
  if (!framed)  // before the output is allocated
    ndzip::check_stream_size(m_shape, input.size(), m_mode);
  py::array result =
      output_for(m_shape, out ? std::optional<py::array>(host_out_array(*out)) : std::nullopt);
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

py::object py_compressor::decompress_device(const py::object& buffer,
                                            const std::optional<device_location>& buffer_on,
                                            const py::object& target, const device_location& where,
                                            const call_stream& stream, bool framed) {
  const device_array values = borrow_device_array(target, where, stream);
  const ndzip::array_shape held = shape_of(values);
  require_shape(held, m_shape, [&] {
    return "ndzip: out is a " + held.to_string() + " array, the data holds " + m_shape.to_string();
  });
  require_writable(values, "out");
  if (framed) {
    check_device(where);
    const input_buffer input(buffer);
    {
      py::gil_scoped_release release;
      with_stream_codec(stream.handle, values.where.device, [&](ndzip::dynamic_compressor& codec) {
        codec.decompress_frame(input.data(), input.size(), values.data,
                               ndzip::buffer_location::backend);
      });
    }
    return target;
  }
  const device_array input = borrow_device_array(buffer, *buffer_on, stream);
  require_c_order(input, "the stream");
  check_device(where);
  ndzip::check_stream_size(m_shape, input.bytes(), m_mode);
  std::size_t consumed = 0;
  {
    py::gil_scoped_release release;
    consumed = with_stream_codec(stream.handle, values.where.device,
                                 [&](ndzip::dynamic_compressor& codec) {
                                   return codec.decompress(input.data, input.bytes(), values.data,
                                                           ndzip::buffer_location::backend);
                                 });
  }
  if (consumed != input.bytes())
    throw ndzip::stream_error("ndzip: the " + m_shape.to_string() + " stream ends after " +
                              std::to_string(consumed) + " of the buffer's " +
                              std::to_string(input.bytes()) + " bytes");
  return target;
}

py::object compress(const py::object& object, const std::optional<py::object>& out,
                    const std::optional<std::string>& backend, const py::object& mode, bool framed,
                    const py::object& stream, ndzip::folding folding) {
  const auto where = device_location_of(object);
  if (!where) {
    // Taken once: a producer may export its memory once only (a DLPack capsule is consumed).
    const py::array array = as_array(object);
    py_compressor codec(shape_of(array), backend, mode_named(mode), folding);
    codec.check_thread();
    return codec.compress_host(array, out, framed);
  }
  require_kokkos();
  const call_stream handle = stream_for_call(stream, object, *where);
  const device_array values = borrow_device_array(object, *where, handle);
  // What the arrays are is said before the backend is looked for.
  const ndzip::array_shape shape = shape_of(values);
  require_c_order(values, "the array");
  if (out && !framed) borrow_stream_out(*out, *where, handle);
  py_compressor codec(shape, backend_for(backend, where), mode_named(mode), folding);
  return codec.compress_device(object, values, handle, out, framed);
}

py::object decompress(const py::object& buffer, const std::optional<py::object>& out,
                      const std::optional<std::string>& backend, const py::object& stream,
                      const py::object& like) {
  if (device_location_of(buffer)) refuse_device_frame("the frame");
  ndzip::frame_info info;
  {
    // The header alone first: it says what to allocate (a damaged one is refused here).
    const input_buffer input(buffer);
    if (is_chunked(input)) {
      // A chunked frame: the region of the whole array, slab by slab.
      const ndzip::array_shape held = array_of_frame(input);
      return decompress_region(buffer, std::vector<std::uint64_t>(held.rank(), 0),
                               std::vector<std::uint64_t>(held.extents().begin(),
                                                          held.extents().begin() + held.rank()),
                               std::nullopt, out, backend, stream, like);
    }
    info = ndzip::read_frame_header(input.data(), input.size());
  }
  const auto result_on = out              ? device_location_of(*out)
                         : like.is_none() ? std::nullopt
                                          : device_location_of(like);
  py_compressor codec(ndzip::array_shape::of(info), backend_for(backend, result_on), info.mode);
  return codec.decompress(buffer, out, true, stream, like);
}

py::object decompress_raw(const py::object& buffer, const py::object& dtype,
                          const std::vector<std::uint64_t>& extents,
                          const std::optional<py::object>& out,
                          const std::optional<std::string>& backend, const py::object& mode,
                          const py::object& stream, const py::object& like) {
  auto result_on = device_location_of(buffer);
  if (!result_on && out) result_on = device_location_of(*out);
  return py_compressor(shape_named(dtype, extents), backend_for(backend, result_on),
                       mode_named(mode))
      .decompress(buffer, out, false, stream, like);
}

py::dict frame_info(const py::object& buffer) {
  if (device_location_of(buffer)) refuse_device_frame("the frame");
  const input_buffer input(buffer);
  py::dict d;
  if (is_chunked(input)) {
    // Header, index, trailer and every slab's head checked; not the slabs' checksums.
    const ndzip::chunked_frame_layout layout =
        ndzip::inspect_chunked_frame(input.data(), input.size());
    const ndzip::chunked_frame_info& info = layout.frame;
    const ndzip::array_shape shape(info.type, info.dimensions, info.extents.data());
    std::string mode = ndzip::codec_mode_name(layout.slabs.front().mode);
    for (const ndzip::slab_info& slab : layout.slabs)
      if (slab.mode != layout.slabs.front().mode) mode = "mixed";
    d["dtype"] = dtype_of(shape.type());
    d["shape"] = py::tuple(py::cast(py_shape(shape)));
    d["mode"] = mode;
    d["version"] = ndzip::frame_version_chunked;
    d["slab_rows"] = info.slab_rows;
    d["slab_count"] = info.slab_count;
    return d;
  }
  const ndzip::frame_info info = ndzip::inspect_frame(input.data(), input.size());
  const ndzip::array_shape shape = ndzip::array_shape::of(info);
  d["dtype"] = dtype_of(shape.type());
  d["shape"] = py::tuple(py::cast(py_shape(shape)));
  d["mode"] = ndzip::codec_mode_name(info.mode);
  d["version"] = std::to_integer<unsigned>(input.data()[4]);
  d["coded_shape"] = py::tuple(py::cast(py_shape(ndzip::coded_shape_of(info))));
  d["stream_bytes"] = info.stream_bytes;
  return d;
}

py::object decompress_region(const py::object& buffer, const std::vector<std::uint64_t>& start,
                             const std::vector<std::uint64_t>& count,
                             const std::optional<std::vector<py::ssize_t>>& indexed,
                             const std::optional<py::object>& out,
                             const std::optional<std::string>& backend, const py::object& stream,
                             const py::object& like) {
  if (device_location_of(buffer)) refuse_device_frame("the frame");
  require_kokkos();
  ndzip::array_shape held;
  {
    const input_buffer input(buffer);
    held = array_of_frame(input);
  }
  const auto rank = static_cast<std::size_t>(held.rank());
  if (start.size() != rank || count.size() != rank)
    throw py::value_error("ndzip: the frame holds a " + held.to_string() + " array: a region of " +
                          std::to_string(rank) + " starts and extents, not " +
                          std::to_string(start.size()) + " and " + std::to_string(count.size()));
  const ndzip::array_shape box(held.type(), held.rank(), count.data());
  std::array<std::uint64_t, 3> first{};
  std::copy(start.begin(), start.end(), first.begin());
  const auto result_on = out              ? device_location_of(*out)
                         : like.is_none() ? std::nullopt
                                          : device_location_of(like);
  const std::string name = backend_for_call(backend_for(backend, result_on));
  if (!result_on) {
    py::array result = out ? region_out(box, indexed, host_out_array(*out))
                           : py::array(dtype_of(box.type()), py_shape(box));
    void* values = result.mutable_data();
    const input_buffer input(buffer);
    {
      py::gil_scoped_release release;
      ndzip::decompress_frame_region(name, input.data(), input.size(), box, first, values);
    }
    return std::move(result);
  }
  const py::object& anchor = out ? *out : like;
  const call_stream handle = stream_for_call(stream, anchor, *result_on);
  if (!out) check_backend_device(name, *result_on);  // before anything is allocated there
  const py::object target =
      out ? *out : new_device_array(anchor, *result_on, dtype_of(box.type()), py_shape(box));
  const device_array values = borrow_device_array(target, *result_on, handle);
  const std::vector<py::ssize_t> shape(values.shape.begin(), values.shape.end());
  if (!values.type || *values.type != box.type())
    throw py::type_error(
        "ndzip: out holds " +
        (values.type ? std::string(ndzip::element_type_name(*values.type)) : values.type_name) +
        " values, the region " + box.to_string());
  if (!same_extents(box, shape) && (!indexed || shape != *indexed))
    throw py::value_error("ndzip: out is a " + values.shape_text() + " array, the region " +
                          box.to_string());
  require_writable(values, "out");
  check_backend_device(name, values.where);
  const input_buffer input(buffer);
  {
    py::gil_scoped_release release;
    const current_device on(values.where.device);
    ndzip::decompress_frame_region(name, ndzip::native_stream{handle.handle}, input.data(),
                                   input.size(), box, first, values.data,
                                   ndzip::buffer_location::backend);
  }
  return target;
}

}  // namespace ndzip_python
