// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The CLI11 checks of the benchmark binaries' numbers (ndzip-bench, ndzip-demo,
// ndzip-mpi-bench): counts and real quantities, refused with a message that says what is allowed.

#include <cmath>
#include <cstdlib>
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

// A finite real number above 0, or (`zero_allowed`) at least 0, the whole value as strtod reads
// it: CLI::PositiveNumber lets NaN through and words its refusal of 0 as a range ("Value 0 not in
// range 0.000000 to 1.797e308").
inline CLI::Validator finite_number(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& value) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(value.c_str(), &end);
        const bool number = !value.empty() && *end == '\0' && std::isfinite(x);
        if (!number || x < 0 || (x == 0 && !zero_allowed))
          return std::string(zero_allowed ? "needs a finite number of 0 or more"
                                          : "needs a finite number above 0") +
                 ", got '" + value + "'";
        return {};
      },
      zero_allowed ? "NUMBER>=0" : "NUMBER>0");
}

inline const CLI::Validator positive_number = finite_number(false);
inline const CLI::Validator non_negative_number = finite_number(true);

}  // namespace ndzip_perf
