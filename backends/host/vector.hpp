// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// host_vector<Bits>: 32 bytes of unsigned words (8 x 32 or 4 x 64 bits) with the few operations
// the host lane-ops need, so that they are written once for every host target. With GCC or Clang
// it is a vector-extension type, which the compiler maps onto the target of the function it is
// finally inlined into: one AVX2 register in the AVX2 clone of a kernel (backends/host/isa.hpp),
// two SSE2 registers in the baseline x86-64 build, NEON pairs on Arm. Elsewhere (and in the
// front end of nvcc, which parses the host code of CUDA builds) it is a plain array that the same
// code walks lane by lane.

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <Kokkos_Core.hpp>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && \
    !defined(__HIP_DEVICE_COMPILE__)
#define NDZIP_HOST_VECTOR_EXTENSIONS 1
#else
#define NDZIP_HOST_VECTOR_EXTENSIONS 0
#endif

namespace ndzip::backend {

template <class Bits>
struct host_vector {
  static_assert(std::is_unsigned_v<Bits> && (sizeof(Bits) == 4 || sizeof(Bits) == 8));
  static constexpr int lanes = 32 / sizeof(Bits);

#if NDZIP_HOST_VECTOR_EXTENSIONS
  typedef Bits native __attribute__((vector_size(32)));
  native v;

  KOKKOS_FORCEINLINE_FUNCTION static host_vector splat(Bits x) { return {native{} + x}; }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator^(const host_vector& a,
                                                           const host_vector& b) {
    return {a.v ^ b.v};
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator&(const host_vector& a,
                                                           const host_vector& b) {
    return {a.v & b.v};
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator|(const host_vector& a,
                                                           const host_vector& b) {
    return {a.v | b.v};
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator+(const host_vector& a,
                                                           const host_vector& b) {
    return {a.v + b.v};
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator-(const host_vector& a,
                                                           const host_vector& b) {
    return {a.v - b.v};
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator<<(const host_vector& a, int s) {
    return {a.v << s};
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator>>(const host_vector& a, int s) {
    return {a.v >> s};
  }
  KOKKOS_FORCEINLINE_FUNCTION host_vector operator~() const { return {~v}; }
  KOKKOS_FORCEINLINE_FUNCTION Bits operator[](int lane) const { return v[lane]; }
  // All ones in the lanes that are not zero.
  KOKKOS_FORCEINLINE_FUNCTION host_vector nonzero() const { return {(native)(v != 0)}; }

  // Lane i takes lane i ^ J.
  template <int J>
  KOKKOS_FORCEINLINE_FUNCTION host_vector swap_lanes() const {
    return swap_lanes<J>(std::make_integer_sequence<int, lanes>{});
  }

  // Lane i takes lane i - N, lanes below N take 0.
  template <int N>
  KOKKOS_FORCEINLINE_FUNCTION host_vector shift_lanes_up() const {
    return shift_lanes_up<N>(std::make_integer_sequence<int, lanes>{});
  }

  // Every lane takes lane N.
  template <int N>
  KOKKOS_FORCEINLINE_FUNCTION host_vector broadcast_lane() const {
    return broadcast_lane<N>(std::make_integer_sequence<int, lanes>{});
  }

 private:
  template <int J, int... I>
  KOKKOS_FORCEINLINE_FUNCTION host_vector swap_lanes(std::integer_sequence<int, I...>) const {
#if defined(__clang__) || __GNUC__ >= 12
    return {__builtin_shufflevector(v, v, (I ^ J)...)};
#else
    return {__builtin_shuffle(v, native{static_cast<Bits>(I ^ J)...})};
#endif
  }
  template <int N, int... I>
  KOKKOS_FORCEINLINE_FUNCTION host_vector shift_lanes_up(std::integer_sequence<int, I...>) const {
    // Indices from `lanes` on pick from the second operand, zero.
#if defined(__clang__) || __GNUC__ >= 12
    return {__builtin_shufflevector(v, native{}, (I < N ? lanes + I : I - N)...)};
#else
    return {__builtin_shuffle(v, native{}, native{static_cast<Bits>(I < N ? lanes + I : I - N)...})};
#endif
  }
  template <int N, int... I>
  KOKKOS_FORCEINLINE_FUNCTION host_vector broadcast_lane(std::integer_sequence<int, I...>) const {
#if defined(__clang__) || __GNUC__ >= 12
    return {__builtin_shufflevector(v, v, (I * 0 + N)...)};
#else
    return {__builtin_shuffle(v, native{static_cast<Bits>(I * 0 + N)...})};
#endif
  }

 public:
#else
  Bits v[lanes];

  template <class Op>
  KOKKOS_FORCEINLINE_FUNCTION static host_vector lanewise(const Op& op) {
    host_vector r;
    for (int i = 0; i < lanes; ++i) r.v[i] = op(i);
    return r;
  }
  KOKKOS_FORCEINLINE_FUNCTION static host_vector splat(Bits x) {
    return lanewise([&](int) { return x; });
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator^(const host_vector& a,
                                                           const host_vector& b) {
    return lanewise([&](int i) { return static_cast<Bits>(a.v[i] ^ b.v[i]); });
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator&(const host_vector& a,
                                                           const host_vector& b) {
    return lanewise([&](int i) { return static_cast<Bits>(a.v[i] & b.v[i]); });
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator|(const host_vector& a,
                                                           const host_vector& b) {
    return lanewise([&](int i) { return static_cast<Bits>(a.v[i] | b.v[i]); });
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator+(const host_vector& a,
                                                           const host_vector& b) {
    return lanewise([&](int i) { return static_cast<Bits>(a.v[i] + b.v[i]); });
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator-(const host_vector& a,
                                                           const host_vector& b) {
    return lanewise([&](int i) { return static_cast<Bits>(a.v[i] - b.v[i]); });
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator<<(const host_vector& a, int s) {
    return lanewise([&](int i) { return static_cast<Bits>(a.v[i] << s); });
  }
  KOKKOS_FORCEINLINE_FUNCTION friend host_vector operator>>(const host_vector& a, int s) {
    return lanewise([&](int i) { return static_cast<Bits>(a.v[i] >> s); });
  }
  KOKKOS_FORCEINLINE_FUNCTION host_vector operator~() const {
    return lanewise([&](int i) { return static_cast<Bits>(~v[i]); });
  }
  KOKKOS_FORCEINLINE_FUNCTION Bits operator[](int lane) const { return v[lane]; }
  KOKKOS_FORCEINLINE_FUNCTION host_vector nonzero() const {
    return lanewise([&](int i) { return v[i] != 0 ? static_cast<Bits>(~Bits{0}) : Bits{0}; });
  }

  template <int J>
  KOKKOS_FORCEINLINE_FUNCTION host_vector swap_lanes() const {
    return lanewise([&](int i) { return v[i ^ J]; });
  }
  template <int N>
  KOKKOS_FORCEINLINE_FUNCTION host_vector shift_lanes_up() const {
    return lanewise([&](int i) { return i < N ? Bits{0} : v[i - N]; });
  }
  template <int N>
  KOKKOS_FORCEINLINE_FUNCTION host_vector broadcast_lane() const {
    return lanewise([&](int) { return v[N]; });
  }
#endif

  KOKKOS_FORCEINLINE_FUNCTION static host_vector load(const Bits* from) {
    host_vector r;
    std::memcpy(&r.v, from, sizeof r.v);
    return r;
  }
  KOKKOS_FORCEINLINE_FUNCTION void store(Bits* to) const { std::memcpy(to, &v, sizeof v); }

  // A vector whose lane i is f(i): a constant once inlined.
  template <class F>
  KOKKOS_FORCEINLINE_FUNCTION static host_vector from_lanes(const F& f) {
    Bits lane_values[lanes];
    for (int i = 0; i < lanes; ++i) lane_values[i] = f(i);
    return load(lane_values);
  }

  // Inclusive prefix sums over the lanes (mod 2^bits).
  KOKKOS_FORCEINLINE_FUNCTION host_vector inclusive_scan() const {
    host_vector r = *this;
    r = r + r.template shift_lanes_up<1>();
    r = r + r.template shift_lanes_up<2>();
    if constexpr (lanes == 8) r = r + r.template shift_lanes_up<4>();
    return r;
  }

  // The OR of all lanes.
  KOKKOS_FORCEINLINE_FUNCTION Bits reduce_or() const {
    host_vector r = *this;
    if constexpr (lanes == 8) r = r | r.template swap_lanes<4>();
    r = r | r.template swap_lanes<2>();
    r = r | r.template swap_lanes<1>();
    return r[0];
  }
};

}  // namespace ndzip::backend
