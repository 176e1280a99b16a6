// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the tool knows about an array: its shape (the library's run-time shape: element type and
// extents, slowest first) and the codec mode of its stream.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ndzip/dynamic.hpp>
#include <ndzip/folding.hpp>

namespace ndzip_cli {

using ndzip::element_type;

struct array_desc {
  array_desc() = default;
  array_desc(ndzip::array_shape array_shape, ndzip::codec_mode stream_mode)
      : shape(std::move(array_shape)), mode(stream_mode) {}

  ndzip::array_shape shape;
  ndzip::codec_mode mode = ndzip::codec_mode::ndzip;  // how its stream is coded
  // The rank of the grid its stream codes where that is folded (a frame of version 3;
  // ndzip/folding.hpp); none: the shape as it is.
  std::optional<int> folded_rank;

  // The grid its stream codes.
  ndzip::array_shape coded_shape() const {
    return folded_rank ? ndzip::folded_shape(shape, *folded_rank) : shape;
  }
};

// What the command line says of an array: -t, -n and --mode (--high-ratio), each optional.
struct array_request {
  std::optional<element_type> type;
  std::vector<std::uint64_t> extents;  // slowest first; empty: not given
  std::optional<ndzip::codec_mode> mode;
};

// Throws std::runtime_error unless `array`, which the input `name` holds (a frame, a .npy file),
// has the mode, type and extents of `request`, those that it gives: a contradiction is an error,
// never settled silently for either side.
void check_request_matches(const array_request& request, const std::string& name,
                           const array_desc& array);

// a * b, or nothing if the product does not fit in std::size_t.
std::optional<std::size_t> checked_mul(std::uint64_t a, std::uint64_t b);

}  // namespace ndzip_cli
