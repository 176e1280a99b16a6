// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the filter needs to know about a chunk, and how it is kept in the filter's cd_values
// (the parameters HDF5 stores with the dataset). The filter callback only sees the chunk's
// bytes, so set_local() records the element type, the chunk extents and the chunk layout here
// when the dataset is created, and every later read and write takes them from the file.
//
// cd_values, layout version 3 (the default since issue 62; 5 to 7 values):
//   [0]           layout version: 3
//   [1]           flags: bit 0 set = each chunk's stream is checksummed (the default); bits 1
//                 to 3: the codec mode's code (0 the ndzip stream, 1 the high-ratio stream,
//                 docs/FORMAT.md); bits 4 and 5: the rank the chunk is coded in where it is
//                 folded (1 or 2, below the chunk's rank; ndzip/folding.hpp), 0 where it is
//                 coded as it is; other bits 0 (a filter that predates a bit refuses the
//                 dataset)
//   [2]           element type: 1 = float (IEEE 754 binary32), 2 = double (binary64), both in
//                 the byte order of the machine that writes them, which must be little endian
//   [3]           rank: 1, 2 or 3
//   [4, 4 + rank) chunk extents, slowest dimension first (HDF5's and ndzip's order)
// cd_values, layout version 2 (written after 0.1.0 until issue 62; read, and kept when a
// dataset is copied): the same values with [0] = 2 and the flags' bits from 1 the mode's code
// (never folded).
// cd_values, layout version 1 (written by 0.1.0; read, and kept when a dataset is copied):
//   [0] = 1, then the element type, the rank and the extents as [2..] above; no flags.
//
// The stored chunk (docs/FORMAT.md, "HDF5 chunks"; chunk_checksum.hpp): in layout 3 an 8-byte
// checksum of the cd_values and, with the checksum flag, of the stream, followed by the stream;
// in layout 2 with the checksum flag, the checksum of the stream alone, then the stream; without
// it (and in layout 1), the bare stream. The stream is the ndzip stream, or with the high-ratio
// flag the high-ratio stream.
//
// What a user passes when adding the filter (h5py's compression_opts, h5repack's UD=):
//   nothing                    layout 3, checksummed, ndzip streams
//   (checksum,)                layout 3, the streams checksummed if checksum is 1, not if 0
//   (checksum, mode)           and the streams of the codec mode of that code (0 ndzip, the
//                              default; 1 high_ratio)
//   (checksum, mode, folding)  and chunks folded by the rule of ndzip/folding.hpp if folding
//                              is 1 (the default), never if 0
// A list of 4 or more values is the parameters of an existing dataset (h5repack and H5Pcopy
// hand those to the new dataset): its layout, checksum and mode are kept, the extents (and in
// layout 3 the folding, by the rule, for the new chunk shape) recomputed.

#include <cstddef>
#include <optional>
#include <vector>

#include "ndzip/codec_mode.hpp"
#include "ndzip/dynamic.hpp"
#include "ndzip/folding.hpp"

namespace ndzip::hdf5_plugin {

struct chunk_parameters {
  // cd_values layout version, 1 to 3. New datasets get cd_values_layout (with_requested_layout);
  // a default-constructed chunk is layout 2, in which fuzz/seeds.cpp writes its checksummed seeds.
  unsigned layout = 2;
  bool checksum = true;  // layouts 2 and 3: each chunk's checksum covers its stream
  codec_mode mode = codec_mode::ndzip;  // layouts 2 and 3: the mode of the chunks' streams
  // Element type (its codes are cd_values' [2]) and chunk extents; to_string() for messages.
  array_shape shape;
  // Layout 3: the rank the chunk's streams code where they fold it; none: as it is.
  std::optional<int> folded_rank;

  // The grid each chunk's stream codes.
  array_shape coded_shape() const {
    return folded_rank ? folded_shape(shape, *folded_rank) : shape;
  }
};

inline constexpr unsigned cd_values_layout = 3;  // what new datasets get
inline constexpr unsigned checksum_flag = 1;
inline constexpr unsigned mode_shift = 1;  // layout 3: bits 1-3 hold the mode's code, layout
inline constexpr unsigned mode_mask = 7;   // 2 every bit from 1
inline constexpr unsigned folded_rank_shift = 4;  // layout 3: bits 4-5
inline constexpr unsigned folded_rank_mask = 3;
inline constexpr std::size_t max_cd_values = 7;
inline constexpr std::size_t max_user_options = 3;
inline constexpr std::size_t min_stored_cd_values = 4;  // layout 1 of a 1-D chunk

// The cd_values of `chunk`, in its layout.
std::vector<unsigned> to_cd_values(const chunk_parameters& chunk);

// The chunk described by cd_values read from a file (so untrusted): throws std::runtime_error
// naming what is wrong if they are not a layout-1, -2 or -3 description of a chunk ndzip can
// compress.
chunk_parameters from_cd_values(std::size_t count, const unsigned* values);

// The layout a new dataset gets from the values its filter was added with (user options or a
// copied dataset's parameters, see above): `chunk`'s type and extents with the layout, checksum,
// mode and (layout 3) folding those values ask for. Throws std::runtime_error naming an option it does not know.
chunk_parameters with_requested_layout(chunk_parameters chunk, std::size_t count,
                                       const unsigned* values);

// Throws std::runtime_error unless the ndzip format can hold a grid of the chunk's extents.
void check_representable(const chunk_parameters& chunk);

}  // namespace ndzip::hdf5_plugin
