// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "array_desc.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace ndzip_cli {

void check_request_matches(const array_request& request, const std::string& name,
                           const array_desc& array) {
  const std::string holds =
      " does not match " + name + ", which holds a " + array.shape.to_string() + " array";
  if (request.mode && *request.mode != array.mode)
    throw std::runtime_error(std::string("--mode ") + ndzip::codec_mode_name(*request.mode) +
                             holds + " in the " + ndzip::codec_mode_name(array.mode) + " mode");
  if (request.type && *request.type != array.shape.type())
    throw std::runtime_error(std::string("-t ") + ndzip::element_type_name(*request.type) + holds);
  const auto& given = request.extents;
  const bool extents_match =
      given.empty() || (given.size() == static_cast<std::size_t>(array.shape.rank()) &&
                        std::equal(given.begin(), given.end(), array.shape.extents().begin()));
  if (!extents_match) {
    std::string text;
    for (const auto n : given) text += (text.empty() ? "" : "x") + std::to_string(n);
    throw std::runtime_error("-n " + text + holds);
  }
}

std::optional<std::size_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t max = std::numeric_limits<std::size_t>::max();
  if (a > max || b > max || (a != 0 && b > max / a)) return std::nullopt;
  return static_cast<std::size_t>(a * b);
}

}  // namespace ndzip_cli
