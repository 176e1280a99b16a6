// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the fuzz targets share: the layout of their inputs, the properties they assert, and the
// Kokkos session they run in. A violated property prints what failed and aborts, which libFuzzer
// (or the replay driver) reports as a finding together with the input.
//
// "Shaped" input (decode_stream and roundtrip targets), every integer little-endian:
//   byte 0        bit 0: element type (0 float, 1 double); (byte >> 1) % 3 + 1: dimensions
//   next 2*D      extents N0..N(D-1), uint16 each, slowest first (0 is allowed)
//   the rest      payload: a raw ndzip stream (decode_stream) or element bytes (roundtrip)
// Arrays of more elements than the target's limit (max_elements, roundtrip_max_elements) are
// skipped so that every input runs in milliseconds.
//
// "HDF5 chunk" input (hdf5_chunk target), integers little-endian:
//   byte 0        number of cd_values, 0-7 (the byte modulo 8)
//   next 4*count  the cd_values, uint32 each (plugins/hdf5/src/chunk_parameters.hpp)
//   the rest      the chunk as stored in the file

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "array_desc.hpp"
#include "bytes.hpp"
#include "codec.hpp"

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace ndzip_fuzz {

using ndzip_cli::array_desc;
using ndzip_cli::byte_buffer;
using ndzip_cli::byte_span;

inline constexpr std::size_t max_elements = std::size_t{1} << 17;
// The round trip encodes what it is given (the payload is repeated to fill the array), so nearly
// every input it sees is near its limit, and 2^17 elements cost ~10 ms per execution under ASan:
// 10^7 executions would take 28 core-hours. Four hypercubes (4 x 4096 elements) already reach
// every path of the encoder and decoder: several chunks in the offset table, a border in every
// dimension, the padding word, and every column width within each hypercube.
inline constexpr std::size_t roundtrip_max_elements = std::size_t{1} << 14;

struct shaped_input {
  array_desc array;
  byte_span payload;
};

struct hdf5_chunk_input {
  std::vector<unsigned> cd_values;
  byte_span chunk;
};

// The shape and payload of a shaped input, or nothing if it is too short or too large.
std::optional<shaped_input> parse_shaped_input(byte_span input,
                                               std::size_t element_limit = max_elements);
// The bytes before the payload of a shaped input for `array` (the inverse, for seeds).
byte_buffer shaped_input_prefix(const array_desc& array);

// The cd_values and chunk of an HDF5 chunk input, or nothing if it is too short.
std::optional<hdf5_chunk_input> parse_hdf5_chunk_input(byte_span input);
// The bytes before the chunk of an HDF5 chunk input with `cd_values` (the inverse, for seeds).
byte_buffer hdf5_chunk_input_prefix(const std::vector<unsigned>& cd_values);

// A copy of `data` in a buffer aligned for double (operator new), as the codec requires.
byte_buffer aligned_copy(byte_span data);

// The backends to run on: every backend of this build, the default first.
const std::vector<std::string>& backends();

// A stream (of the array's codec mode) decoded on every backend, which must all reach the same
// outcome: the same ndzip::stream_error message, or the same values from the same number of
// bytes (a property; violated() otherwise). Returns the first backend's.
struct decode_outcome {
  std::string error;  // empty if decoded
  ndzip_cli::decompressed result;
};
decode_outcome decode_on_every_backend(const array_desc& array, byte_span stream);

// The stream of `values` according to the sequential reference model of the format
// (unit_tests/reference_model.hpp), independent of the library's encoder.
byte_buffer model_stream(const array_desc& array, byte_span values);

// Whether `a` and `b` hold the same bytes (memcmp: an element-wise comparison is instrumented
// per byte in the libFuzzer build).
bool same_bytes(byte_span a, byte_span b);

// `size` bytes of `pattern` repeated (zeros if `pattern` is empty).
byte_buffer repeated(byte_span pattern, std::size_t size);

// Set by the replay driver to the file being run, so that a violation names it.
extern std::string current_input;

// Prints "fuzz property violated: <what>" (and current_input) to standard error and aborts.
[[noreturn]] void violated(const std::string& what);
inline void require(bool holds, const std::string& what) {
  if (!holds) violated(what);
}

}  // namespace ndzip_fuzz
