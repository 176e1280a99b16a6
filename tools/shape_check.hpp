// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Shape sanity: extents that are wrong but multiply to the right size (swapped, or double read as
// float) still compress losslessly, only worse. So the start of the input is compressed under
// the given shape and under the likely mistakes (the same extents in another order, the other
// element type); a guess that compresses notably better draws a warning (an error with --strict).

#include <optional>
#include <string>

#include "array_desc.hpp"
#include "bytes.hpp"

namespace ndzip_cli {

struct shape_doubt {
  array_desc given, better;
  double given_ratio = 0, better_ratio = 0;  // stream bytes / array bytes on the sample
};

// The guess that compresses the sample smallest, if it beats `array` by 5 % of its stream and 3 %
// of the sample's bytes;
// nothing if there is none. Runs on `backend` inside a
// backend_session; `values` are the first bytes of the array's values, at least
// min(shape_check_bytes(), array.shape.byte_size()) of them (a guess whose sample is longer than
// `values` is not tried).
std::optional<shape_doubt> doubt_shape(const std::string& backend, const array_desc& array,
                                       byte_span values);

// The most bytes from the start of the values that doubt_shape reads: it may be given no more
// than min(this, the array's bytes).
std::size_t shape_check_bytes();

// "-n 4320x2161 compresses a sample to 78.7 %, -n 2161x4320 to 67.6 %".
std::string describe(const shape_doubt& doubt);

}  // namespace ndzip_cli
