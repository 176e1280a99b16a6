// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Run-time choice among the Kokkos execution spaces this library was built for, by name
// ("serial", "openmp", "threads", "cuda", "hip"), for tools and tests that pick a backend from the
// command line.

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <Kokkos_Core.hpp>

#include "ndzip/export.hpp"

namespace ndzip {

// The instruction set of the host kernels (Serial, OpenMP) on this machine: "avx512", "avx2" or
// "baseline" (the compiler's default target). The library holds a copy of them per instruction
// set and picks the best the CPU runs, once per process; NDZIP_HOST_ISA=baseline|avx2 in the
// environment caps the choice.
NDZIP_EXPORT const char* host_instruction_set();

// Names of the enabled backends; the first one is Kokkos' default execution space.
inline std::vector<std::string> enabled_backends() {
  std::vector<std::string> names;
  auto add = [&](const char* name, bool is_default) {
    if (is_default)
      names.insert(names.begin(), name);
    else
      names.emplace_back(name);
  };
#ifdef KOKKOS_ENABLE_SERIAL
  add("serial", std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::Serial>);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  add("openmp", std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::OpenMP>);
#endif
#ifdef KOKKOS_ENABLE_THREADS
  add("threads", std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::Threads>);
#endif
#ifdef KOKKOS_ENABLE_CUDA
  add("cuda", std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>);
#endif
#ifdef KOKKOS_ENABLE_HIP
#if KOKKOS_VERSION >= 40000
  add("hip", std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::HIP>);
#else
  add("hip", std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::Experimental::HIP>);
#endif
#endif
  return names;
}

inline std::string default_backend() { return enabled_backends().front(); }

// Calls f(instance) with a default instance of the execution space called `name`.
// Throws std::invalid_argument naming the enabled backends if `name` is not one of them.
template <class F>
void with_backend(std::string_view name, F&& f) {
#ifdef KOKKOS_ENABLE_SERIAL
  if (name == "serial") return static_cast<void>(f(Kokkos::Serial{}));
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (name == "openmp") return static_cast<void>(f(Kokkos::OpenMP{}));
#endif
#ifdef KOKKOS_ENABLE_THREADS
  if (name == "threads") return static_cast<void>(f(Kokkos::Threads{}));
#endif
#ifdef KOKKOS_ENABLE_CUDA
  if (name == "cuda") return static_cast<void>(f(Kokkos::Cuda{}));
#endif
#ifdef KOKKOS_ENABLE_HIP
#if KOKKOS_VERSION >= 40000
  if (name == "hip") return static_cast<void>(f(Kokkos::HIP{}));
#else
  if (name == "hip") return static_cast<void>(f(Kokkos::Experimental::HIP{}));
#endif
#endif
  std::string known;
  for (const auto& b : enabled_backends()) known += (known.empty() ? "" : ", ") + b;
  throw std::invalid_argument("unknown or disabled backend '" + std::string(name) +
                              "' (this build has: " + known + ")");
}

}  // namespace ndzip
