// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "array_desc.hpp"

#include <limits>

namespace ndzip_cli {

std::optional<std::size_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t max = std::numeric_limits<std::size_t>::max();
  if (a > max || b > max || (a != 0 && b > max / a)) return std::nullopt;
  return static_cast<std::size_t>(a * b);
}

}  // namespace ndzip_cli
