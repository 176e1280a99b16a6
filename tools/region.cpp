// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "region.hpp"

#include <stdexcept>

namespace ndzip_cli {

region_box resolve_region(const std::vector<region_axis>& axes, const std::string& spelled,
                          const ndzip::array_shape& array, const std::string& name) {
  const int rank = array.rank();
  const std::string holds = name + " holds a " + std::to_string(rank) + "-D " +
                            array.to_string() + " array (slowest first)";
  if (axes.size() > static_cast<std::size_t>(rank))
    throw std::runtime_error("--region '" + spelled + "' names " +
                             std::to_string(axes.size()) + " axes, but " + holds);
  region_box box;
  std::array<std::uint64_t, 3> counts{};
  for (int a = 0; a < rank; ++a) {
    const std::uint64_t extent = array.extent(a);
    const region_axis axis = static_cast<std::size_t>(a) < axes.size() ? axes[a] : region_axis{};
    const std::uint64_t stop = axis.stop.value_or(extent);
    const std::string range = std::to_string(axis.start) + ":" +
                              (axis.stop ? std::to_string(*axis.stop) : std::string());
    if (axis.stop && stop <= axis.start)
      throw std::runtime_error("--region '" + spelled + "': axis " + std::to_string(a) + " (" +
                               range + ") is empty (STOP must exceed START); " + holds);
    if (axis.start >= extent || stop > extent)
      throw std::runtime_error("--region '" + spelled + "': axis " + std::to_string(a) + " (" +
                               range + ") lies outside the array: " + holds + ", whose axis " +
                               std::to_string(a) + " has indices 0 to " +
                               std::to_string(extent - 1));
    box.start[a] = axis.start;
    counts[a] = stop - axis.start;
  }
  box.shape = ndzip::array_shape(array.type(), rank, counts.data());
  return box;
}

std::string box_text(const region_box& box) {
  std::string text;
  for (int a = 0; a < box.shape.rank(); ++a)
    text += (a ? ", " : "[") + std::to_string(box.start[a]) + ":" +
            std::to_string(box.start[a] + box.shape.extent(a));
  return text + "]";
}

}  // namespace ndzip_cli
