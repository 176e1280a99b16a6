// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "compressor.hpp"

namespace ndzip_python {

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

py::dict frame_info(const py::object& buffer) {
  const input_buffer input(buffer);
  const ndzip::frame_info info = ndzip::inspect_frame(input.data(), input.size());
  const ndzip::array_shape shape = ndzip::array_shape::of(info);
  py::dict d;
  d["dtype"] = dtype_of(shape.type());
  d["shape"] = py::tuple(py::cast(py_shape(shape)));
  d["mode"] = ndzip::codec_mode_name(info.mode);
  d["stream_bytes"] = info.stream_bytes;
  return d;
}

}  // namespace ndzip_python
