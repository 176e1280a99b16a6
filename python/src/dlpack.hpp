// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The consumer side of the DLPack protocol (dmlc/dlpack, ABI of versions 0.x and 1.x, as the
// Python array API standard's __dlpack__ hands it over): the C structs of the capsule, and a
// tensor taken from an object's __dlpack__, owned until it is released.

#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>

namespace ndzip_python {

namespace dlpack {

// The device types this module tells apart (DLDeviceType).
enum device_type : std::int32_t {
  cpu = 1,
  cuda = 2,
  cuda_host = 3,
  rocm = 10,
  rocm_host = 11,
  cuda_managed = 13
};
// The type codes this module reads (DLDataTypeCode).
enum type_code : std::uint8_t {
  int_code = 0,
  uint_code = 1,
  float_code = 2,
  bfloat_code = 4,
  complex_code = 5,
  bool_code = 6
};

struct device {
  std::int32_t type;
  std::int32_t id;
};
struct data_type {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct tensor {
  void* data;
  device dev;
  std::int32_t ndim;
  data_type dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: C order
  std::uint64_t byte_offset;
};
// "dltensor" capsules (before 1.0).
struct managed_tensor {
  tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(managed_tensor*);
};
// "dltensor_versioned" capsules (1.0 on).
struct managed_tensor_versioned {
  std::uint32_t major, minor;
  void* manager_ctx;
  void (*deleter)(managed_tensor_versioned*);
  std::uint64_t flags;
  tensor dl_tensor;
};
inline constexpr std::uint64_t flag_read_only = 1;

}  // namespace dlpack

// The tensor of `object.__dlpack__(stream=...)`, owned: released (the producer's deleter called)
// when the last copy of keeper() goes. `stream`: the consumer's stream in the protocol's
// encoding (CUDA: 1 legacy default, 2 per-thread default, else the handle; ROCm: 0 default),
// nothing for host memory. The version 1 capsule is asked for first, the older one if the
// producer does not take max_version.
class dlpack_tensor {
 public:
  dlpack_tensor(const pybind11::object& object, std::optional<std::intptr_t> stream);

  const dlpack::tensor& get() const { return *m_tensor; }
  bool read_only() const { return m_read_only; }
  // Holds the tensor (and so the producer's memory) alive.
  const pybind11::object& keeper() const { return m_keeper; }

 private:
  const dlpack::tensor* m_tensor = nullptr;
  bool m_read_only = false;
  pybind11::object m_keeper;
};

}  // namespace ndzip_python
