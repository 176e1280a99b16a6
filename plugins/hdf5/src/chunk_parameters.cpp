// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "chunk_parameters.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace ndzip::hdf5_plugin {

std::vector<unsigned> to_cd_values(const chunk_parameters& chunk) {
  std::vector<unsigned> values{chunk.layout};
  if (chunk.layout >= 2)
    values.push_back((chunk.checksum ? checksum_flag : 0) |
                     static_cast<unsigned>(chunk.mode) << mode_shift |
                     static_cast<unsigned>(chunk.folded_rank.value_or(0)) << folded_rank_shift);
  values.push_back(static_cast<unsigned>(chunk.shape.type()));
  values.push_back(static_cast<unsigned>(chunk.shape.rank()));
  for (int a = 0; a < chunk.shape.rank(); ++a)
    values.push_back(static_cast<unsigned>(chunk.shape.extent(a)));
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
  chunk_parameters chunk;
  chunk.layout = values[0];
  if (chunk.layout < 1 || chunk.layout > cd_values_layout)
    fail("layout version " + std::to_string(values[0]) + ", this filter reads versions 1 to " +
         std::to_string(cd_values_layout) + " (written by a newer ndzip filter?)");
  // Where the type, rank and extents start: after the flags in layouts 2 and 3.
  const std::size_t first = chunk.layout == 1 ? 1 : 2;
  if (count < first + 3)
    fail(std::to_string(count) + " values, expected " + std::to_string(first + 3) + " to " +
         std::to_string(first + 5) + " for layout " + std::to_string(chunk.layout));
  unsigned folded_rank = 0;
  if (chunk.layout == 1) {
    chunk.checksum = false;
  } else {
    const unsigned flags = values[1];
    // Layout 2 has no folding: every bit from 1 is the mode's code there.
    const unsigned code = chunk.layout == 2 ? flags >> mode_shift : flags >> mode_shift & mode_mask;
    const std::optional<codec_mode> mode = codec_mode_of_code(code);
    if (!mode)
      fail("flags " + std::to_string(flags) + " name codec mode " + std::to_string(code) +
           ", which this filter does not know (" + codec_mode_codes() +
           "; written by a newer ndzip filter?)");
    if (chunk.layout == 3) {
      folded_rank = flags >> folded_rank_shift & folded_rank_mask;
      if (flags >> folded_rank_shift > folded_rank_mask)
        fail("flags " + std::to_string(flags) +
             " set bits this filter does not know (written by a newer ndzip filter?)");
    }
    chunk.checksum = (flags & checksum_flag) != 0;
    chunk.mode = *mode;
  }
  const unsigned type = values[first];
  if (type != static_cast<unsigned>(element_type::float32) &&
      type != static_cast<unsigned>(element_type::float64))
    fail("element type code " + std::to_string(type) + ", expected 1 (float) or 2 (double)");
  const unsigned rank = values[first + 1];
  if (rank < 1 || rank > 3) fail("rank " + std::to_string(rank) + ", expected 1-3");
  if (count != first + 2 + rank)
    fail(std::to_string(count) + " values for rank " + std::to_string(rank) + " in layout " +
         std::to_string(chunk.layout) + ", expected " + std::to_string(first + 2 + rank));
  std::uint64_t extents[3] = {};
  for (unsigned a = 0; a < rank; ++a) {
    if (values[first + 2 + a] == 0) fail("chunk extent 0");
    extents[a] = values[first + 2 + a];
  }
  chunk.shape = array_shape(static_cast<element_type>(type), static_cast<int>(rank), extents);
  if (folded_rank != 0) {
    if (folded_rank >= rank)
      fail("flags " + std::to_string(values[1]) + " fold a chunk of rank " +
           std::to_string(rank) + " to rank " + std::to_string(folded_rank) +
           " (folding lowers the rank)");
    chunk.folded_rank = static_cast<int>(folded_rank);
  }
  check_representable(chunk);
  return chunk;
}

namespace {

// Layout 3 folds a chunk by the rule, for its own shape.
chunk_parameters folded_by_rule(chunk_parameters chunk, bool fold) {
  chunk.folded_rank.reset();
  if (fold && chunk.layout == 3) {
    const int rank = folded_rank(chunk.shape);
    if (rank != chunk.shape.rank()) chunk.folded_rank = rank;
  }
  return chunk;
}

}  // namespace

chunk_parameters with_requested_layout(chunk_parameters chunk, std::size_t count,
                                       const unsigned* values) {
  chunk.layout = cd_values_layout;
  chunk.checksum = true;
  chunk.mode = codec_mode::ndzip;
  if (count == 0) return folded_by_rule(chunk, true);
  if (count >= min_stored_cd_values) {
    // A copied dataset's parameters: its layout, checksum and mode carry over to the copy,
    // and whether it folds is decided anew for the copy's chunk shape, unless the source shows
    // folding off (a chunk the rule folds, stored unfolded).
    const chunk_parameters copied = from_cd_values(count, values);
    chunk.layout = copied.layout;
    chunk.checksum = copied.checksum;
    chunk.mode = copied.mode;
    const bool folds = copied.folded_rank || folded_rank(copied.shape) == copied.shape.rank();
    return folded_by_rule(chunk, folds);
  }
  const std::optional<codec_mode> mode =
      count >= 2 ? codec_mode_of_code(values[1]) : codec_mode::ndzip;
  if (count > max_user_options || values[0] > 1 || !mode || (count == 3 && values[2] > 1))
    throw std::runtime_error(
        "ndzip HDF5 filter: the filter was added with " + std::to_string(count) + " value(s) (" +
        std::to_string(values[0]) + (count > 1 ? ", ...)" : ")") +
        "; it takes none, one (checksum: 1 on, the default, or 0 off), two (checksum, then the "
        "codec mode's code: " +
        codec_mode_codes() +
        "; ndzip the default), three (checksum, mode, then folding: 1 small chunks folded, the "
        "default, or 0 never), or the " +
        std::to_string(min_stored_cd_values) + " or more parameters of an ndzip dataset");
  chunk.checksum = values[0] == 1;
  chunk.mode = *mode;
  return folded_by_rule(chunk, count < 3 || values[2] == 1);
}

void check_representable(const chunk_parameters& chunk) {
  try {
    check_grid_representable(chunk.coded_shape());
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("ndzip HDF5 filter: chunk too large: ") + e.what());
  }
}

}  // namespace ndzip::hdf5_plugin
