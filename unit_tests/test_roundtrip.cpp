// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Round trips over boundary shapes and value classes, for float and double in 1, 2 and 3
// dimensions, on every backend: the stream must equal the model encoder's, stay within the size
// bound, and decode back to the same bits.

#include <limits>

#include "codec_support.hpp"

using namespace ndzip_test;

namespace {

// Shapes around the hypercube side s: below one hypercube, exactly one, and s-1, s, s+1, 2s-1,
// 2s, 2s+1 along each axis in turn (the other axes at s), plus single elements and thin slabs.
template <int D>
std::vector<ndzip::extent<D>> boundary_shapes() {
  constexpr std::size_t s = ndzip::profile<float, D>::side_length;
  const std::size_t around[] = {s - 1, s, s + 1, 2 * s - 1, 2 * s, 2 * s + 1, 3 * s + 1};
  std::vector<ndzip::extent<D>> shapes;
  ndzip::extent<D> one;
  for (int a = 0; a < D; ++a) one[a] = 1;
  shapes.push_back(one);
  ndzip::extent<D> below;
  for (int a = 0; a < D; ++a) below[a] = s - 1;
  shapes.push_back(below);
  for (int axis = 0; axis < D; ++axis)
    for (std::size_t n : around) {
      ndzip::extent<D> e;
      for (int a = 0; a < D; ++a) e[a] = a == axis ? n : s;
      if (axis > 0 && n == s) continue;  // the all-s shape is listed once
      shapes.push_back(e);
    }
  if constexpr (D == 1) {
    shapes.push_back(ndzip::extent<1>(2));
    shapes.push_back(ndzip::extent<1>(7));
  } else if constexpr (D == 2) {
    shapes.push_back(ndzip::extent<2>(1, 4097));
    shapes.push_back(ndzip::extent<2>(4097, 1));
    shapes.push_back(ndzip::extent<2>(129, 129));
  } else {
    shapes.push_back(ndzip::extent<3>(1, 16, 300));
    shapes.push_back(ndzip::extent<3>(300, 16, 1));
    shapes.push_back(ndzip::extent<3>(33, 33, 33));
  }
  return shapes;
}

// Checks one input on every backend against the model stream and the format's size facts.
template <class C>
void check_round_trip(const std::vector<typename C::bits_type>& input,
                      const ndzip::extent<C::dims>& grid, bool incompressible = false) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const auto layout = model_layout_of(C::is_double, D, to_array(grid));
  const auto expected = model_stream<C>(input, grid);
  REQUIRE(ndzip::compressed_size_bound<T>(grid) == layout.size_bound);
  if (layout.hypercubes == 0) CHECK(mismatch(expected, to_le_bytes(input)) == "");

  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    ndzip::compressor<T, D, Exec> codec(exec, grid);
    CHECK(codec.size_bound() == layout.size_bound);
    const auto stream = compress_with(codec, input);
    CHECK(stream.size() <= layout.size_bound);
    CHECK(stream.size() % sizeof(T) == 0);
    if (incompressible && layout.hypercubes > 0) CHECK(stream.size() == layout.size_bound);
    CHECK(mismatch(stream, expected) == "");

    std::size_t consumed = 0;
    const auto decoded = decompress_with(codec, stream, &consumed);
    CHECK(consumed == stream.size());
    CHECK(mismatch(decoded, input) == "");
  });
}

// Special bit patterns of one type: signed zeros, infinities, NaNs with payloads (quiet and
// signalling, both signs), subnormals, extremes of the normal range and ordinary numbers.
template <class T, class Bits>
std::vector<Bits> special_patterns() {
  using lim = std::numeric_limits<T>;
  constexpr int w = sizeof(Bits) * 8;
  constexpr int m = lim::digits - 1;
  constexpr Bits sign = Bits{1} << (w - 1);
  constexpr Bits mant = (Bits{1} << m) - 1;
  constexpr Bits exp = ~(sign | mant);
  auto bits = [](T v) {
    Bits b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  };
  return {0,
          sign,
          exp,
          sign | exp,
          exp | (Bits{1} << (m - 1)),
          exp | (Bits{1} << (m - 1)) | 0x1234,
          sign | exp | mant,
          exp | 1,
          sign | exp | 0x55,
          1,
          sign | 1,
          mant,
          sign | mant,
          Bits{1} << m,
          exp - 1,
          sign | (exp - 1),
          bits(T(1)),
          bits(T(-1)),
          bits(lim::epsilon()),
          bits(T(-1234.5678)),
          bits(T(3.14159265358979))};
}

}  // namespace

TEST_CASE_TEMPLATE("round trip: boundary shapes", C, NDZIP_ALL_CONFIGS) {
  constexpr int D = C::dims;
  const int noise = C::is_double ? 40 : 14;
  for (const auto& grid : boundary_shapes<D>()) {
    INFO("grid " << ndzip::to_string(grid));
    {
      INFO("family random");
      check_round_trip<C>(generate_for<C>("random", 0, grid), grid, true);
    }
    for (const char* family : {"specials", "const", "smooth"}) {
      INFO("family " << std::string(family));
      check_round_trip<C>(generate_for<C>(family, noise, grid), grid);
    }
  }
}

TEST_CASE_TEMPLATE("round trip: every value family", C, NDZIP_ALL_CONFIGS) {
  constexpr int D = C::dims;
  constexpr std::size_t s = ndzip::profile<float, D>::side_length;
  // Two hypercubes along the last axis plus a border in every axis.
  ndzip::extent<D> grid;
  for (int a = 0; a < D; ++a) grid[a] = (a == D - 1 ? 2 * s : s) + 3;
  for (const char* family :
       {"smooth", "checker", "const", "zeros", "negzeros", "random", "nan", "denormal", "specials"})
    for (int noise : {0, C::is_double ? 12 : 4}) {
      INFO("grid " << ndzip::to_string(grid) << ", family " << std::string(family) << ", noise bits "
                   << noise);
      check_round_trip<C>(generate_for<C>(family, noise, grid), grid,
                          std::string(family) == "random");
    }
}

TEST_CASE_TEMPLATE("round trip: special values inside hypercubes and border", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  constexpr std::size_t s = ndzip::profile<float, D>::side_length;
  const auto patterns = special_patterns<T, Bits>();
  ndzip::extent<D> grid;
  for (int a = 0; a < D; ++a) grid[a] = s + 2 + a;
  std::vector<Bits> input(grid.size());
  for (std::size_t k = 0; k < input.size(); ++k)
    input[k] = patterns[(k * 7 + k / 5) % patterns.size()];
  INFO("patterns cycled over " << ndzip::to_string(grid));
  check_round_trip<C>(input, grid);

  // Each pattern as a constant field, and alternating with its negation.
  for (std::size_t p = 0; p < patterns.size(); ++p) {
    INFO("pattern 0x" << std::hex << +patterns[p]);
    std::vector<Bits> constant(grid.size(), patterns[p]);
    check_round_trip<C>(constant, grid);
    for (std::size_t k = 0; k < constant.size(); k += 2)
      constant[k] ^= Bits{1} << (sizeof(Bits) * 8 - 1);
    check_round_trip<C>(constant, grid);
  }
}

TEST_CASE_TEMPLATE("round trip: zero-size grids give empty streams", C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  constexpr std::size_t s = ndzip::profile<float, D>::side_length;
  std::vector<ndzip::extent<D>> shapes;
  for (int axis = 0; axis < D; ++axis) {
    ndzip::extent<D> e;
    for (int a = 0; a < D; ++a) e[a] = a == axis ? 0 : 2 * s;
    shapes.push_back(e);
  }
  shapes.push_back(ndzip::extent<D>());  // all zero
  for (const auto& grid : shapes) {
    INFO("grid " << ndzip::to_string(grid));
    CHECK(ndzip::compressed_size_bound<T>(grid) == 0);
    for_each_backend([&](const std::string&, auto exec) {
      using Exec = decltype(exec);
      using space = typename Exec::memory_space;
      ndzip::compressor<T, D, Exec> codec(exec, grid);
      CHECK(codec.size_bound() == 0);
      auto values = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("values", grid);
      Kokkos::View<unsigned char*, space> empty("empty", 0);
      CHECK(codec.compress(values, empty) == 0);
      exec.fence();
      CHECK(codec.decompress(empty, values) == 0);
      // A longer stream View is accepted; nothing of it is consumed.
      auto longer = device_bytes<space>({}, 64, 0x5a);
      CHECK(codec.compress(values, longer) == 0);
      exec.fence();
      CHECK(codec.decompress(longer, values) == 0);
      CHECK(mismatch(host_bytes(longer, 64), std::vector<unsigned char>(64, 0x5a)) == "");
    });
  }
}
