// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "chunk_parameters.hpp"

#include <stdexcept>
#include <string>

#include "chunk_grid.hpp"
#include "ndzip/format.hpp"

namespace ndzip::hdf5_plugin {

std::size_t chunk_parameters::element_count() const {
  std::size_t n = 1;
  for (int a = 0; a < rank; ++a) n *= extents[a];
  return n;
}

std::vector<unsigned> to_cd_values(const chunk_parameters& chunk) {
  std::vector<unsigned> values{cd_values_version, static_cast<unsigned>(chunk.type),
                               static_cast<unsigned>(chunk.rank)};
  for (int a = 0; a < chunk.rank; ++a) values.push_back(static_cast<unsigned>(chunk.extents[a]));
  return values;
}

chunk_parameters from_cd_values(std::size_t count, const unsigned* values) {
  auto fail = [](const std::string& what) {
    throw std::runtime_error("ndzip HDF5 filter: invalid filter parameters (cd_values): " + what);
  };
  if (count == 0)
    throw std::runtime_error(
        "ndzip HDF5 filter: the dataset has no filter parameters: ndzip cannot compress it (not "
        "float or double of rank 1-3), so its chunks are stored uncompressed where the filter is "
        "optional");
  if (count < 4)
    fail(std::to_string(count) + " values, expected 4 to " + std::to_string(max_cd_values));
  if (values[0] != cd_values_version)
    fail("layout version " + std::to_string(values[0]) + ", this filter reads version " +
         std::to_string(cd_values_version) + " (written by a newer ndzip filter?)");
  chunk_parameters chunk;
  if (values[1] != static_cast<unsigned>(element_type::float32) &&
      values[1] != static_cast<unsigned>(element_type::float64))
    fail("element type code " + std::to_string(values[1]) + ", expected 1 (float) or 2 (double)");
  chunk.type = static_cast<element_type>(values[1]);
  if (values[2] < 1 || values[2] > 3) fail("rank " + std::to_string(values[2]) + ", expected 1-3");
  chunk.rank = static_cast<int>(values[2]);
  if (count != 3 + static_cast<std::size_t>(chunk.rank))
    fail(std::to_string(count) + " values for rank " + std::to_string(chunk.rank) + ", expected " +
         std::to_string(3 + chunk.rank));
  for (int a = 0; a < chunk.rank; ++a) {
    if (values[3 + a] == 0) fail("chunk extent 0");
    chunk.extents[a] = values[3 + a];
  }
  check_representable(chunk);
  return chunk;
}

void check_representable(const chunk_parameters& chunk) {
  try {
    with_chunk_grid(chunk, [](auto tag, const auto& grid) {
      check_grid_representable<typename decltype(tag)::type>(grid);
    });
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("ndzip HDF5 filter: chunk too large: ") + e.what());
  }
}

}  // namespace ndzip::hdf5_plugin
