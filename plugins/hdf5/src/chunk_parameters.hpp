// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the filter needs to know about a chunk, and how it is kept in the filter's cd_values
// (the parameters HDF5 stores with the dataset). The filter callback only sees the chunk's
// bytes, so set_local() records the element type and the chunk extents here when the dataset
// is created, and every later read and write takes them from the file.
//
// cd_values, version 1 (4 to 6 values):
//   [0]           layout version: 1
//   [1]           element type: 1 = float (IEEE 754 binary32), 2 = double (binary64), both in
//                 the byte order of the machine that writes them, which must be little endian
//   [2]           rank: 1, 2 or 3
//   [3, 3 + rank) chunk extents, slowest dimension first (HDF5's and ndzip's order)

#include <array>
#include <cstddef>
#include <vector>

namespace ndzip::hdf5_plugin {

enum class element_type : unsigned { float32 = 1, float64 = 2 };

struct chunk_parameters {
  element_type type = element_type::float32;
  int rank = 0;
  std::array<std::size_t, 3> extents = {};  // the first `rank` are used

  std::size_t element_bytes() const { return type == element_type::float32 ? 4 : 8; }
  std::size_t element_count() const;
  std::size_t chunk_bytes() const { return element_count() * element_bytes(); }
};

inline constexpr unsigned cd_values_version = 1;
inline constexpr std::size_t max_cd_values = 6;

// The cd_values of `chunk`.
std::vector<unsigned> to_cd_values(const chunk_parameters& chunk);

// The chunk described by cd_values read from a file (so untrusted): throws std::runtime_error
// naming what is wrong if they are not a version-1 layout of a chunk ndzip can compress.
chunk_parameters from_cd_values(std::size_t count, const unsigned* values);

// Throws std::runtime_error unless the ndzip format can hold a grid of the chunk's extents.
void check_representable(const chunk_parameters& chunk);

}  // namespace ndzip::hdf5_plugin
