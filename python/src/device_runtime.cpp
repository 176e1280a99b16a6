// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "device_runtime.hpp"

#include <Kokkos_Core.hpp>
#include <ndzip/detail/execution_spaces.hpp>
#include <stdexcept>
#include <string>

namespace ndzip_python {

namespace {

#if defined(KOKKOS_ENABLE_CUDA)
using stream_t = cudaStream_t;
using event_t = cudaEvent_t;
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("ndzip: ") + what + ": " + cudaGetErrorString(status));
}
#elif defined(KOKKOS_ENABLE_HIP)
using stream_t = hipStream_t;
using event_t = hipEvent_t;
void check(hipError_t status, const char* what) {
  if (status != hipSuccess)
    throw std::runtime_error(std::string("ndzip: ") + what + ": " + hipGetErrorString(status));
}
#else
[[noreturn]] void no_gpu() { throw std::logic_error("ndzip: this build has no GPU backend"); }
#endif

}  // namespace

bool gpu_runtime_is_rocm() {
#if defined(KOKKOS_ENABLE_HIP) && !defined(KOKKOS_ENABLE_CUDA)
  return true;
#else
  return false;
#endif
}

#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)

int device_of_pointer(const void* data) {
#if defined(KOKKOS_ENABLE_CUDA)
  cudaPointerAttributes attributes{};
  check(cudaPointerGetAttributes(&attributes, data), "the device of an array's address");
#else
  hipPointerAttribute_t attributes{};
  check(hipPointerGetAttributes(&attributes, data), "the device of an array's address");
#endif
  return attributes.device;
}

int backend_device() {
#if defined(KOKKOS_ENABLE_CUDA)
  return Kokkos::Cuda().cuda_device();
#else
  return ndzip::detail::hip_space().hip_device();
#endif
}

bool runs_on_any_device() {
#if defined(KOKKOS_ENABLE_CUDA)
  return KOKKOS_VERSION >= 40400;
#else
  return KOKKOS_VERSION >= 40600;
#endif
}

current_device::current_device(int device) : m_device(device) {
#if defined(KOKKOS_ENABLE_CUDA)
  check(cudaGetDevice(&m_previous), "the current device");
  if (device != m_previous) check(cudaSetDevice(device), "selecting the array's device");
#else
  check(hipGetDevice(&m_previous), "the current device");
  if (device != m_previous) check(hipSetDevice(device), "selecting the array's device");
#endif
}

current_device::~current_device() {
  // Kokkos makes only the instance's device current, which was current before if m_device is.
  if (m_device == m_previous) return;
#if defined(KOKKOS_ENABLE_CUDA)
  static_cast<void>(cudaSetDevice(m_previous));  // a destructor has no one to tell
#else
  static_cast<void>(hipSetDevice(m_previous));  // a destructor has no one to tell
#endif
}

void order_stream_after(std::uintptr_t consumer, std::uintptr_t producer) {
#if defined(KOKKOS_ENABLE_CUDA)
  const stream_t from = producer == 1   ? cudaStreamLegacy
                        : producer == 2 ? cudaStreamPerThread
                                        : reinterpret_cast<stream_t>(producer);
  event_t event{};
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "an event");
  const cudaError_t recorded = cudaEventRecord(event, from);
  const cudaError_t waited =
      recorded == cudaSuccess ? cudaStreamWaitEvent(reinterpret_cast<stream_t>(consumer), event, 0)
                              : recorded;
  static_cast<void>(cudaEventDestroy(event));  // released once the wait is satisfied
  check(waited, "ordering the call after the array's stream");
#else
  const stream_t from = producer <= 2 ? nullptr : reinterpret_cast<stream_t>(producer);
  event_t event{};
  check(hipEventCreateWithFlags(&event, hipEventDisableTiming), "an event");
  const hipError_t recorded = hipEventRecord(event, from);
  const hipError_t waited = recorded == hipSuccess
                                ? hipStreamWaitEvent(reinterpret_cast<stream_t>(consumer), event, 0)
                                : recorded;
  static_cast<void>(hipEventDestroy(event));  // released once the wait is satisfied
  check(waited, "ordering the call after the array's stream");
#endif
}

#else

int device_of_pointer(const void*) { return -1; }
int backend_device() { no_gpu(); }
bool runs_on_any_device() { return false; }
current_device::current_device(int) {}
current_device::~current_device() = default;
void order_stream_after(std::uintptr_t, std::uintptr_t) { no_gpu(); }

#endif

}  // namespace ndzip_python
