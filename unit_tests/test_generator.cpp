// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The test-side oracles: the input generator and the model encoder must reproduce the reference
// vectors exactly before they are trusted to check the library. None of this uses the codec.

#include <doctest/doctest.h>

#include <stdexcept>

#include "reference_model.hpp"
#include "test_support.hpp"
#include "vector_generator.hpp"

using namespace ndzip_test;

TEST_CASE("generator: SplitMix64 matches the published sequence") {
  // The first outputs of SplitMix64 from state 0, as published with the algorithm.
  CHECK(splitmix64(0, 0) == 0xe220a8397b1dcdafull);
  CHECK(splitmix64(0, 1) == 0x6e789e6aa1b965f4ull);
  CHECK(splitmix64(0, 2) == 0x06c45d188009454full);
  // R(seed, k) is output k of the stream from `seed`, i.e. output 0 from seed + k * golden.
  CHECK(splitmix64(vector_seed, 5) == splitmix64(vector_seed + 5 * 0x9E3779B97F4A7C15ull, 0));
}

TEST_CASE("generator: vector names parse and print back") {
  const auto spec = parse_vector_name("smooth-b8_f32_3d_40x50x37");
  CHECK(spec.family == "smooth");
  CHECK(spec.noise_bits == 8);
  CHECK_FALSE(spec.is_double);
  CHECK(spec.dims == 3);
  CHECK(spec.extents[0] == 40);
  CHECK(spec.extents[1] == 50);
  CHECK(spec.extents[2] == 37);
  CHECK(spec.size() == 40u * 50u * 37u);
  CHECK(spec.name() == "smooth-b8_f32_3d_40x50x37");

  const auto d = parse_vector_name("random_f64_1d_12293");
  CHECK(d.family == "random");
  CHECK(d.is_double);
  CHECK(d.dims == 1);
  CHECK(d.extents[0] == 12293);
  CHECK(d.extents[1] == 1);
  CHECK(d.name() == "random_f64_1d_12293");

  for (const char* bad :
       {"", "smooth_f32_1d_10", "random-b4_f32_1d_10", "random_f16_1d_10", "random_f32_4d_1x1x1x1",
        "random_f32_2d_10", "random_f32_1d_10x10", "random_f32_1d_", "random_f32_1d_1a",
        "wave_f32_1d_10", "smooth-b40_f32_1d_10", "random_f32_1d_10_extra"}) {
    INFO("name " << std::string(bad));
    CHECK_THROWS_AS(parse_vector_name(bad), std::invalid_argument);
  }
  CHECK_THROWS_AS(generate_bits32(parse_vector_name("zeros_f64_1d_4")), std::invalid_argument);
  CHECK_THROWS_AS(generate_bits64(parse_vector_name("zeros_f32_1d_4")), std::invalid_argument);
}

TEST_CASE("generator: every reference input is reproduced from its name") {
  const auto& vectors = reference_vectors();
  REQUIRE(vectors.size() == 80);
  const bool files = vectors_available();
  if (!files)
    MESSAGE("reference vector files not found in '" << vectors_dir() << "': checking digests only");
  for (const auto& v : vectors) {
    INFO("vector " << std::string(v.name));
    const auto spec = parse_vector_name(v.name);
    CHECK(spec.is_double == v.is_double);
    CHECK(spec.dims == v.dims);
    for (int j = 0; j < 3; ++j) CHECK(spec.extents[j] == v.extents[j]);
    const auto bytes = generate_bytes(spec);
    CHECK(bytes.size() == spec.size() * spec.word_bytes());
    CHECK(sha256_hex(bytes) == v.input_sha256);
    if (files) {
      const auto file = read_vector_input(v);
      REQUIRE(file.has_value());
      CHECK((*file == bytes));
    }
  }
}

TEST_CASE("model: the test-side encoder reproduces every reference stream") {
  const bool files = vectors_available();
  for (const auto& v : reference_vectors()) {
    INFO("vector " << std::string(v.name));
    const auto spec = parse_vector_name(v.name);
    const std::array<std::size_t, 3> ext = {v.extents[0], v.extents[1], v.extents[2]};
    const auto stream = v.is_double ? model_compress(generate_bits64(spec), v.dims, ext)
                                    : model_compress(generate_bits32(spec), v.dims, ext);
    CHECK(stream.size() == v.stream_bytes);
    CHECK(stream.size() <= model_layout_of(v.is_double, v.dims, ext).size_bound);
    CHECK(sha256_hex(stream) == v.stream_sha256);
    if (files) {
      const auto file = read_vector_stream(v);
      REQUIRE(file.has_value());
      CHECK((*file == stream));
    }
  }
}

TEST_CASE("model: size bound counts the double header padding") {
  // README / spec section 8: random_f64_1d_12293 has 3 hypercubes and a 99896-byte stream.
  CHECK(model_layout_of(true, 1, {12293, 1, 1}).size_bound == 99896);
  CHECK(model_layout_of(true, 1, {12293, 1, 1}).header_bytes == 16);
  CHECK(model_layout_of(false, 1, {12293, 1, 1}).header_bytes == 12);
  CHECK(model_layout_of(true, 2, {65, 64, 1}).header_bytes == 8);
  CHECK(model_layout_of(true, 3, {32, 32, 32}).header_bytes == 32);
  CHECK(model_layout_of(false, 2, {63, 300, 1}).size_bound == 63 * 300 * 4);
}
