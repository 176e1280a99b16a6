// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// From an element type and a dimensionality known only at run time (a frame header, a command
// line) to the compile-time <T, Dims> that the codec's templates take. Internal: used by the
// frame code, the command-line tool and the fuzz targets.

#include <stdexcept>
#include <string>
#include <type_traits>

#include "ndzip/frame_format.hpp"

namespace ndzip::detail {

template <class T>
struct type_tag {
  using type = T;
};

// Returns f(type_tag<T>{}, std::integral_constant<int, Dims>{}) for T float or double and Dims
// 1 to 3; other dimensionalities are a caller's bug (checked before).
template <class F>
decltype(auto) with_array_type(element_type type, int dims, F&& f) {
  auto with_dims = [&](auto tag) -> decltype(auto) {
    switch (dims) {
      case 1:
        return f(tag, std::integral_constant<int, 1>{});
      case 2:
        return f(tag, std::integral_constant<int, 2>{});
      case 3:
        return f(tag, std::integral_constant<int, 3>{});
      default:
        throw std::logic_error("ndzip: an array of " + std::to_string(dims) + " dimensions");
    }
  };
  return type == element_type::float32 ? with_dims(type_tag<float>{})
                                       : with_dims(type_tag<double>{});
}

}  // namespace ndzip::detail
