// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "device_arrays.hpp"

#include "array_description.hpp"
#include "device_runtime.hpp"
#include "dlpack.hpp"

namespace ndzip_python {

namespace {

// ndzip._device: the array libraries' own calls (current streams, new arrays), in Python. Kept
// for the life of the process and never released: a static py::object would be released after
// the interpreter has gone.
const py::module_& device_module() {
  static const auto* module = new py::module_(py::module_::import("ndzip._device"));
  return *module;
}

// CUDA's stream handles in DLPack's encoding: the legacy default stream is 1, as 0 is refused.
std::intptr_t dlpack_stream(const device_location& where, std::uintptr_t stream) {
  if (where.api == device_location::runtime::cuda && stream == 0) return 1;
  return static_cast<std::intptr_t>(stream);
}

// A device array of a checked description.
device_array borrowed(const device_location& where, const array_description& d,
                      py::object keeper) {
  device_array a;
  a.where = where;
  a.data = reinterpret_cast<void*>(d.address);
  a.type = d.item.codec_type();
  a.type_name = d.item.name;
  a.item_bytes = d.item.bytes;
  a.unsigned_bytes = d.item.unsigned_bytes();
  a.shape = d.shape;
  a.c_contiguous = d.c_contiguous();
  a.read_only = d.read_only;
  a.keeper = std::move(keeper);
  return a;
}

device_array from_dlpack(const py::object& object, const device_location& where,
                         std::uintptr_t stream) {
  const std::optional<dlpack_place> announced = dlpack_device_of(object);
  const dlpack_tensor taken = [&] {
    const current_device on(where.device);  // PyTorch exports only from the tensor's device
    return dlpack_tensor(object, dlpack_stream(where, stream));
  }();
  const array_description d = describe_dlpack(taken.get(), taken.read_only(), object, announced);
  return borrowed(where, d, taken.keeper());
}

device_array from_cuda_array_interface(const py::object& object, const device_location& where,
                                       std::uintptr_t stream) {
  const std::optional<cuda_array_interface> cai = cuda_array_interface_of(object);
  if (!cai)
    throw py::type_error("ndzip: " + type_name_of(object) +
                         " has neither __dlpack__ nor __cuda_array_interface__ any more");
  // Version 3: the stream the exporter last wrote the array on, to be ordered before ours.
  if (cai->stream) {
    const std::uintptr_t producer = *cai->stream;
    const bool same = producer == stream || (producer == 1 && stream == 0);
    if (!same) order_stream_after(stream, producer);
  }
  return borrowed(where, cai->array, object);
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
  if (const std::optional<dlpack_place> place = dlpack_device_of(object)) {
    const int id = place->id;
    switch (place->type) {
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
                             std::to_string(place->type) +
                             "; ndzip reads host memory, "
                             "CUDA and ROCm devices");
    }
  }
  // Only a device array has the attribute (PyTorch's CPU tensors raise AttributeError for it).
  if (const std::optional<cuda_array_interface> cai = cuda_array_interface_of(object)) {
    const std::uintptr_t address = cai->array.address;
    // An empty array may have no address; it is refused for its shape later.
    const int device = address ? device_of_pointer(reinterpret_cast<void*>(address)) : 0;
    return device_location{device_location::runtime::cuda, device};
  }
  return std::nullopt;
}

std::size_t device_array::bytes() const {
  std::size_t n = item_bytes;
  for (const auto e : shape) n *= static_cast<std::size_t>(e);  // checked where described
  return n;
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
  const bool dlpack = attribute_of(object, "__dlpack__").has_value();
  if (dlpack &&
      !(stream.libraries_current && attribute_of(object, "__cuda_array_interface__")))
    return from_dlpack(object, where, stream.handle);
  return from_cuda_array_interface(object, where, stream.handle);
}

std::optional<py::array> host_array_from_dlpack(const py::object& object) {
  if (!attribute_of(object, "__dlpack__")) return std::nullopt;
  const std::optional<dlpack_place> announced = dlpack_device_of(object);
  const dlpack_tensor taken(object, std::nullopt);
  const array_description d = describe_dlpack(taken.get(), taken.read_only(), object, announced);
  if (!d.item.codec_type())
    throw py::type_error("ndzip compresses float32 and float64 arrays, not " + d.item.name +
                         " (" + type_name_of(object) + ", through DLPack)");
  const py::dtype dtype = *d.item.codec_type() == ndzip::element_type::float32
                              ? py::dtype::of<float>()
                              : py::dtype::of<double>();
  const std::vector<py::ssize_t> shape(d.shape.begin(), d.shape.end());
  const std::vector<py::ssize_t> strides =
      d.byte_strides ? std::vector<py::ssize_t>(d.byte_strides->begin(), d.byte_strides->end())
                     : py::detail::c_strides(shape, dtype.itemsize());
  py::array array(dtype, shape, strides, reinterpret_cast<void*>(d.address), taken.keeper());
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
