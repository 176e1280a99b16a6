// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "session.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include <pybind11/pybind11.h>

#include <ndzip/backends.hpp>

namespace ndzip_python {

namespace py = pybind11;

namespace {

// Whether this module initialised Kokkos (and so finalises it at exit).
bool kokkos_owned = false;

}  // namespace

void require_kokkos() {
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  if (Kokkos::is_initialized()) return;
#if KOKKOS_VERSION >= 40000
  if (Kokkos::is_finalized())
    throw std::runtime_error("ndzip: Kokkos has been finalised and cannot be initialised again");
#endif
  ndzip::initialize_embedded_kokkos("python-ndzip");
  kokkos_owned = true;
}

void finalize_owned_kokkos() {
  if (kokkos_owned && Kokkos::is_initialized()) Kokkos::finalize();
  kokkos_owned = false;
}

bool runs_on_this_thread(const std::string& backend) {
#if defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION < 40000
  // Finalised, Kokkos runs nothing on any thread: that is said where the call is made.
  if (backend == "openmp" && Kokkos::is_initialized()) return !Kokkos::OpenMP::in_parallel();
#else
  static_cast<void>(backend);
#endif
  return true;
}

// RuntimeError, before anything runs, where `backend` cannot run on the calling thread: it is not
// a bad argument (the same call runs on the right thread), and the library's own check would
// surface as std::logic_error, a ValueError here.
void require_this_thread(const std::string& backend) {
  if (runs_on_this_thread(backend)) return;
  throw std::runtime_error(
      "ndzip: the '" + backend + "' backend cannot run on this thread: Kokkos 3 runs OpenMP work "
      "only on the thread that initialised Kokkos (" +
      std::string(kokkos_owned ? "the thread that imported ndzip"
                               : "the thread of the application that called Kokkos::initialize") +
      "). On this thread pass backend='serial' (the same bytes, on one core), to the function "
      "or when making the Compressor; or call from that thread; Kokkos 4 has no such limit");
}

std::string backend_for_call(const std::optional<std::string>& asked) {
  std::string name = asked ? *asked : ndzip::default_backend();
  const std::vector<std::string> enabled = ndzip::enabled_backends();
  if (std::find(enabled.begin(), enabled.end(), name) == enabled.end()) {
    std::string known;
    for (const auto& b : enabled) known += (known.empty() ? "" : ", ") + b;
    // A backend of another build (a GPU build's name in a CPU build) is told apart from a typo.
    constexpr const char* any_build[] = {"serial", "openmp", "threads", "cuda", "hip"};
    const bool elsewhere = std::find(std::begin(any_build), std::end(any_build), name) !=
                           std::end(any_build);
    if (elsewhere)
      throw py::value_error("ndzip: backend '" + name +
                            "' is not in this build (its Kokkos was built without it); this "
                            "build has: " + known);
    throw py::value_error("ndzip: unknown or disabled backend '" + name +
                          "' (this build has: " + known + ")");
  }
  require_this_thread(name);
  return name;
}


namespace {

std::mutex slots_mutex;
std::vector<std::weak_ptr<codec_slot>> live_slots;

void release_all_slots() {
  const std::lock_guard<std::mutex> lock(slots_mutex);
  for (const auto& weak : live_slots)
    if (const auto slot = weak.lock()) {
      const std::lock_guard<std::mutex> slot_lock(slot->mutex);
      slot->codec.reset();
      slot->on_stream.reset();
      slot->finalised = true;
    }
  live_slots.clear();
}

}  // namespace

void register_slot(const std::shared_ptr<codec_slot>& slot) {
  static std::once_flag hook;
  std::call_once(hook, [] { Kokkos::push_finalize_hook(release_all_slots); });
  const std::lock_guard<std::mutex> lock(slots_mutex);
  if (live_slots.size() >= 64)  // the one-shot functions' slots, long gone
    live_slots.erase(std::remove_if(live_slots.begin(), live_slots.end(),
                                    [](const auto& w) { return w.expired(); }),
                     live_slots.end());
  live_slots.push_back(slot);
}

}  // namespace ndzip_python
