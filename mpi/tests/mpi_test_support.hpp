// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the ndzip::mpi tests share: the pairing of ranks, deterministic values that both ranks
// of a pair can generate, and bit-exact comparison of Views.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace mpi_test {

inline int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
// Whether transport_kind::mpi_device can run here with an MPI that is not GPU-aware: host
// backends hand MPI their memory with every transport; on a device, the test binary keeps that
// transport's buffers in Kokkos::SharedSpace (NDZIP_MPI_TEST_WIRE_IN_SHARED_SPACE), which
// Kokkos 3 lacks.
// Built with NDZIP_MPI_TESTS_GPU_AWARE, the MPI takes device memory itself.
inline bool mpi_device_testable() {
#ifdef NDZIP_MPI_TEST_WIRE_IN_SHARED_SPACE
  using space = Kokkos::DefaultExecutionSpace;
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, space::memory_space>::accessible ||
         KOKKOS_VERSION >= 40000;
#else
  return true;
#endif
}

// Even ranks send, odd ranks receive; rank r talks to rank r ^ 1.
inline bool is_sender() { return rank() % 2 == 0; }
inline int peer() { return rank() ^ 1; }

// Element i of a field that ndzip compresses (smooth, with low-order noise), or of random bits
// (`random`), the same on every rank for the same seed.
template <class T>
T value_at(std::uint64_t i, std::uint64_t seed, bool random) {
  std::uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed * 0xbf58476d1ce4e5b9ull;
  x ^= x >> 31;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 29;
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  if (random) {
    bits b = static_cast<bits>(x);
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  }
  const double smooth = std::sin(static_cast<double>(i) * 0.001) * 100.0;
  return static_cast<T>(smooth + static_cast<double>(x % 1024) * 1e-6);
}

// A contiguous (LayoutRight) View in `v`'s memory space with `v`'s extents: Kokkos copies
// between memory spaces only where both sides are contiguous, so a strided device View (the
// face of a block) goes through one of these.
template <class View>
auto contiguous_like(const View& v) {
  using T = std::remove_const_t<typename View::value_type>;
  using space = typename View::memory_space;
  const auto label = Kokkos::view_alloc(Kokkos::WithoutInitializing, "contiguous");
  if constexpr (View::rank == 1)
    return Kokkos::View<T*, Kokkos::LayoutRight, space>(label, v.extent(0));
  else if constexpr (View::rank == 2)
    return Kokkos::View<T**, Kokkos::LayoutRight, space>(label, v.extent(0), v.extent(1));
  else
    return Kokkos::View<T***, Kokkos::LayoutRight, space>(label, v.extent(0), v.extent(1),
                                                          v.extent(2));
}

// Fills `v` (any layout, host or device) with value_at of its elements in C order.
template <class View>
void fill(const View& v, std::uint64_t seed, bool random = false) {
  using T = typename View::value_type;
  const auto packed = contiguous_like(v);
  auto host = Kokkos::create_mirror_view(packed);
  std::uint64_t i = 0;
  if constexpr (View::rank == 1) {
    for (std::size_t a = 0; a < v.extent(0); ++a) host(a) = value_at<T>(i++, seed, random);
  } else if constexpr (View::rank == 2) {
    for (std::size_t a = 0; a < v.extent(0); ++a)
      for (std::size_t b = 0; b < v.extent(1); ++b) host(a, b) = value_at<T>(i++, seed, random);
  } else {
    for (std::size_t a = 0; a < v.extent(0); ++a)
      for (std::size_t b = 0; b < v.extent(1); ++b)
        for (std::size_t c = 0; c < v.extent(2); ++c)
          host(a, b, c) = value_at<T>(i++, seed, random);
  }
  Kokkos::deep_copy(packed, host);
  Kokkos::deep_copy(v, packed);
}

// Number of elements of `v` whose bits differ from value_at (C order).
template <class View>
std::size_t differences(const View& v, std::uint64_t seed, bool random = false) {
  using T = std::remove_const_t<typename View::value_type>;
  const auto packed = contiguous_like(v);
  Kokkos::deep_copy(packed, v);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), packed);
  std::size_t wrong = 0;
  std::uint64_t i = 0;
  const auto same = [](T a, T b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  if constexpr (View::rank == 1) {
    for (std::size_t a = 0; a < v.extent(0); ++a)
      wrong += !same(host(a), value_at<T>(i++, seed, random));
  } else if constexpr (View::rank == 2) {
    for (std::size_t a = 0; a < v.extent(0); ++a)
      for (std::size_t b = 0; b < v.extent(1); ++b)
        wrong += !same(host(a, b), value_at<T>(i++, seed, random));
  } else {
    for (std::size_t a = 0; a < v.extent(0); ++a)
      for (std::size_t b = 0; b < v.extent(1); ++b)
        for (std::size_t c = 0; c < v.extent(2); ++c)
          wrong += !same(host(a, b, c), value_at<T>(i++, seed, random));
  }
  return wrong;
}

}  // namespace mpi_test
