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
//
// "Region" input (region target), integers little-endian:
//   byte 0        bit 0: what follows the box: a frame (0) or a raw stream (1); bits 1-3: the
//                 box kind (0-5 inside, 6 empty, 7 as given: region_box_of)
//   bytes 1-24    start and count of axes 0, 1, 2 (start0, count0, start1, ...), uint32 each;
//                 those past the array's rank are ignored
//   byte 25       raw stream only: bits 0-6 the grid (region_raw_grid), bit 7 the high-ratio mode
//   the rest      the frame (any version), or the raw stream
// region_box_of turns the box fields into the box of an array: kinds 0-5 per axis start %
// extent and 1 + count % (extent - start), a box inside the array; kind 6 that box with count
// 0 along axis start0 % rank, an empty box; kind 7 start as given and count's low 16 bits, which
// mostly lie outside the array (or are empty).

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <ndzip/array_shape.hpp>

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
// The region target decodes boxes of arrays up to this size (and, as its oracle, the whole
// array): a frame of 16 KiB can hold a high-ratio stream of an array this large.
inline constexpr std::size_t region_max_elements = std::size_t{1} << 22;

struct shaped_input {
  array_desc array;
  byte_span payload;
};

struct hdf5_chunk_input {
  std::vector<unsigned> cd_values;
  byte_span chunk;
};

struct region_input {
  bool raw = false;                       // a raw stream follows, else a frame
  unsigned box_kind = 0;                  // 0-7, see region_box_of
  std::array<std::uint32_t, 3> start{};   // the box fields, per axis
  std::array<std::uint32_t, 3> count{};
  unsigned raw_grid = 0;                  // raw stream only: byte 25
  byte_span payload;                      // the frame or the stream
};

// A box of an array: its first element and extents, slowest first (axes past the rank unused).
struct region_box {
  int rank = 0;
  std::array<std::uint64_t, 3> start{};
  std::array<std::uint64_t, 3> count{};
  bool inside = false;  // not empty, and inside the array

  // Its elements: the product of its extents (at most 2^48: kind 7's are 16-bit).
  std::uint64_t size() const {
    std::uint64_t n = 1;
    for (int a = 0; a < rank; ++a) n *= count[a];
    return n;
  }
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

// The fields of a region input, or nothing if it is too short.
std::optional<region_input> parse_region_input(byte_span input);
// The bytes before the payload of the region input `input` (the inverse, for seeds).
byte_buffer region_input_prefix(const region_input& input);
// The box the fields of `input` give for an array of `shape` (its rank and extents).
region_box region_box_of(const region_input& input, const ndzip::array_shape& shape);
// The grid (type, extents) and mode of a raw region input's stream, from its byte 25: a small
// fixed grid of the table in fuzz_support.cpp (several hypercubes and a border, or none).
array_desc region_raw_grid(unsigned byte);
// How many grids the table holds (byte 25's bits 0-6 are taken modulo this).
std::size_t region_raw_grid_count();

// `file`, a frame of version 1-3, with its checksum made right if that is its only defect
// (inspect_frame accepts it and the checksum it records is wrong); nothing otherwise. So the
// fuzzer gets past the hash to the decoder behind it.
std::optional<byte_buffer> with_frame_checksum_repaired(const byte_buffer& file);
// `file`, a chunked frame (version 4), with each checksum that is wrong (the header's, the slab
// heads', the trailer's) made right if the checksums are all that inspect_chunked_frame finds
// wrong with it; nothing if none is wrong or it has other defects.
std::optional<byte_buffer> with_chunked_checksums_repaired(const byte_buffer& file);

// An unmanaged LayoutRight View of `shape` (of rank Dims, element type T) in host memory.
template <class T, int Dims>
using host_view =
    Kokkos::View<std::conditional_t<Dims == 1, T*, std::conditional_t<Dims == 2, T**, T***>>,
                 Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The View of shape `shape` over `values` (shape.byte_size() bytes, aligned for T).
template <class T, int Dims>
host_view<T, Dims> view_of(byte_buffer& values, const ndzip::array_shape& shape) {
  T* const data = reinterpret_cast<T*>(values.data());
  if constexpr (Dims == 1)
    return host_view<T, Dims>(data, shape.extent(0));
  else if constexpr (Dims == 2)
    return host_view<T, Dims>(data, shape.extent(0), shape.extent(1));
  else
    return host_view<T, Dims>(data, shape.extent(0), shape.extent(1), shape.extent(2));
}

// A frame in host memory, as the library's frame functions take it.
using frame_view = Kokkos::View<const std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

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
