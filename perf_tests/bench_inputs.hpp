// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The inputs of the benchmark binaries (ndzip-bench, ndzip-mpi-bench, ndzip-region-bench,
// ndzip-fused-bench): the synthetic fields the
// original ndzip-gpu was measured on, generated on the backend, and the datasets of a manifest
// in the original ndzip benchmark's CSV form.
//
// The synthetic set is a smooth field with noise in the low mantissa bits (8 bits for float,
// 24 for double) in the shapes 3-D float 512^3, 2-D float 8192^2, 1-D float 2^27, 1-D double
// 2^27 and 3-D double 256^3.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <ndzip/ndzip.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ndzip::perf::inputs {

struct shape {
  bool is_double;
  std::vector<std::size_t> extents;  // slowest first
};

inline const std::vector<shape> synthetic_shapes = {
    {false, {512, 512, 512}},       {false, {8192, 8192}},   {false, {std::size_t{1} << 27}},
    {true, {std::size_t{1} << 27}}, {true, {256, 256, 256}},
};

// f(T{}, grid) for each synthetic shape, its extents divided by `scale` (a 1-D one's by its
// cube, so that every field shrinks alike), at least 1: T float or double, grid an extent<D>.
template <class F>
void for_each_synthetic_shape(std::size_t scale, F&& f) {
  for (const shape& s : synthetic_shapes) {
    std::vector<std::size_t> e = s.extents;
    const std::size_t divisor = e.size() == 1 ? scale * scale * scale : scale;
    for (auto& x : e) x = std::max<std::size_t>(1, x / divisor);
    const auto dispatch = [&](auto type) {
      if (e.size() == 1) f(type, ndzip::extent<1>(e[0]));
      if (e.size() == 2) f(type, ndzip::extent<2>(e[0], e[1]));
      if (e.size() == 3) f(type, ndzip::extent<3>(e[0], e[1], e[2]));
    };
    if (s.is_double)
      dispatch(double{});
    else
      dispatch(float{});
  }
}

// SplitMix64 output k for a fixed seed: the noise source.
KOKKOS_INLINE_FUNCTION std::uint64_t noise(std::uint64_t k) {
  std::uint64_t z = 0x5eed + (k + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A smooth field over the unit cube plus `noise_bits` random low mantissa bits, generated on
// the backend (element k of a C-order grid with the given extents).
template <class T, int Dims, class ExecSpace, class View>
void fill_synthetic(const ExecSpace& exec, const View& values, const ndzip::extent<Dims>& grid) {
  using bits = typename ndzip::profile<T, Dims>::bits_type;
  constexpr int noise_bits = sizeof(T) == 4 ? 8 : 24;
  auto* data = reinterpret_cast<bits*>(values.data());
  Kokkos::parallel_for(
      "ndzip-bench::fill",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
          exec, 0, static_cast<std::int64_t>(grid.size())),
      KOKKOS_LAMBDA(std::int64_t k) {
        std::int64_t rest = k;
        double q = 0;
        for (int a = Dims - 1; a >= 0; --a) {
          const double u = double(rest % static_cast<std::int64_t>(grid[a])) / double(grid[a]);
          rest /= static_cast<std::int64_t>(grid[a]);
          q += (a + 1) * u + 0.5 * u * u;
        }
        const T value = static_cast<T>(1.0 + q + 0.25 * q * q);
        bits b;
        std::memcpy(&b, &value, sizeof b);
        data[k] = b ^ static_cast<bits>(noise(k) & ((bits{1} << noise_bits) - 1));
      });
}

struct dataset {
  std::string name;
  std::string path;
  bool is_double;
  std::vector<std::size_t> extents;
};

// Reads a manifest in the ndzip benchmark form: `file;float|double;dims slowest first`, paths
// relative to the manifest.
inline std::vector<dataset> read_manifest(const std::string& manifest) {
  std::ifstream in(manifest);
  if (!in) throw std::runtime_error("cannot read manifest '" + manifest + "'");
  const auto slash = manifest.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : manifest.substr(0, slash);
  std::vector<dataset> sets;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream fields(line);
    std::string file, type, dims;
    std::getline(fields, file, ';');
    std::getline(fields, type, ';');
    std::getline(fields, dims, ';');
    dataset d{file, dir + "/" + file, type == "double", {}};
    std::stringstream extents(dims);
    for (std::size_t x; extents >> x;) d.extents.push_back(x);
    if ((type != "float" && type != "double") || d.extents.empty() || d.extents.size() > 3)
      throw std::runtime_error(manifest + ":" + std::to_string(number) + ": expected " +
                               "`file;float|double;N0 [N1 [N2]]`, got `" + line + "`");
    sets.push_back(std::move(d));
  }
  return sets;
}

template <class T>
std::vector<T> read_values(const dataset& d, std::size_t count) {
  std::ifstream in(d.path, std::ios::binary);
  std::vector<T> values(count);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(T)));
  if (!in || in.peek() != std::char_traits<char>::eof())
    throw std::runtime_error("'" + d.path + "' does not hold exactly " + std::to_string(count) +
                             " values of its type");
  return values;
}

}  // namespace ndzip::perf::inputs
