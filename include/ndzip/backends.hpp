// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Run-time choice among the Kokkos execution spaces this library was built for, by name
// ("serial", "openmp", "threads", "cuda", "hip"), for tools and tests that pick a backend from the
// command line.

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <Kokkos_Core.hpp>
#ifdef KOKKOS_ENABLE_OPENMP
#include <omp.h>
#endif

#include "ndzip/detail/execution_spaces.hpp"
#include "ndzip/export.hpp"

namespace ndzip {

// The instruction set of the host kernels (Serial, OpenMP) on this machine: "avx512_gfni"
// (AVX-512 with VBMI and GFNI), "avx512", "avx2" or "baseline" (the compiler's default target).
// The library holds a copy of them per instruction set and picks the best the CPU runs, once per
// process; NDZIP_HOST_ISA=baseline|avx2|avx512 in the environment caps the choice.
NDZIP_EXPORT const char* host_instruction_set();

// Names of the enabled backends; the first one is Kokkos' default execution space.
inline std::vector<std::string> enabled_backends() {
  std::vector<std::string> names;
#define NDZIP_DETAIL_ADD_NAME(Space, name)                \
  if (std::is_same_v<Kokkos::DefaultExecutionSpace, Space>) \
    names.insert(names.begin(), name);                      \
  else                                                      \
    names.emplace_back(name);
  NDZIP_FOR_EACH_EXECUTION_SPACE(NDZIP_DETAIL_ADD_NAME)
#undef NDZIP_DETAIL_ADD_NAME
  return names;
}

inline std::string default_backend() { return enabled_backends().front(); }

// The most host threads Kokkos can be initialised with: its OpenMP backend (3.x and 4.x) keeps
// its thread pool in an array of 512 entries (MAX_THREAD_COUNT) and does not check the count
// it is given, so more threads write past the array and crash the process.
inline constexpr int max_host_threads = 512;

// The host threads Kokkos starts when its initialisation names no count and the environment
// sets no KOKKOS_NUM_THREADS: with OpenMP enabled, omp_get_max_threads() (OMP_NUM_THREADS, else
// one per core), which may exceed max_host_threads; nothing without OpenMP.
inline std::optional<int> default_host_threads() {
#ifdef KOKKOS_ENABLE_OPENMP
  return omp_get_max_threads();
#else
  return std::nullopt;
#endif
}

// The host thread count to initialise Kokkos with (InitializationSettings::set_num_threads,
// InitArguments::num_threads, --kokkos-threads in Kokkos 3, --kokkos-num-threads in Kokkos 4),
// at most max_host_threads, or nothing for "name no count":
// - `requested` (at least 1) if given;
// - else nothing if the environment sets KOKKOS_NUM_THREADS: Kokkos reads it itself and
//   refuses a different count; a value above max_host_threads throws std::invalid_argument,
//   as Kokkos would crash with it;
// - else default_host_threads().
// An initialisation of Kokkos with this count cannot overrun its thread pool.
inline std::optional<int> host_threads_to_initialize(std::optional<int> requested = std::nullopt) {
  if (requested) return std::clamp(*requested, 1, max_host_threads);
  if (const char* env = std::getenv("KOKKOS_NUM_THREADS")) {
    char* end = nullptr;
    const long count = std::strtol(env, &end, 10);
    // strtol gives LONG_MAX when out of range; text that is no number is left to Kokkos.
    if (end != env && count > max_host_threads)
      throw std::invalid_argument("KOKKOS_NUM_THREADS=" + std::string(env) +
                                  " asks for more host threads than Kokkos holds (" +
                                  std::to_string(max_host_threads) + ")");
    return std::nullopt;
  }
  const auto fallback = default_host_threads();
  if (!fallback) return std::nullopt;
  return std::min(*fallback, max_host_threads);
}

// Kokkos::initialize as a library that brings Kokkos up for its host does it (the HDF5 filter
// plugin, the Python module; `program` names it in Kokkos' messages): warnings off, since Kokkos
// prints them to standard output (a tool's output), unless KOKKOS_DISABLE_WARNINGS decides
// (Kokkos refuses both when they disagree); and the host thread count of
// host_threads_to_initialize(), which keeps an OMP_NUM_THREADS beyond max_host_threads from
// overrunning Kokkos' thread pool. Throws std::invalid_argument as that function does.
inline void initialize_embedded_kokkos(const char* program) {
#if KOKKOS_VERSION >= 40000
  constexpr const char* threads_option = "--kokkos-num-threads=";
#else
  constexpr const char* threads_option = "--kokkos-threads=";
#endif
  std::vector<std::string> args{program};
  if (!std::getenv("KOKKOS_DISABLE_WARNINGS")) args.emplace_back("--kokkos-disable-warnings");
  if (const auto threads = host_threads_to_initialize())
    args.push_back(threads_option + std::to_string(*threads));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  Kokkos::initialize(argc, argv.data());
}

// Calls f(instance) with a default instance of the execution space called `name`.
// Throws std::invalid_argument naming the enabled backends if `name` is not one of them.
template <class F>
void with_backend(std::string_view name, F&& f) {
#define NDZIP_DETAIL_CALL_WITH(Space, space_name) \
  if (name == space_name) return static_cast<void>(f(Space{}));
  NDZIP_FOR_EACH_EXECUTION_SPACE(NDZIP_DETAIL_CALL_WITH)
#undef NDZIP_DETAIL_CALL_WITH
  std::string known;
  for (const auto& b : enabled_backends()) known += (known.empty() ? "" : ", ") + b;
  throw std::invalid_argument("unknown or disabled backend '" + std::string(name) +
                              "' (this build has: " + known + ")");
}

}  // namespace ndzip
