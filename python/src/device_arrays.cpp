// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "device_arrays.hpp"

#include <numeric>

#include "device_runtime.hpp"
#include "dlpack.hpp"

namespace ndzip_python {

namespace {

std::string type_name_of(const py::object& object) {
  return py::repr(py::type::of(object)).cast<std::string>();
}

// ndzip._device: the array libraries' own calls (current streams, new arrays), in Python.
const py::module_& device_module() {
  static const py::module_ module = py::module_::import("ndzip._device");
  return module;
}

std::optional<ndzip::element_type> float_type(std::uint8_t code, unsigned bits) {
  if (code != dlpack::float_code) return std::nullopt;
  if (bits == 32) return ndzip::element_type::float32;
  if (bits == 64) return ndzip::element_type::float64;
  return std::nullopt;
}

// Whether `strides` (in items; empty: C order) describe C order for `shape`. Extents of 1 may
// have any stride, as NumPy and the array API treat them.
bool c_order(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides) {
  if (strides.empty()) return true;
  std::int64_t expected = 1;
  for (std::size_t a = shape.size(); a-- > 0;) {
    if (shape[a] != 1 && strides[a] != expected) return false;
    expected *= shape[a];
  }
  return true;
}

// CUDA's stream handles in DLPack's encoding: the legacy default stream is 1, as 0 is refused.
std::intptr_t dlpack_stream(const device_location& where, std::uintptr_t stream) {
  if (where.api == device_location::runtime::cuda && stream == 0) return 1;
  return static_cast<std::intptr_t>(stream);
}

device_array from_dlpack(const py::object& object, const device_location& where,
                         std::uintptr_t stream) {
  const dlpack_tensor taken(object, dlpack_stream(where, stream));
  const dlpack::tensor& t = taken.get();
  device_array a;
  a.where = where;
  a.data = static_cast<char*>(t.data) + t.byte_offset;
  a.type = t.dtype.lanes == 1 ? float_type(t.dtype.code, t.dtype.bits) : std::nullopt;
  const char* kinds[] = {"int", "uint", "float"};
  a.type_name =
      (t.dtype.code <= 2 ? kinds[t.dtype.code] : "dlpack-code-" + std::to_string(t.dtype.code)) +
      std::to_string(t.dtype.bits) +
      (t.dtype.lanes == 1 ? "" : "x" + std::to_string(t.dtype.lanes));
  a.item_bytes = (std::size_t{t.dtype.bits} * t.dtype.lanes + 7) / 8;
  a.shape.assign(t.shape, t.shape + t.ndim);
  std::vector<std::int64_t> strides;
  if (t.strides) strides.assign(t.strides, t.strides + t.ndim);
  a.c_contiguous = c_order(a.shape, strides);
  a.read_only = taken.read_only();
  a.keeper = taken.keeper();
  return a;
}

device_array from_cuda_array_interface(const py::object& object, const device_location& where,
                                       std::uintptr_t stream) {
  const py::dict cai = object.attr("__cuda_array_interface__");
  device_array a;
  a.where = where;
  const py::tuple data = cai["data"];
  a.data = reinterpret_cast<void*>(data[0].cast<std::uintptr_t>());
  a.read_only = data[1].cast<bool>();
  const std::string typestr = cai["typestr"].cast<std::string>();
  a.type_name = typestr;
  const py::dtype dtype(typestr);
  a.item_bytes = static_cast<std::size_t>(dtype.itemsize());
  if (dtype.equal(py::dtype::of<float>())) a.type = ndzip::element_type::float32;
  if (dtype.equal(py::dtype::of<double>())) a.type = ndzip::element_type::float64;
  for (const auto extent : py::tuple(cai["shape"])) a.shape.push_back(extent.cast<std::int64_t>());
  std::vector<std::int64_t> strides;
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    const py::tuple given = cai["strides"];
    const auto item = static_cast<std::int64_t>(a.item_bytes);
    for (std::size_t d = 0; d < given.size(); ++d) {
      const auto bytes = given[d].cast<std::int64_t>();
      // A stride of no whole items is no layout of C order, unless its extent is 1.
      if (bytes % item != 0 && (d >= a.shape.size() || a.shape[d] != 1)) a.c_contiguous = false;
      strides.push_back(bytes / item);
    }
    if (strides.size() != a.shape.size()) a.c_contiguous = false;
  }
  if (a.c_contiguous) a.c_contiguous = c_order(a.shape, strides);
  if (cai.contains("mask") && !cai["mask"].is_none())
    throw py::value_error("ndzip: " + type_name_of(object) +
                          " has a mask; ndzip reads every "
                          "value");
  // Version 3: the stream the exporter last wrote the array on, to be ordered before ours.
  if (cai.contains("stream") && !cai["stream"].is_none()) {
    const auto producer = cai["stream"].cast<std::uintptr_t>();
    const bool same = producer == stream || (producer == 1 && stream == 0);
    if (!same) order_stream_after(stream, producer);
  }
  a.keeper = object;
  return a;
}

}  // namespace

std::string device_location::to_string() const {
  const std::string kind = api == runtime::cuda ? "CUDA" : "ROCm";
  return device < 0 ? kind + " device memory" : kind + " device " + std::to_string(device);
}

std::optional<device_location> device_location_of(const py::object& object) {
  if (py::hasattr(object, "__dlpack_device__")) {
    const py::tuple dev = object.attr("__dlpack_device__")();
    const auto type = dev[0].cast<std::int32_t>();
    const int id = dev[1].cast<int>();
    switch (type) {
      case dlpack::cpu:
      case dlpack::cuda_host:
      case dlpack::rocm_host:
        return std::nullopt;
      case dlpack::cuda:
      case dlpack::cuda_managed:
        return device_location{device_location::runtime::cuda, id};
      case dlpack::rocm:
        return device_location{device_location::runtime::rocm, id};
      default:
        throw py::type_error("ndzip: " + type_name_of(object) +
                             " lies in DLPack device memory "
                             "of type " +
                             std::to_string(type) +
                             "; ndzip reads host memory, "
                             "CUDA and ROCm devices");
    }
  }
  // Only a device array has the attribute (PyTorch's CPU tensors raise AttributeError for it).
  if (py::hasattr(object, "__cuda_array_interface__")) {
    const py::dict cai = object.attr("__cuda_array_interface__");
    const auto address = py::tuple(cai["data"])[0].cast<std::uintptr_t>();
    // An empty array may have no address; it is refused for its shape later.
    const int device = address ? device_of_pointer(reinterpret_cast<void*>(address)) : 0;
    return device_location{device_location::runtime::cuda, device};
  }
  return std::nullopt;
}

std::size_t device_array::bytes() const {
  return std::accumulate(
      shape.begin(), shape.end(), std::size_t{item_bytes},
      [](std::size_t n, std::int64_t e) { return n * static_cast<std::size_t>(e); });
}

std::string device_array::shape_text() const {
  std::string text;
  for (const auto e : shape) text += (text.empty() ? "" : "x") + std::to_string(e);
  return text.empty() ? "()" : text;
}

device_array borrow_device_array(const py::object& object, const device_location& where,
                                 std::uintptr_t stream) {
  if (py::hasattr(object, "__dlpack__")) return from_dlpack(object, where, stream);
  return from_cuda_array_interface(object, where, stream);
}

std::optional<py::array> host_array_from_dlpack(const py::object& object) {
  if (!py::hasattr(object, "__dlpack__")) return std::nullopt;
  const dlpack_tensor taken(object, std::nullopt);
  const dlpack::tensor& t = taken.get();
  if (t.dtype.lanes != 1 || t.dtype.code > dlpack::float_code)
    throw py::type_error("ndzip: " + type_name_of(object) + " holds DLPack values of type code " +
                         std::to_string(t.dtype.code) + ", not floats");
  const char kind = "iuf"[t.dtype.code];
  const py::dtype dtype(std::string(1, kind) + std::to_string(t.dtype.bits / 8));
  std::vector<py::ssize_t> shape(t.shape, t.shape + t.ndim);
  std::vector<py::ssize_t> strides;
  if (t.strides)
    for (std::int32_t a = 0; a < t.ndim; ++a) strides.push_back(t.strides[a] * dtype.itemsize());
  else
    strides = py::detail::c_strides(shape, dtype.itemsize());
  py::array array(dtype, shape, strides, static_cast<char*>(t.data) + t.byte_offset,
                  taken.keeper());
  if (taken.read_only()) array.attr("setflags")(py::arg("write") = false);
  return array;
}

std::uintptr_t stream_for_call(const py::object& stream, const py::object& array,
                               const device_location& where) {
  return device_module()
      .attr("stream_handle")(stream, array, where.backend(), where.device)
      .cast<std::uintptr_t>();
}

py::object new_device_array(const py::object& like, const device_location& where,
                            const py::dtype& dtype, const std::vector<py::ssize_t>& shape) {
  return device_module().attr("empty")(like, where.backend(), where.device, dtype,
                                       py::tuple(py::cast(shape)));
}

py::object device_byte_prefix(const py::object& array, std::size_t bytes) {
  return device_module().attr("byte_prefix")(array, bytes);
}

}  // namespace ndzip_python
