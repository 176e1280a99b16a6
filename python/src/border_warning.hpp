// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip.BorderWarning: said once per array shape where the grid a call codes (folded, for a
// frame, where that helps) has most of its values in the border, which the stream stores raw,
// with a chunk shape that would compress (ndzip/folding.hpp). A Zarr or HDF5 user with small
// chunks sees it at the first chunk, not never.

#include <pybind11/pybind11.h>

#include <ndzip/array_shape.hpp>
#include <ndzip/codec_mode.hpp>

namespace ndzip_python {

namespace py = pybind11;

// Makes ndzip.BorderWarning (a UserWarning) in `module`.
void define_border_warning(py::module_& module);

// Warns once per shape and mode where a stream of `mode` for `coded`, the grid a call codes
// for an array of `shape`, stores more than half of its values raw. Raises what the warning
// filters make of it (an error under -W error). With the GIL held.
void warn_if_mostly_border(const ndzip::array_shape& shape, const ndzip::array_shape& coded,
                           ndzip::codec_mode mode);

}  // namespace ndzip_python
