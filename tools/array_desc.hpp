// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the tool knows about an array: its shape (the library's run-time shape: element type and
// extents, slowest first) and the codec mode of its stream.

#include <cstddef>
#include <cstdint>
#include <optional>

#include <ndzip/dynamic.hpp>

namespace ndzip_cli {

using ndzip::element_type;

struct array_desc {
  ndzip::array_shape shape;
  ndzip::codec_mode mode = ndzip::codec_mode::ndzip;  // how its stream is coded
};

// a * b, or nothing if the product does not fit in std::size_t.
std::optional<std::size_t> checked_mul(std::uint64_t a, std::uint64_t b);

}  // namespace ndzip_cli
