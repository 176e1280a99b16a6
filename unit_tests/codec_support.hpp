// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Helpers for running the codec in tests: the (type, dimensionality) configurations, Views built
// from extents, host <-> backend copies, and compress/decompress round trips on one backend.
// Everything goes through Kokkos::create_mirror_view_and_copy, so the same tests run on device
// backends.

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <cstring>
#include <ndzip/ndzip.hpp>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "reference_model.hpp"
#include "test_support.hpp"

namespace ndzip_test {

template <class T, int D>
struct cfg {
  using value_type = T;
  using bits_type = typename ndzip::profile<T, D>::bits_type;
  static constexpr int dims = D;
  static constexpr bool is_double = std::is_same_v<T, double>;
};
using f32_1d = cfg<float, 1>;
using f32_2d = cfg<float, 2>;
using f32_3d = cfg<float, 3>;
using f64_1d = cfg<double, 1>;
using f64_2d = cfg<double, 2>;
using f64_3d = cfg<double, 3>;

template <class T, int D>
struct view_data;
template <class T>
struct view_data<T, 1> {
  using type = T*;
};
template <class T>
struct view_data<T, 2> {
  using type = T**;
};
template <class T>
struct view_data<T, 3> {
  using type = T***;
};

template <class T, int D, class Layout = Kokkos::LayoutRight, class Space = Kokkos::HostSpace>
using grid_view = Kokkos::View<typename view_data<T, D>::type, Layout, Space>;

// A grid with hypercubes and a border along every axis.
template <int D>
ndzip::extent<D> bordered_grid() {
  if constexpr (D == 1)
    return ndzip::extent<1>(4096 * 2 + 77);
  else if constexpr (D == 2)
    return ndzip::extent<2>(130, 67);
  else
    return ndzip::extent<3>(33, 18, 20);
}

template <int D>
ndzip::extent<D> make_extent(const std::array<std::size_t, 3>& e) {
  ndzip::extent<D> x;
  for (int a = 0; a < D; ++a) x[a] = e[a];
  return x;
}
template <int D>
ndzip::extent<D> make_extent(const std::size_t (&e)[3]) {
  return make_extent<D>(std::array<std::size_t, 3>{e[0], e[1], e[2]});
}
template <int D>
std::array<std::size_t, 3> to_array(const ndzip::extent<D>& e) {
  std::array<std::size_t, 3> a = {1, 1, 1};
  for (int i = 0; i < D; ++i) a[i] = e[i];
  return a;
}

// A LayoutRight View of the C-order grid `e` over memory at `at` that it does not own (buffers
// placed by hand: aliasing, frames overlapping their values).
template <class T, int D, class Space>
using unmanaged_grid_view = Kokkos::View<typename view_data<T, D>::type, Kokkos::LayoutRight,
                                         Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T, int D, class Space>
unmanaged_grid_view<T, D, Space> grid_at(void* at, const ndzip::extent<D>& e) {
  auto* p = static_cast<T*>(at);
  if constexpr (D == 1)
    return unmanaged_grid_view<T, D, Space>(p, e[0]);
  else if constexpr (D == 2)
    return unmanaged_grid_view<T, D, Space>(p, e[0], e[1]);
  else
    return unmanaged_grid_view<T, D, Space>(p, e[0], e[1], e[2]);
}

// A View whose extents are the given ones, in the View's own axis order.
template <class View, int D>
View make_view(const std::string& label, const ndzip::extent<D>& e) {
  if constexpr (D == 1)
    return View(label, e[0]);
  else if constexpr (D == 2)
    return View(label, e[0], e[1]);
  else
    return View(label, e[0], e[1], e[2]);
}

// A host LayoutRight View of the C-order grid `e` holding the bit patterns `bits`.
template <class T, int D, class Bits>
grid_view<T, D> host_view_of(const std::vector<Bits>& bits, const ndzip::extent<D>& e) {
  static_assert(sizeof(Bits) == sizeof(T));
  REQUIRE(bits.size() == e.size());
  auto v = make_view<grid_view<T, D>>("values", e);
  if (!bits.empty()) std::memcpy(v.data(), bits.data(), bits.size() * sizeof(T));
  return v;
}

// The bit patterns of a contiguous View (in memory order), copied to the host.
template <class Bits, class View>
std::vector<Bits> bits_of(const View& v) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  static_assert(sizeof(typename View::value_type) == sizeof(Bits));
  std::vector<Bits> bits(host.size());
  if (!bits.empty()) std::memcpy(bits.data(), host.data(), bits.size() * sizeof(Bits));
  return bits;
}

// Bytes copied into a new rank-1 View in `Space`, optionally followed by `extra` filler bytes.
template <class Space, class Byte = unsigned char>
Kokkos::View<Byte*, Space> device_bytes(const std::vector<unsigned char>& bytes,
                                        std::size_t extra = 0, unsigned char filler = 0) {
  Kokkos::View<Byte*, Kokkos::HostSpace> host("stream", bytes.size() + extra);
  if (!bytes.empty()) std::memcpy(host.data(), bytes.data(), bytes.size());
  for (std::size_t i = bytes.size(); i < host.size(); ++i) host(i) = static_cast<Byte>(filler);
  return Kokkos::create_mirror_view_and_copy(Space{}, host);
}

// The first `count` bytes of a byte View, on the host.
template <class View>
std::vector<unsigned char> host_bytes(const View& v, std::size_t count) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
  REQUIRE(count <= host.size());
  std::vector<unsigned char> bytes(count);
  if (count) std::memcpy(bytes.data(), host.data(), count);
  return bytes;
}

// Compresses `input` (bit patterns in C order) with `codec` into a stream View of
// `capacity` bytes (default: the size bound) pre-filled with `filler`; returns the stream bytes.
template <class T, int D, class Exec, class Bits>
std::vector<unsigned char> compress_with(ndzip::compressor<T, D, Exec>& codec,
                                         const std::vector<Bits>& input,
                                         unsigned char filler = 0xa5) {
  using space = typename Exec::memory_space;
  const auto values =
      Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, codec.grid()));
  auto stream = device_bytes<space>({}, codec.size_bound(), filler);
  const std::size_t size = codec.compress(values, stream);
  codec.execution_space_instance().fence();
  REQUIRE(size <= stream.size());
  return host_bytes(stream, size);
}

template <class T, int D, class Exec, class Bits>
std::vector<unsigned char> compress_on(const Exec& exec, const std::vector<Bits>& input,
                                       const ndzip::extent<D>& grid) {
  ndzip::compressor<T, D, Exec> codec(exec, grid);
  return compress_with(codec, input);
}

// Decompresses `stream` with `codec` (the stream View is exactly stream.size() bytes long plus
// `extra`); returns the bit patterns in C order and stores the bytes consumed.
template <class T, int D, class Exec>
std::vector<typename ndzip::profile<T, D>::bits_type> decompress_with(
    ndzip::compressor<T, D, Exec>& codec, const std::vector<unsigned char>& stream,
    std::size_t* consumed = nullptr, std::size_t extra = 0) {
  using space = typename Exec::memory_space;
  const auto stream_view = device_bytes<space>(stream, extra);
  auto values = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("decoded", codec.grid());
  const std::size_t used = codec.decompress(stream_view, values);
  if (consumed) *consumed = used;
  return bits_of<typename ndzip::profile<T, D>::bits_type>(values);
}

template <class T, int D, class Exec>
std::vector<typename ndzip::profile<T, D>::bits_type> decompress_on(
    const Exec& exec, const std::vector<unsigned char>& stream, const ndzip::extent<D>& grid,
    std::size_t* consumed = nullptr) {
  ndzip::compressor<T, D, Exec> codec(exec, grid);
  return decompress_with(codec, stream, consumed);
}

// Calls f(name, exec) for every enabled backend, with the backend's name in failure messages.
template <class F>
void for_each_backend(F&& f) {
  const auto backends = ndzip::enabled_backends();
  REQUIRE_FALSE(backends.empty());
  for (const auto& name : backends) {
    INFO("backend " << name);
    ndzip::with_backend(name, [&](auto exec) { f(name, exec); });
  }
}

// "" if the two sequences are equal, otherwise where and how they first differ.
template <class A, class B>
std::string mismatch(const A& got, const B& want) {
  std::ostringstream out;
  if (got.size() != want.size()) out << "size " << got.size() << " != " << want.size() << "; ";
  const std::size_t n = got.size() < want.size() ? got.size() : want.size();
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      out << "first difference at index " << i << ": got 0x" << std::hex << +got[i] << ", want 0x"
          << +want[i];
      break;
    }
  return out.str();
}

// Generated input of a family for a shape, typed like Cfg.
template <class Cfg>
std::vector<typename Cfg::bits_type> generate_for(const std::string& family, int noise_bits,
                                                  const ndzip::extent<Cfg::dims>& grid) {
  return generate_bits<typename Cfg::bits_type>(
      make_spec(family, noise_bits, Cfg::is_double, Cfg::dims, to_array(grid)));
}

// Grid shapes of every kind of border (none, partial, hypercubes along one axis only) for the
// generated cases that every backend must encode identically.
template <int D>
std::vector<ndzip::extent<D>> cross_backend_shapes() {
  if constexpr (D == 1)
    return {ndzip::extent<1>(20483), ndzip::extent<1>(65536), ndzip::extent<1>(163917)};
  else if constexpr (D == 2)
    return {ndzip::extent<2>(130, 200), ndzip::extent<2>(256, 256), ndzip::extent<2>(520, 390)};
  else
    return {ndzip::extent<3>(40, 50, 37), ndzip::extent<3>(64, 64, 48),
            ndzip::extent<3>(33, 34, 35)};
}

// The generated input families of the cross-backend cases.
inline const std::vector<std::string>& cross_backend_families() {
  static const std::vector<std::string> families = {"smooth", "checker", "specials", "random"};
  return families;
}

// The model encoder's stream for an input, typed like Cfg.
template <class Cfg>
std::vector<unsigned char> model_stream(const std::vector<typename Cfg::bits_type>& input,
                                        const ndzip::extent<Cfg::dims>& grid) {
  return model_compress(input, Cfg::dims, to_array(grid));
}

}  // namespace ndzip_test

TYPE_TO_STRING_AS("f32_1d", ndzip_test::f32_1d);
TYPE_TO_STRING_AS("f32_2d", ndzip_test::f32_2d);
TYPE_TO_STRING_AS("f32_3d", ndzip_test::f32_3d);
TYPE_TO_STRING_AS("f64_1d", ndzip_test::f64_1d);
TYPE_TO_STRING_AS("f64_2d", ndzip_test::f64_2d);
TYPE_TO_STRING_AS("f64_3d", ndzip_test::f64_3d);

#define NDZIP_ALL_CONFIGS                                                         \
  ndzip_test::f32_1d, ndzip_test::f32_2d, ndzip_test::f32_3d, ndzip_test::f64_1d, \
      ndzip_test::f64_2d, ndzip_test::f64_3d
