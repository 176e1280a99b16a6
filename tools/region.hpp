// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// --region: the box of an array that `ndzip -d --region START:STOP[,START:STOP...]` decodes, as
// spelled (parse_region in options.hpp, usage errors) and then placed in the array a frame holds
// (resolve_region, errors naming the region and the array).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ndzip/array_shape.hpp>

namespace ndzip_cli {

// One axis of --region, slowest first: the indices start .. stop-1, or start to the axis' end.
struct region_axis {
  std::uint64_t start = 0;
  std::optional<std::uint64_t> stop;  // none: to the end of the axis
};

// A region placed in an array: its box (the array's element type, the box's extents) and first
// element.
struct region_box {
  ndzip::array_shape shape;           // the box's
  std::array<std::uint64_t, 3> start{};
};

// The box of `axes` (fewer than the array's rank: the rest whole) in `array`, the array the input
// `name` holds. Throws std::runtime_error naming the region (`spelled`, as given) and the array
// for more axes than it has, an axis outside it or an empty one.
region_box resolve_region(const std::vector<region_axis>& axes, const std::string& spelled,
                          const ndzip::array_shape& array, const std::string& name);

// "[10:11, 0:50, 0:60]", the box as Python would slice it.
std::string box_text(const region_box& box);

}  // namespace ndzip_cli
