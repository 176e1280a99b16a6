// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The CLI11 check of the benchmark binaries' counts (ndzip-bench, ndzip-demo).

#include <string>

#include <CLI/CLI.hpp>

namespace ndzip_perf {

// A positive count, read as decimal digits: CLI11 reads integers with strtoull base 0, where
// "010" would be 8, so leading zeros are dropped before that.
inline const CLI::Validator positive_decimal(
    [](std::string& value) -> std::string {
      const auto first = value.find_first_not_of('0');
      if (value.find_first_not_of("0123456789") != std::string::npos || first == std::string::npos)
        return "needs a positive number, got '" + value + "'";
      value.erase(0, first);
      return {};
    },
    "POSITIVE");

}  // namespace ndzip_perf
