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

// ndzip._device: the array libraries' own calls (current streams, new arrays), in Python. Kept
// for the life of the process and never released: a static py::object would be released after
// the interpreter has gone.
const py::module_& device_module() {
  static const auto* module = new py::module_(py::module_::import("ndzip._device"));
  return *module;
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
  const dlpack_tensor taken = [&] {
    const current_device on(where.device);  // PyTorch exports only from the tensor's device
    return dlpack_tensor(object, dlpack_stream(where, stream));
  }();
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
  a.unsigned_bytes = t.dtype.code == dlpack::uint_code && t.dtype.bits == 8 && t.dtype.lanes == 1;
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
  a.unsigned_bytes = typestr.size() == 3 && typestr.compare(1, 2, "u1") == 0;
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

// CuPy's arrays and PyTorch's tensors (their exact types), described by their own attributes:
// about a microsecond, where DLPack and __cuda_array_interface__ take 3 to 20 (a 1 KiB call
// takes 15). Used on the library's current stream only, where nothing is to be ordered.
enum class known_library { none, cupy, torch };

struct known_types {
  PyTypeObject* cupy_array = nullptr;
  PyTypeObject* torch_tensor = nullptr;
  py::object torch_float32, torch_float64, torch_uint8, torch_strided;
  // The libraries' current stream of a device, as a handle: f(device).
  py::object cupy_current_stream, torch_current_stream;
};

// Filled as each library is first seen imported; never released (see device_module).
known_types& known() {
  static auto* types = new known_types;
  return *types;
}

known_library library_of(const py::handle& object) {
  known_types& k = known();
  PyTypeObject* type = Py_TYPE(object.ptr());
  if (type == k.cupy_array) return known_library::cupy;
  if (type == k.torch_tensor) return known_library::torch;
  const std::string_view name = type->tp_name;
  // A library not imported has no arrays yet: sys.modules, not an import.
  const auto imported = [](const char* library) {
    return py::module_::import("sys").attr("modules").attr("get")(library);
  };
  if (!k.cupy_array && name == "cupy.ndarray") {
    const py::object module = imported("cupy");
    if (!module.is_none() && module.attr("ndarray").ptr() == reinterpret_cast<PyObject*>(type)) {
      k.cupy_current_stream = module.attr("cuda").attr("get_current_stream");
      k.cupy_array = type;
      return known_library::cupy;
    }
  }
  if (!k.torch_tensor && name == "Tensor") {
    const py::object module = imported("torch");
    if (!module.is_none() && module.attr("Tensor").ptr() == reinterpret_cast<PyObject*>(type)) {
      k.torch_float32 = module.attr("float32");
      k.torch_float64 = module.attr("float64");
      k.torch_uint8 = module.attr("uint8");
      k.torch_strided = module.attr("strided");
      k.torch_current_stream = device_module().attr("_torch_raw_stream")(module);
      k.torch_tensor = type;
      return known_library::torch;
    }
  }
  return known_library::none;
}

// Where a CuPy array or a PyTorch tensor lies, on the build's GPU runtime; nothing for a tensor
// not on a GPU (the protocols say where).
std::optional<device_location> known_location(known_library library, const py::handle& object) {
  const auto api =
      gpu_runtime_is_rocm() ? device_location::runtime::rocm : device_location::runtime::cuda;
  if (library == known_library::cupy)
    return device_location{api, object.attr("data").attr("device_id").cast<int>()};
  if (!object.attr("is_cuda").cast<bool>()) return std::nullopt;  // PyTorch's ROCm too
  return device_location{api, object.attr("get_device")().cast<int>()};
}

// A CuPy array's or a PyTorch tensor's memory; nothing for what only the protocols say right
// (a tensor that requires grad, or not strided: their exports refuse it, saying why).
std::optional<device_array> from_known_library(known_library library, const py::handle& object,
                                               const device_location& where) {
  device_array a;
  a.where = where;
  if (library == known_library::cupy) {
    a.data = reinterpret_cast<void*>(object.attr("data").attr("ptr").cast<std::uintptr_t>());
    const py::dtype dtype = object.attr("dtype");
    a.item_bytes = static_cast<std::size_t>(dtype.itemsize());
    if (dtype.equal(py::dtype::of<float>())) a.type = ndzip::element_type::float32;
    if (dtype.equal(py::dtype::of<double>())) a.type = ndzip::element_type::float64;
    a.unsigned_bytes = dtype.equal(py::dtype::of<std::uint8_t>());
    if (!a.type) a.type_name = py::str(static_cast<const py::handle&>(dtype)).cast<std::string>();
    a.c_contiguous = object.attr("flags").attr("c_contiguous").cast<bool>();
  } else {
    const known_types& k = known();
    if (object.attr("requires_grad").cast<bool>() ||
        !py::object(object.attr("layout")).is(k.torch_strided))
      return std::nullopt;
    a.data = reinterpret_cast<void*>(object.attr("data_ptr")().cast<std::uintptr_t>());
    const py::object dtype = object.attr("dtype");
    if (dtype.is(k.torch_float32)) a.type = ndzip::element_type::float32;
    if (dtype.is(k.torch_float64)) a.type = ndzip::element_type::float64;
    a.unsigned_bytes = dtype.is(k.torch_uint8);
    if (a.type)
      a.item_bytes = *a.type == ndzip::element_type::float32 ? 4 : 8;
    else if (a.unsigned_bytes)
      a.item_bytes = 1;
    else
      a.item_bytes = object.attr("element_size")().cast<std::size_t>();
    // Only for a message: made where the dtype will be refused.
    if (!a.type) a.type_name = py::str(static_cast<const py::handle&>(dtype)).cast<std::string>();
    a.c_contiguous = object.attr("is_contiguous")().cast<bool>();
  }
  for (const auto extent : py::tuple(object.attr("shape")))
    a.shape.push_back(extent.cast<std::int64_t>());
  a.keeper = py::reinterpret_borrow<py::object>(object);
  return a;
}

}  // namespace

std::string device_location::to_string() const {
  const std::string kind = api == runtime::cuda ? "CUDA" : "ROCm";
  return device < 0 ? kind + " device memory" : kind + " device " + std::to_string(device);
}

std::optional<device_location> device_location_of(const py::object& object) {
  if (const known_library library = library_of(object); library != known_library::none)
    if (auto where = known_location(library, object)) return where;
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
                                 const call_stream& stream) {
  if (stream.libraries_current) {
    if (const known_library library = library_of(object); library != known_library::none)
      if (auto a = from_known_library(library, object, where)) return std::move(*a);
  }
  const bool dlpack = py::hasattr(object, "__dlpack__");
  if (dlpack && !(stream.libraries_current && py::hasattr(object, "__cuda_array_interface__")))
    return from_dlpack(object, where, stream.handle);
  return from_cuda_array_interface(object, where, stream.handle);
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

call_stream stream_for_call(const py::object& stream, const py::object& array,
                            const device_location& where) {
  // CuPy's and PyTorch's current streams asked here, not through ndzip._device: a microsecond
  // less per call.
  if (stream.is_none()) {
    const known_library library = library_of(array);
    const known_types& k = known();
    if (library == known_library::cupy)
      return call_stream{k.cupy_current_stream(where.device).attr("ptr").cast<std::uintptr_t>(),
                         true};
    if (library == known_library::torch)
      return call_stream{k.torch_current_stream(where.device).cast<std::uintptr_t>(), true};
  }
  return call_stream{device_module()
                         .attr("stream_handle")(stream, array, where.backend(), where.device)
                         .cast<std::uintptr_t>(),
                     stream.is_none()};
}

py::object new_device_array(const py::object& like, const device_location& where,
                            const py::dtype& dtype, const std::vector<py::ssize_t>& shape) {
  return device_module().attr("empty")(like, where.backend(), where.device, dtype,
                                       py::tuple(py::cast(shape)));
}

py::object device_byte_prefix(const py::object& array, const device_array& memory,
                              std::size_t bytes) {
  // A 1-D uint8 array (the usual out=, and every new one) is sliced here: no library's call.
  if (memory.unsigned_bytes && memory.shape.size() == 1)
    return array[py::slice(0, static_cast<py::ssize_t>(bytes), 1)];
  return device_module().attr("byte_prefix")(array, bytes, memory.where.device);
}

}  // namespace ndzip_python
