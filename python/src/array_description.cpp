// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "array_description.hpp"

#include <pybind11/numpy.h>

#include <algorithm>
#include <limits>

namespace ndzip_python {

namespace {

// An integer (not a bool) that fits an int64; nothing for anything else.
std::optional<std::int64_t> integer_of(const py::handle& value) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr())) return std::nullopt;
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return std::nullopt;
  }
  return static_cast<std::int64_t>(v);
}

// An address: an integer of 0 to 2^64 - 1.
std::optional<std::uintptr_t> address_of(const py::handle& value) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr())) return std::nullopt;
  const unsigned long long v = PyLong_AsUnsignedLongLong(value.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    return std::nullopt;
  }
  if (v > std::numeric_limits<std::uintptr_t>::max()) return std::nullopt;
  return static_cast<std::uintptr_t>(v);
}

std::string repr_of(const py::handle& value) { return py::repr(value).cast<std::string>(); }

// a * b into `product` unless it overflows (written out: nvcc's front end has no
// __builtin_mul_overflow in every version the GPU builds use).
bool multiply(std::size_t a, std::size_t b, std::size_t& product) {
  if (b != 0 && a > std::numeric_limits<std::size_t>::max() / b) return false;
  product = a * b;
  return true;
}

// A stride of `items` items of `item_bytes` in bytes, unless it overflows an int64.
bool stride_bytes(std::int64_t items, std::size_t item_bytes, std::int64_t& bytes) {
  const auto item = static_cast<std::int64_t>(item_bytes);
  const std::int64_t limit = std::numeric_limits<std::int64_t>::max() / item;
  if (items > limit || items < -limit) return false;
  bytes = items * item;
  return true;
}

// Checks what both protocols describe alike; `source` names the description in messages
// ("X's DLPack tensor", "X.__cuda_array_interface__").
void check_description(const array_description& a, const std::string& source) {
  std::size_t items = 1;
  for (std::size_t d = 0; d < a.shape.size(); ++d) {
    if (a.shape[d] < 0)
      throw py::value_error("ndzip: " + source + " has extent " + std::to_string(a.shape[d]) +
                            " in dimension " + std::to_string(d) +
                            "; extents are 0 or more");
    if (!multiply(items, static_cast<std::size_t>(a.shape[d]), items))
      throw py::value_error("ndzip: " + source + " has more items than an address space holds");
  }
  std::size_t bytes = 0;
  if (!multiply(items, a.item.bytes, bytes) ||
      bytes > static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()))
    throw py::value_error("ndzip: " + source + " has more bytes than an address space holds");
  if (items == 0) return;
  if (a.address == 0)
    throw py::value_error("ndzip: " + source + " has a null data pointer for " +
                          std::to_string(items) + " items");
  if (a.address > std::numeric_limits<std::uintptr_t>::max() - bytes)
    throw py::value_error("ndzip: " + source + " has its " + std::to_string(bytes) +
                          " bytes past the end of the address space");
  // Items of a power-of-two size are aligned to it (up to 8 bytes, as NumPy aligns complex128):
  // the GPUs fault on misaligned loads.
  const std::size_t item = a.item.bytes;
  const std::size_t alignment = (item & (item - 1)) == 0 ? std::min<std::size_t>(item, 8) : 1;
  if (a.address % alignment != 0)
    throw py::value_error("ndzip: " + source + " has its first item at an address not aligned " +
                          "to its " + std::to_string(item) + "-byte items");
}

struct dlpack_type_entry {
  std::uint8_t code;
  std::uint8_t bits;
  char kind;
  const char* name;
};
// The DLPack types (DLDataTypeCode, lanes 1) that NumPy and the array libraries lend.
constexpr dlpack_type_entry dlpack_types[] = {
    {dlpack::int_code, 8, 'i', "int8"},          {dlpack::int_code, 16, 'i', "int16"},
    {dlpack::int_code, 32, 'i', "int32"},        {dlpack::int_code, 64, 'i', "int64"},
    {dlpack::uint_code, 8, 'u', "uint8"},        {dlpack::uint_code, 16, 'u', "uint16"},
    {dlpack::uint_code, 32, 'u', "uint32"},      {dlpack::uint_code, 64, 'u', "uint64"},
    {dlpack::float_code, 16, 'f', "float16"},    {dlpack::float_code, 32, 'f', "float32"},
    {dlpack::float_code, 64, 'f', "float64"},    {dlpack::bfloat_code, 16, 0, "bfloat16"},
    {dlpack::complex_code, 64, 'c', "complex64"}, {dlpack::complex_code, 128, 'c', "complex128"},
    {dlpack::bool_code, 8, 'b', "bool"}};

item_type dlpack_item(const dlpack::data_type& type, const std::string& source) {
  if (type.lanes != 1)
    throw py::type_error("ndzip: " + source + " has " + std::to_string(type.lanes) +
                         " lanes (vectors of values in each item); ndzip reads arrays of single "
                         "values (lanes 1)");
  for (const auto& known : dlpack_types)
    if (known.code == type.code && known.bits == type.bits)
      return item_type{known.kind, std::size_t{known.bits} / 8, known.name};
  throw py::type_error("ndzip: " + source + " has dtype code " + std::to_string(type.code) +
                       " with " + std::to_string(type.bits) +
                       " bits, which is no DLPack type ndzip knows (int and uint of 8, 16, 32 "
                       "or 64 bits, float of 16, 32 or 64, bfloat of 16, complex of 64 or 128, "
                       "bool of 8)");
}

item_type typestr_item(const py::handle& typestr, const std::string& source) {
  if (!PyUnicode_Check(typestr.ptr()))
    throw py::type_error("ndzip: " + source + "['typestr'] is " + repr_of(typestr) +
                         ", not a string such as '<f4'");
  const std::string text = typestr.cast<std::string>();
  const py::dtype dtype = [&] {
    try {
      return py::dtype(text);
    } catch (const py::error_already_set&) {
      throw py::type_error("ndzip: " + source + "['typestr'] is '" + text +
                           "', which is no NumPy type string (such as '<f4')");
    }
  }();
  item_type item;
  item.kind = dtype.kind();
  item.bytes = static_cast<std::size_t>(dtype.itemsize());
  const char order = dtype.byteorder();
  constexpr char native = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? '<' : '>';
  item.native_order = order == '=' || order == '|' || order == native;
  item.name = item.native_order ? py::str(static_cast<py::handle>(dtype)).cast<std::string>()
                                : text;
  if (item.bytes == 0)
    throw py::value_error("ndzip: " + source + "['typestr'] is '" + text +
                          "', items of 0 bytes; an array of values has items of 1 byte or more");
  return item;
}

}  // namespace

std::optional<ndzip::element_type> item_type::codec_type() const {
  if (kind != 'f' || !native_order) return std::nullopt;
  if (bytes == 4) return ndzip::element_type::float32;
  if (bytes == 8) return ndzip::element_type::float64;
  return std::nullopt;
}

std::size_t array_description::bytes() const {
  std::size_t n = item.bytes;
  for (const auto e : shape) n *= static_cast<std::size_t>(e);  // checked when described
  return n;
}

bool array_description::c_contiguous() const {
  if (!byte_strides) return true;
  // Extents of 1 may have any stride, as NumPy and the array API treat them.
  std::int64_t expected = static_cast<std::int64_t>(item.bytes);
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && (*byte_strides)[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

std::string type_name_of(const py::handle& object) { return repr_of(py::type::handle_of(object)); }

std::optional<py::object> attribute_of(const py::handle& object, const char* name) {
  PyObject* value = PyObject_GetAttrString(object.ptr(), name);
  if (value) return py::reinterpret_steal<py::object>(value);
  if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
  PyErr_Clear();
  return std::nullopt;
}

bool dlpack_place::host_readable() const {
  return type == dlpack::cpu || type == dlpack::cuda_host || type == dlpack::rocm_host;
}

std::string dlpack_place::to_string() const {
  const std::string id_text = std::to_string(id);
  switch (type) {
    case dlpack::cpu: return "CPU memory";
    case dlpack::cuda: return "CUDA device " + id_text;
    case dlpack::cuda_host: return "CUDA pinned host memory";
    case dlpack::rocm: return "ROCm device " + id_text;
    case dlpack::rocm_host: return "ROCm pinned host memory";
    case dlpack::cuda_managed: return "CUDA managed memory of device " + id_text;
    default: return "DLPack device type " + std::to_string(type) + " (id " + id_text + ")";
  }
}

bool operator==(const dlpack_place& a, const dlpack_place& b) {
  // Host memory has no device id to compare (producers write 0, or the device that pinned it).
  return a.type == b.type && (a.host_readable() || a.id == b.id);
}

std::optional<dlpack_place> dlpack_device_of(const py::handle& object) {
  const std::optional<py::object> method = attribute_of(object, "__dlpack_device__");
  if (!method) return std::nullopt;
  const py::object result = (*method)();
  const auto refuse = [&] {
    return py::type_error("ndzip: " + type_name_of(object) + ".__dlpack_device__() returned " +
                          repr_of(result) +
                          ", not a (device type, device id) pair of integers");
  };
  if (!PyTuple_Check(result.ptr()) || PyTuple_GET_SIZE(result.ptr()) != 2) throw refuse();
  const auto type = integer_of(PyTuple_GET_ITEM(result.ptr(), 0));
  const auto id = integer_of(PyTuple_GET_ITEM(result.ptr(), 1));
  if (!type || !id || *type < 0 || *type > std::numeric_limits<std::int32_t>::max() || *id < 0 ||
      *id > std::numeric_limits<std::int32_t>::max())
    throw refuse();
  return dlpack_place{static_cast<std::int32_t>(*type), static_cast<std::int32_t>(*id)};
}

array_description describe_dlpack(const dlpack::tensor& tensor, bool read_only,
                                  const py::handle& object,
                                  const std::optional<dlpack_place>& expected) {
  const std::string source = type_name_of(object) + "'s DLPack tensor";
  const dlpack_place place{tensor.dev.type, tensor.dev.id};
  if (expected ? !(place == *expected) : !place.host_readable())
    throw py::value_error("ndzip: " + source + " lies in " + place.to_string() + ", but " +
                          (expected ? "its __dlpack_device__() says " + expected->to_string()
                                    : "it has no __dlpack_device__ (host memory assumed)") +
                          ": its memory is not read where it is not");
  if (tensor.ndim < 0 || static_cast<std::size_t>(tensor.ndim) > array_description::max_rank)
    throw py::value_error("ndzip: " + source + " has ndim " + std::to_string(tensor.ndim) +
                          "; DLPack tensors have 0 to " +
                          std::to_string(array_description::max_rank) + " dimensions");
  if (tensor.ndim > 0 && !tensor.shape)
    throw py::value_error("ndzip: " + source + " has ndim " + std::to_string(tensor.ndim) +
                          " but a null shape pointer");
  array_description a;
  a.item = dlpack_item(tensor.dtype, source);
  a.read_only = read_only;
  a.shape.assign(tensor.shape, tensor.shape + tensor.ndim);
  if (tensor.strides && tensor.ndim > 0) {
    std::vector<std::int64_t> strides;
    for (std::int32_t d = 0; d < tensor.ndim; ++d) {
      std::int64_t bytes = 0;
      if (!stride_bytes(tensor.strides[d], a.item.bytes, bytes))
        throw py::value_error("ndzip: " + source + " has stride " +
                              std::to_string(tensor.strides[d]) + " in dimension " +
                              std::to_string(d) + ", more bytes than an address space holds");
      strides.push_back(bytes);
    }
    a.byte_strides = std::move(strides);
  }
  // A null data pointer stays null whatever its byte_offset: there is no memory behind it.
  const auto data = reinterpret_cast<std::uintptr_t>(tensor.data);
  if (data && tensor.byte_offset > std::numeric_limits<std::uintptr_t>::max() - data)
    throw py::value_error("ndzip: " + source + " has byte_offset " +
                          std::to_string(tensor.byte_offset) +
                          " past the end of the address space");
  a.address = data ? data + static_cast<std::uintptr_t>(tensor.byte_offset) : 0;
  check_description(a, source);
  return a;
}

std::optional<cuda_array_interface> cuda_array_interface_of(const py::handle& object) {
  const std::optional<py::object> value = attribute_of(object, "__cuda_array_interface__");
  if (!value) return std::nullopt;
  const std::string source = type_name_of(object) + ".__cuda_array_interface__";
  if (!PyDict_Check(value->ptr()))
    throw py::type_error("ndzip: " + source + " is " + type_name_of(*value) + ", not a dict");
  const auto dict = py::reinterpret_borrow<py::dict>(*value);
  const auto field = [&](const char* key, bool required) -> std::optional<py::object> {
    if (dict.contains(key)) return py::object(dict[key]);
    if (required)
      throw py::value_error("ndzip: " + source + " has no '" + key +
                            "' (it needs data, shape and typestr)");
    return std::nullopt;
  };
  cuda_array_interface cai;
  array_description& a = cai.array;

  const py::object data = *field("data", true);
  std::optional<std::uintptr_t> address;
  if (PyTuple_Check(data.ptr()) && PyTuple_GET_SIZE(data.ptr()) == 2)
    address = address_of(PyTuple_GET_ITEM(data.ptr(), 0));
  if (!address || !PyBool_Check(PyTuple_GET_ITEM(data.ptr(), 1)))
    throw py::value_error("ndzip: " + source + "['data'] is " + repr_of(data) +
                          ", not (address, read_only): an integer of 0 to 2**64 - 1 and a bool");
  a.address = *address;
  a.read_only = PyTuple_GET_ITEM(data.ptr(), 1) == Py_True;

  const py::object shape = *field("shape", true);
  if (!PyTuple_Check(shape.ptr()))
    throw py::type_error("ndzip: " + source + "['shape'] is " + repr_of(shape) +
                         ", not a tuple of integers");
  if (static_cast<std::size_t>(PyTuple_GET_SIZE(shape.ptr())) > array_description::max_rank)
    throw py::value_error("ndzip: " + source + "['shape'] has " +
                          std::to_string(PyTuple_GET_SIZE(shape.ptr())) +
                          " extents; arrays have 0 to " +
                          std::to_string(array_description::max_rank));
  for (const auto extent : py::reinterpret_borrow<py::tuple>(shape)) {
    const auto e = integer_of(extent);
    if (!e)
      throw py::type_error("ndzip: " + source + "['shape'] is " + repr_of(shape) +
                           ", not a tuple of integers");
    a.shape.push_back(*e);
  }

  a.item = typestr_item(*field("typestr", true), source);

  if (const auto strides = field("strides", false); strides && !strides->is_none()) {
    const auto refuse = [&] {
      return py::value_error("ndzip: " + source + "['strides'] is " + repr_of(*strides) +
                             ", not None or a tuple of " + std::to_string(a.shape.size()) +
                             " integers (one per extent)");
    };
    if (!PyTuple_Check(strides->ptr()) ||
        static_cast<std::size_t>(PyTuple_GET_SIZE(strides->ptr())) != a.shape.size())
      throw refuse();
    std::vector<std::int64_t> bytes;
    for (const auto stride : py::reinterpret_borrow<py::tuple>(*strides)) {
      const auto s = integer_of(stride);
      if (!s) throw refuse();
      bytes.push_back(*s);
    }
    a.byte_strides = std::move(bytes);
  }
  if (const auto mask = field("mask", false); mask && !mask->is_none())
    throw py::value_error("ndzip: " + type_name_of(object) +
                          " has a mask; ndzip reads every value");
  if (const auto stream = field("stream", false); stream && !stream->is_none()) {
    const auto handle = address_of(*stream);
    if (!handle)
      throw py::value_error("ndzip: " + source + "['stream'] is " + repr_of(*stream) +
                            ", not None or a stream handle (an integer of 0 or more)");
    cai.stream = *handle;
  }
  check_description(a, source);
  return cai;
}

}  // namespace ndzip_python
