// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Folding: coding a grid of rank 2 or 3 as the grid of lower rank its slowest dimensions merge
// into. The ndzip stream codes whole hypercubes (4096 elements: 4096, 64x64 or 16x16x16) and
// stores every other element raw (the border), so a chunk with a dimension shorter than the
// side has no hypercube at all: the (5, 90, 180) chunks xarray picks for a Zarr array store
// 100 % of raw; the same memory coded as (81000) has 96 % of its elements in hypercubes.
// The values' memory is the same (C order), so folding costs nothing; a frame, an HDF5 chunk's
// parameters and the numcodecs codec record the grid coded (docs/FORMAT.md, "Folding"), a raw
// stream is the stream of the grid the caller gives.
//
//   const ndzip::array_shape chunk(ndzip::element_type::float32, {5, 90, 180});
//   ndzip::coded_shape(chunk, ndzip::folding::automatic);  // float 81000
//
// The rule (measured on the corpus with the chunk shapes Zarr, h5py and dask pick by default:
// docs/PERFORMANCE-HISTORY.md, "Small chunks folded"): a grid with at least 3/4 of its elements
// in whole hypercubes is coded as it is; any other, as the folding (itself included) with the
// most elements in whole hypercubes, the higher rank where two have as many. Rank 1 is never
// folded.

#include <cstdint>
#include <optional>
#include <string_view>

#include "ndzip/array_shape.hpp"
#include "ndzip/codec_mode.hpp"
#include "ndzip/export.hpp"
#include "ndzip/frame_format.hpp"

namespace ndzip {

// How a frame (or an HDF5 chunk) codes its array: as given, or folded by the rule above.
enum class folding : std::uint8_t { none, automatic };

// "none" / "automatic", and back (nothing for another name): as the CLI and Python spell them.
NDZIP_EXPORT const char* folding_name(folding f);
NDZIP_EXPORT std::optional<folding> parse_folding(std::string_view name);

// The side of a hypercube of this rank: 4096, 64 or 16 (std::invalid_argument for another rank).
NDZIP_EXPORT std::uint64_t hypercube_side(int rank);

// The elements of `shape` that lie in whole hypercubes; the others are the border.
NDZIP_EXPORT std::uint64_t elements_in_hypercubes(const array_shape& shape);

// The elements a stream of `mode` for the grid `shape` stores raw: the border in the ndzip
// stream; in the high-ratio stream, which codes the border as a 1-D array of its own, that
// array's border (fewer than 4096).
NDZIP_EXPORT std::uint64_t elements_stored_raw(const array_shape& shape, codec_mode mode);

// `shape` with its slowest dimensions merged into one, down to `rank` dimensions (1 <= rank <=
// shape.rank(), else std::invalid_argument): float 5x90x180 to rank 2 is float 450x180.
// std::overflow_error where the merged extent does not fit.
NDZIP_EXPORT array_shape folded_shape(const array_shape& shape, int rank);

// The rank the rule codes `shape` in (shape.rank() where it does not fold it).
NDZIP_EXPORT int folded_rank(const array_shape& shape);

// The grid a frame of `shape` codes: shape itself for folding::none, else folded_shape(shape,
// folded_rank(shape)).
NDZIP_EXPORT array_shape coded_shape(const array_shape& shape, folding f);

// The grid the frame `info` records its stream to code: its array folded to its coded rank.
NDZIP_EXPORT array_shape coded_shape_of(const frame_info& info);

// A chunk shape near `chunk` whose grid the rule codes with at least half of its elements in
// whole hypercubes: each extent rounded to the nearest multiple of the side (at least the
// side); where the array's extents are known (`array`, the same rank), an extent is capped
// there (taken whole where the array's is not above the side). For the warning given where
// even the best folding leaves most values in the border; the shape returned holds 4096
// elements or more wherever the array does.
NDZIP_EXPORT array_shape suggested_chunk_shape(const array_shape& chunk);
NDZIP_EXPORT array_shape suggested_chunk_shape(const array_shape& chunk, const array_shape& array);

}  // namespace ndzip
