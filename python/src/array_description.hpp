// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What another library says of an array it lends (a DLPack tensor, or __cuda_array_interface__),
// checked whole before anything reads the description's pointers or the array's memory, as the
// frame reader checks a header before anything reads a stream: device, dtype (code, bits,
// lanes; typestr), rank, extents, strides, byte offset and data address. Each refusal names the
// producer's type, the field and what is allowed (TypeError for what the array is, ValueError
// for a description that cannot be true). What cannot be checked from a description (a producer
// lying about how much memory lies behind a valid one) is not: docs/ROBUSTNESS.md.

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ndzip/frame_format.hpp>

#include "dlpack.hpp"

namespace ndzip_python {

namespace py = pybind11;

// An item's type, as DLPack's codes and NumPy's typestrs both name it.
struct item_type {
  char kind = 0;  // NumPy's kind: 'i', 'u', 'f', 'c', 'b'; 0 for one NumPy has not (bfloat16)
  std::size_t bytes = 0;
  std::string name;  // "float32", "uint8", "bfloat16", ...; a typestr of the other byte order
  bool native_order = true;

  // float32 or float64: what ndzip compresses; else nothing.
  std::optional<ndzip::element_type> codec_type() const;
  bool unsigned_bytes() const { return kind == 'u' && bytes == 1; }
};

// A checked description: every extent >= 0, at most max_rank of them, the byte count
// representable, strides (in bytes) one per extent and representable, the address of the first
// item (DLPack's data plus byte_offset) aligned to the item and not null where there are items.
struct array_description {
  static constexpr std::size_t max_rank = 64;  // NumPy's limit; ndzip itself takes 1 to 3

  std::uintptr_t address = 0;
  item_type item;
  std::vector<std::int64_t> shape;
  std::optional<std::vector<std::int64_t>> byte_strides;  // nothing: C order
  bool read_only = false;

  std::size_t bytes() const;
  bool c_contiguous() const;
};

// The type of `object`, as messages name the producer.
std::string type_name_of(const py::handle& object);

// `object.name`, or nothing where the object has no such attribute (AttributeError); any other
// error the attribute raises propagates (hasattr would swallow it, and the object would be taken
// for something else).
std::optional<py::object> attribute_of(const py::handle& object, const char* name);

// A DLPack device (type, id): memory the host reads (CPU, CUDA and ROCm pinned host memory) or
// a device's; two places are the same where their types are and, for device memory, their ids.
struct dlpack_place {
  std::int32_t type = dlpack::cpu;
  std::int32_t id = 0;

  bool host_readable() const;
  std::string to_string() const;  // "CPU memory", "CUDA device 1", "DLPack device type 14 (id 0)"
};
bool operator==(const dlpack_place& a, const dlpack_place& b);

// `object.__dlpack_device__()`, checked to be a pair of integers (a device type and an id >= 0);
// nothing where the object has no such method.
std::optional<dlpack_place> dlpack_device_of(const py::handle& object);

// The tensor of a DLPack capsule of `object`, checked. `expected`: where __dlpack_device__ said
// the memory lies (nothing: the object has no __dlpack_device__, host memory taken), which the
// capsule's own device must be (host memory of another kind than announced is refused too).
array_description describe_dlpack(const dlpack::tensor& tensor, bool read_only,
                                  const py::handle& object,
                                  const std::optional<dlpack_place>& expected);

// __cuda_array_interface__ (version 2 or 3), checked: a dict with data (address, read-only),
// shape, typestr (an item size of at least one byte), strides (None or one per extent), stream
// (None or a handle >= 0), no mask.
struct cuda_array_interface {
  array_description array;
  std::optional<std::uintptr_t> stream;  // the producer's, to order the call after
};
// Nothing where `object` has no __cuda_array_interface__.
std::optional<cuda_array_interface> cuda_array_interface_of(const py::handle& object);

}  // namespace ndzip_python
