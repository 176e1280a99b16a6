// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The few GPU runtime calls the extension makes itself (CUDA or HIP, whichever the build has):
// the device a pointer lies on, the device Kokkos runs on, and one stream ordered after another.
// In a build without a GPU backend no device array is run: they throw std::logic_error, but
// device_of_pointer, asked where an array lies before it is refused, says it does not know, and
// current_device does nothing.

#include <cstdint>

namespace ndzip_python {

// The device of device memory at `data` (an array that says only its address:
// __cuda_array_interface__); -1 in a build without a GPU backend.
int device_of_pointer(const void* data);
// The device the backend's default instance runs on (Kokkos' device in this process).
int backend_device();
// Whether the build's GPU runtime is ROCm's (HIP), not CUDA's: where CuPy's and PyTorch's
// arrays, which name either "cuda", lie.
bool gpu_runtime_is_rocm();
// Whether Kokkos runs instances on streams of any device of the process (CUDA from Kokkos 4.4,
// HIP from 4.6); before, only on backend_device()'s.
bool runs_on_any_device();

// Makes `device` the calling thread's current device while it lives, and the one current before
// current again at its end: a legacy default stream (handle 0) is that of the current device,
// PyTorch exports a tensor through DLPack only from its device, Kokkos makes the device of each
// instance it uses current, and CuPy and PyTorch allocate on the thread's current device, which
// a call must leave as it found it.
class current_device {
 public:
  explicit current_device(int device);
  ~current_device();
  current_device(const current_device&) = delete;
  current_device& operator=(const current_device&) = delete;

 private:
  int m_device = -1;
  int m_previous = -1;
};
// Orders the stream `consumer` (a handle; 0: the legacy default stream) after all work queued so
// far on `producer` (as __cuda_array_interface__ encodes it: 1 the legacy default stream, 2 the
// per-thread default stream, else a handle): an event recorded on one and waited for on the
// other; the host does not wait.
void order_stream_after(std::uintptr_t consumer, std::uintptr_t producer);

}  // namespace ndzip_python
