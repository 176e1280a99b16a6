// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The command line (parsed with CLI11): what it may contain and how it is explained. Two forms:
//   ndzip [-d|-l] [OPTIONS] [FILE...]     zstd's way: FILE -> FILE.ndz and back, -o, -c, ...
//   ndzip compress|decompress IN OUT      the first releases' way, unchanged
// `ndzip compress|decompress|info` with other than two operands (or with -o/-c) take files the
// first way; `unndzip` is `ndzip -d`.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "array_desc.hpp"
#include "region.hpp"

namespace ndzip_cli {

// A command line the tool cannot accept (exit status 2).
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class command { none, compress, decompress, info };

// What to do with each operand.
enum class operation { compress, decompress, list };

// When compress writes a chunked frame (version 4) rather than one of versions 1-3 (--chunked).
enum class chunking { automatic, always, never };

struct options {
  command cmd = command::none;  // the subcommand named, if any
  operation op = operation::compress;
  bool in_out = false;         // `compress|decompress IN OUT`: files = {IN, OUT}
  std::string help;            // non-empty: print this, do nothing else
  bool version = false;        // -V/--version
  bool list_backends = false;  // --list-backends

  std::optional<element_type> type;    // -t
  std::vector<std::uint64_t> extents;  // -n, slowest first; empty if not given
  bool raw = false;                    // --raw
  // --mode, --high-ratio; not given: ndzip to compress and for --raw, the frame's otherwise.
  std::optional<ndzip::codec_mode> mode;
  ndzip::folding folding = ndzip::folding::automatic;  // --folding, frames only
  chunking chunked = chunking::automatic;              // --chunked
  std::optional<std::uint64_t> slab_rows;              // --slab-rows: a chunked frame of these
  bool force = false;                  // -f/--force
  bool to_stdout = false;              // -c/--stdout
  bool remove_input = false;           // --rm (the input is kept by default, -k)
  bool strict = false;                 // --strict: shape warnings are errors
  bool progress = true;                // --no-progress turns the progress bar off
  int verbosity = 1;                   // 0 with -q, 2 with -v
  std::optional<int> threads;          // -T: host threads (0: one per core)
  std::optional<std::string> output;   // -o
  std::string backend;                 // -b, else the default backend
  std::vector<std::string> files;      // operands; "-" is standard input/output

  bool npy_output = false;             // --npy: a .npy file out (also for an OUT named *.npy)
  // --region: decompress only this box (as spelled, and parsed; fewer axes: the rest whole).
  std::optional<std::string> region_text;
  std::vector<region_axis> region;

  // -t, -n and --mode, as given.
  array_request request() const { return {type, extents, mode}; }
  // The array that -t, -n and --mode describe (-t and -n must have been given: a raw stream).
  array_desc array() const;
};

// Parses and checks argv; throws usage_error saying what is wrong. A command line that asks for
// help is accepted whatever else it contains. Called as `unndzip` (argv[0]), it decompresses.
options parse_command_line(int argc, const char* const* argv);

// "compress", "decompress", "info", or "" for none.
const char* command_name(command cmd);
// The command called `name`, or none.
command command_from_name(std::string_view name);

// The extents of "2161x4320" or "2161X4320" (what -n holds once "-n 2161 4320" is joined),
// slowest first.
std::vector<std::uint64_t> parse_extents(const std::string& text);

// The axes of --region "START:STOP,START:STOP" (each also ":", "START:", ":STOP" or "K"),
// slowest first; throws usage_error for another spelling (negative indices and steps included)
// or more than 3 axes.
std::vector<region_axis> parse_region(const std::string& text);

}  // namespace ndzip_cli
