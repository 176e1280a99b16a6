// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The command line: what it may contain (parse_command_line) and how it is explained (help_text).

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "array_desc.hpp"

namespace ndzip_cli {

// A command line the tool cannot accept (exit status 2).
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class command { none, compress, decompress, info };

struct options {
  command cmd = command::none;
  bool help = false;                   // -h/--help: help on `cmd` (or the overview for none)
  bool version = false;                // --version
  bool list_backends = false;          // --list-backends
  std::optional<element_type> type;    // -t
  std::vector<std::uint64_t> extents;  // -n, slowest first; empty if not given
  bool raw = false;                    // --raw
  bool force = false;                  // -f/--force
  std::string backend;                 // -b, else the default backend
  std::vector<std::string> files;      // IN OUT, or FILE for info

  // The array that -t and -n describe (both must have been given).
  array_desc array() const;
};

// Parses and checks argv; throws usage_error saying what is wrong. A command line that asks for
// help is accepted whatever else it contains.
options parse_command_line(int argc, const char* const* argv);

// The text `ndzip --help` (for none) or `ndzip COMMAND --help` prints.
std::string help_text(command cmd);

// "compress", "decompress", "info", or "" for none.
const char* command_name(command cmd);
// The command called `name`, or none.
command command_from_name(std::string_view name);

}  // namespace ndzip_cli
