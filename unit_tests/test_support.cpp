// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "test_support.hpp"

#include <openssl/evp.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

#ifndef NDZIP_VECTORS_DIR
#define NDZIP_VECTORS_DIR ""
#endif

namespace ndzip_test {

std::string sha256_hex(const void* data, std::size_t size) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  static const unsigned char empty = 0;
  if (EVP_Digest(size ? data : &empty, size, digest, &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("EVP_Digest(sha256) failed");
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

const std::vector<reference_vector>& reference_vectors() {
  static const std::vector<reference_vector> table = {
#include "reference_vectors.inc"
  };
  return table;
}

std::string vectors_dir() {
  if (const char* env = std::getenv("NDZIP_VECTORS_DIR"); env && *env) return env;
  return NDZIP_VECTORS_DIR;
}

bool vectors_available() {
  const std::string dir = vectors_dir();
  return !dir.empty() && std::ifstream(dir + "/manifest.csv").good();
}

std::optional<std::vector<unsigned char>> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return bytes;
}

std::optional<std::vector<unsigned char>> read_vector_input(const reference_vector& v) {
  return read_file(vectors_dir() + "/" + v.name + (v.is_double ? ".f64" : ".f32"));
}

std::optional<std::vector<unsigned char>> read_vector_stream(const reference_vector& v) {
  return read_file(vectors_dir() + "/" + v.name + ".ndz");
}

std::uint32_t load_u32(const std::vector<unsigned char>& bytes, std::size_t offset) {
  std::uint32_t v = 0;
  for (int b = 0; b < 4; ++b) v |= static_cast<std::uint32_t>(bytes.at(offset + b)) << (8 * b);
  return v;
}

void store_u32(std::vector<unsigned char>& bytes, std::size_t offset, std::uint32_t value) {
  for (int b = 0; b < 4; ++b) bytes.at(offset + b) = static_cast<unsigned char>(value >> (8 * b));
}

vector_spec make_spec(const std::string& family, int noise_bits, bool is_double, int dims,
                      std::array<std::size_t, 3> extents) {
  vector_spec spec;
  spec.family = family;
  spec.noise_bits = noise_bits;
  spec.is_double = is_double;
  spec.dims = dims;
  for (int j = 0; j < 3; ++j) spec.extents[j] = j < dims ? extents[j] : 1;
  return spec;
}

}  // namespace ndzip_test
