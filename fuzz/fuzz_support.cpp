// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "fuzz_support.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <ndzip/error.hpp>

#include "codec.hpp"

namespace ndzip_fuzz {

namespace {

std::unique_ptr<ndzip_cli::backend_session> session;

}  // namespace

std::string current_input;

std::optional<shaped_input> parse_shaped_input(byte_span input, std::size_t element_limit) {
  if (input.size < 1) return std::nullopt;
  const auto byte = [&](std::size_t i) { return std::to_integer<unsigned>(input.data[i]); };
  shaped_input out;
  const auto type =
      byte(0) & 1 ? ndzip_cli::element_type::float64 : ndzip_cli::element_type::float32;
  const int rank = static_cast<int>((byte(0) >> 1) % 3 + 1);
  const std::size_t prefix = 1 + 2 * static_cast<std::size_t>(rank);
  if (input.size < prefix) return std::nullopt;
  std::size_t elements = 1;
  std::uint64_t extents[3] = {};
  for (int a = 0; a < rank; ++a) {
    extents[a] = byte(1 + 2 * a) | byte(2 + 2 * a) << 8;
    elements *= extents[a];
  }
  out.array.shape = ndzip::array_shape(type, rank, extents);
  if (elements > element_limit) return std::nullopt;
  out.payload = input.from(prefix);
  return out;
}

byte_buffer shaped_input_prefix(const array_desc& array) {
  const unsigned type_bit = array.shape.type() == ndzip_cli::element_type::float64 ? 1 : 0;
  byte_buffer prefix{static_cast<std::byte>(type_bit | (array.shape.rank() - 1) << 1)};
  for (int a = 0; a < array.shape.rank(); ++a) {
    prefix.push_back(static_cast<std::byte>(array.shape.extent(a) & 0xff));
    prefix.push_back(static_cast<std::byte>(array.shape.extent(a) >> 8 & 0xff));
  }
  return prefix;
}

std::optional<hdf5_chunk_input> parse_hdf5_chunk_input(byte_span input) {
  if (input.size < 1) return std::nullopt;
  const auto byte = [&](std::size_t i) { return std::to_integer<unsigned>(input.data[i]); };
  const std::size_t count = byte(0) % 8;
  const std::size_t prefix = 1 + 4 * count;
  if (input.size < prefix) return std::nullopt;
  hdf5_chunk_input out;
  for (std::size_t v = 0; v < count; ++v) {
    const std::size_t at = 1 + 4 * v;
    out.cd_values.push_back(byte(at) | byte(at + 1) << 8 | byte(at + 2) << 16 |
                            byte(at + 3) << 24);
  }
  out.chunk = input.from(prefix);
  return out;
}

byte_buffer hdf5_chunk_input_prefix(const std::vector<unsigned>& cd_values) {
  byte_buffer prefix{static_cast<std::byte>(cd_values.size())};
  for (const unsigned value : cd_values)
    for (int shift = 0; shift < 32; shift += 8)
      prefix.push_back(static_cast<std::byte>(value >> shift & 0xff));
  return prefix;
}

byte_buffer aligned_copy(byte_span data) {
  return byte_buffer(data.data, data.data + data.size);
}

const std::vector<std::string>& backends() {
  static const std::vector<std::string> names = ndzip_cli::backend_names();
  return names;
}

namespace {

decode_outcome decode_on(const std::string& backend, const array_desc& array, byte_span stream) {
  decode_outcome o;
  try {
    o.result = ndzip_cli::decompress_array(backend, array, stream);
  } catch (const ndzip::stream_error& e) {
    o.error = e.what();
    require(!o.error.empty(), "stream_error without a message");
  }
  return o;
}

}  // namespace

decode_outcome decode_on_every_backend(const array_desc& array, byte_span stream) {
  decode_outcome first = decode_on(backends()[0], array, stream);
  for (std::size_t b = 1; b < backends().size(); ++b) {
    const decode_outcome other = decode_on(backends()[b], array, stream);
    require(other.error == first.error, backends()[b] + " and " + backends()[0] +
                                            " disagree: '" + other.error + "' vs '" +
                                            first.error + "'");
    require(other.result.consumed == first.result.consumed &&
                same_bytes(other.result.values, first.result.values),
            backends()[b] + " decoded other values than " + backends()[0]);
  }
  return first;
}

bool same_bytes(byte_span a, byte_span b) {
  return a.size == b.size && (a.size == 0 || std::memcmp(a.data, b.data, a.size) == 0);
}

byte_buffer repeated(byte_span pattern, std::size_t size) {
  byte_buffer out(size, std::byte{0});
  if (pattern.size == 0 || size == 0) return out;
  // Doubling copies rather than a loop per byte: the arrays reach 1 MiB, and instrumented
  // loops per byte were a large part of each execution.
  std::size_t filled = std::min(pattern.size, size);
  std::memcpy(out.data(), pattern.data, filled);
  while (filled < size) {
    const std::size_t chunk = std::min(filled, size - filled);
    std::memcpy(out.data() + filled, out.data(), chunk);
    filled += chunk;
  }
  return out;
}

void violated(const std::string& what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what.c_str());
  if (!current_input.empty()) std::fprintf(stderr, "input: %s\n", current_input.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace ndzip_fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Kokkos lives until exit; it is finalized before the sanitizers' leak check runs.
  ndzip_fuzz::session = std::make_unique<ndzip_cli::backend_session>();
  std::atexit([] { ndzip_fuzz::session.reset(); });
  return 0;
}
