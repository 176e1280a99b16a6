// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Runtime choice of the host instruction set. The library is built for the compiler's default
// target (x86-64 with SSE2 unless the user passes -march), yet should use AVX2 or AVX-512 where
// the machine running it has them. So each host team body is compiled several times, each copy
// a function with GCC/Clang's `target` attribute whose callees are all inlined into it
// (`flatten`, and NDZIP_INLINE_LAMBDA on the team code's lambdas, which GCC's flatten alone left
// out): the host lane-ops' vectors (backends/host/vector.hpp) and the compiler's own
// vectorisation then use the clone's instruction set. One clone is picked per process, from what
// the CPU and the OS support, and per team the choice costs one predictable branch. Chosen over
// a build option (-march) because a package built once must run on every x86-64 machine and
// still be fast on each; the clones are cheap to build (one more copy of the host kernels each).
// Four clones: baseline, AVX2, AVX-512 (F, BW, VL, DQ: Skylake-SP and Cascade Lake have no more)
// and AVX-512 with VBMI and GFNI (Ice Lake and later, AMD Zen 4 and later), whose bit-matrix
// transposition (backends/host/gfni_transpose.hpp) made five corpus datasets 1.36x / 1.47x
// faster to compress / decompress than the AVX-512 clone on one core (2-core EPYC, Zen 4).
//
// NDZIP_HOST_ISA=baseline|avx2|avx512 in the environment caps the choice (tests and A/B
// measurements compare the clones; a value the machine cannot run falls back to the best it
// can). Other targets (Arm, other compilers, the nvcc front end) have the baseline only.

#include <cstdlib>
#include <cstring>

#include <Kokkos_Core.hpp>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && \
    !defined(__HIP_DEVICE_COMPILE__) && !defined(__NVCOMPILER)
#define NDZIP_HOST_ISA_CLONES 1
#else
#define NDZIP_HOST_ISA_CLONES 0
#endif

namespace ndzip::backend {

enum class host_isa { baseline, avx2, avx512, avx512_gfni };

inline const char* to_string(host_isa isa) {
  switch (isa) {
    case host_isa::avx2:
      return "avx2";
    case host_isa::avx512:
      return "avx512";
    case host_isa::avx512_gfni:
      return "avx512_gfni";
    default:
      return "baseline";
  }
}

// The best clone this machine runs, capped by NDZIP_HOST_ISA; read once per process.
inline host_isa detect_host_isa() {
  host_isa best = host_isa::baseline;
#if NDZIP_HOST_ISA_CLONES
  // __builtin_cpu_supports also checks that the OS saves the wider registers (XCR0).
  __builtin_cpu_init();
  // Every extension the clones' target attributes name (a virtual machine may hide one).
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
      __builtin_cpu_supports("popcnt"))
    best = host_isa::avx2;
  if (best == host_isa::avx2 && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    best = host_isa::avx512;
  if (best == host_isa::avx512 && __builtin_cpu_supports("avx512vbmi") &&
      __builtin_cpu_supports("gfni"))
    best = host_isa::avx512_gfni;
#endif
  if (const char* cap = std::getenv("NDZIP_HOST_ISA")) {
    if (std::strcmp(cap, "baseline") == 0) return host_isa::baseline;
    if (std::strcmp(cap, "avx2") == 0 && best >= host_isa::avx2) return host_isa::avx2;
    if (std::strcmp(cap, "avx512") == 0 && best >= host_isa::avx512) return host_isa::avx512;
  }
  return best;
}

inline host_isa active_host_isa() {
  static const host_isa isa = detect_host_isa();
  return isa;
}

#if NDZIP_HOST_ISA_CLONES
// Sanitizer builds check what the code does, not how fast it is: there the clones do not
// flatten their callees, so each clone is a thin call of the same out-of-line code instead of a
// third copy of every kernel, which halves the ASan+UBSan compile of a kernel file. The
// AVX-512 column code keeps its own target attribute (avx512_columns.hpp) and still runs, and
// is checked, on a machine that has AVX-512.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NDZIP_SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define NDZIP_SANITIZED_BUILD 1
#endif
#endif
#ifdef NDZIP_SANITIZED_BUILD
#define NDZIP_CLONE_FLATTEN
#else
#define NDZIP_CLONE_FLATTEN flatten,
#endif
template <class Body>
__attribute__((target("avx2,bmi,bmi2,popcnt,fma"), NDZIP_CLONE_FLATTEN noinline)) void
run_avx2_clone(const Body& body) {
  body();
}
template <class Body>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,bmi,bmi2,popcnt,fma"),
               NDZIP_CLONE_FLATTEN noinline)) void
run_avx512_clone(const Body& body) {
  body();
}
template <class Body>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,gfni,avx2,bmi,bmi2,popcnt,"
                      "fma"),
               NDZIP_CLONE_FLATTEN noinline)) void
run_avx512_gfni_clone(const Body& body) {
  body();
}
template <class Body>
__attribute__((NDZIP_CLONE_FLATTEN noinline)) void run_baseline_clone(const Body& body) {
  body();
}
#endif

// Runs body() in the clone for `isa` (one team's work on a host execution space).
template <class Body>
inline void run_host_clone(host_isa isa, const Body& body) {
#if NDZIP_HOST_ISA_CLONES
  switch (isa) {
    case host_isa::avx512_gfni:
      return run_avx512_gfni_clone(body);
    case host_isa::avx512:
      return run_avx512_clone(body);
    case host_isa::avx2:
      return run_avx2_clone(body);
    default:
      return run_baseline_clone(body);
  }
#else
  (void)isa;
  body();
#endif
}

}  // namespace ndzip::backend
