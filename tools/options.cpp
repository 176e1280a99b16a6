// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include <CLI/CLI.hpp>

#include "codec.hpp"

namespace ndzip_cli {

namespace {

bool is_unsigned_number(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::uint64_t parse_extent(std::string_view s) {
  if (!is_unsigned_number(s))
    throw usage_error(
        "option -n needs 1 to 3 extents, slowest dimension first (as 2161x4320 "
        "or 2161 4320), got '" +
        std::string(s) + "'");
  std::uint64_t value = 0;
  for (const char c : s) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10)
      throw usage_error("extent '" + std::string(s) + "' is too large");
    value = value * 10 + digit;
  }
  if (value == 0) throw usage_error("extents must be at least 1, got '" + std::string(s) + "'");
  return value;
}

bool is_extents_option(std::string_view arg) { return arg == "-n" || arg == "--extents"; }

// Names on the command line (types, modes, backends) are matched in any case: -b Serial, FLOAT.
std::string lowercase(std::string_view s) {
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// The element type -t names: the library's names and NumPy's (float32, f4; float64, f8), and f32
// and f64 as in file names such as dem_etopo5.f32.
std::optional<element_type> parse_type_name(std::string_view name) {
  const std::string lower = lowercase(name);
  for (const element_type type : {element_type::float32, element_type::float64}) {
    const bool single = type == element_type::float32;
    for (const char* alias : {ndzip::element_type_name(type), single ? "float32" : "float64",
                              single ? "f4" : "f8", single ? "f32" : "f64"})
      if (lower == alias) return type;
  }
  return std::nullopt;
}

// zstd's and gzip's level flags (-1 .. -19, -9): CLI11 would take one for a file name.
bool is_level_flag(std::string_view arg) {
  return arg.size() >= 2 && arg[0] == '-' && is_unsigned_number(arg.substr(1));
}

// Refuses the level flags among the operands `files` that CLI11 found before "--" in `args` (it
// takes "-9" for an operand; an option's value, as in "-o -9", stays a value).
void refuse_level_flags(const std::vector<std::string>& files,
                        const std::vector<std::string>& args) {
  const auto options_end = std::find(args.begin(), args.end(), "--");
  for (const std::string& file : files)
    if (is_level_flag(file) && std::find(args.begin(), options_end, file) != options_end)
      throw usage_error("ndzip has no compression levels ('" + file +
                        "'): the default --mode ndzip is the fastest, --mode high_ratio "
                        "compresses smaller (a file named " +
                        file + " is ./" + file + ", or goes after --)");
}

// The arguments with "-n 2161 4320" turned into "-n 2161x4320": an option with 1 to 3 values
// would take the operand after the numbers too. So, as before CLI11, -n takes the numbers that
// follow it, and a file named by digits right after them needs "--" or "./".
std::vector<std::string> join_extent_words(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    args.emplace_back(argv[i]);
    if (args.back() == "--") {
      args.insert(args.end(), argv + i + 1, argv + argc);
      break;
    }
    if (!is_extents_option(args.back())) continue;
    std::string joined;
    for (int n = 0; n < 3 && i + 1 < argc && is_unsigned_number(argv[i + 1]); ++n)
      joined += (joined.empty() ? "" : "x") + std::string(argv[++i]);
    if (!joined.empty()) args.push_back(joined);
  }
  return args;
}

// CLI11's help, with our usage lines instead of its generated one.
class help_formatter : public CLI::Formatter {
 public:
  std::map<const CLI::App*, std::string> usage;

  std::string make_usage(const CLI::App* app, std::string) const override {
    const auto it = usage.find(app);
    return it == usage.end() ? std::string() : it->second + "\n";
  }
};

// `text` broken into lines that fit beside the option names (CLI11 indents after each newline).
std::string wrapped(const std::string& text, std::size_t width = 54) {
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + '\n';
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line;
}

// What the parser writes into before it is checked.
// Values are optional: an empty one ("-o ''") is given, and refused where it means nothing.
struct raw_options {
  std::optional<std::string> type, extents, backend, output, threads, mode, folding, chunked,
      slab_rows, region;
  int quiet = 0, verbose = 0;
  bool keep = false, high_ratio = false;
};

enum class option_set { top, compress, decompress, info };

CLI::Option* add_value(CLI::App& app, const char* names, std::optional<std::string>& target,
                       const std::string& description) {
  return app.add_option_function<std::string>(
      names, [&target](const std::string& value) { target = value; }, description);
}

// The options of one form of the command line, bound to `opts` and `raw`.
void add_options(CLI::App& app, option_set set, options& opts, raw_options& raw) {
  const bool codec = set != option_set::info;
  const bool compress = set == option_set::top || set == option_set::compress;
  const bool decompress = set == option_set::top || set == option_set::decompress;
  const std::string default_mode = ndzip::codec_mode_name(ndzip::codec_mode::ndzip);
  const std::string high_ratio_mode = ndzip::codec_mode_name(ndzip::codec_mode::high_ratio);
  if (codec) {
    add_value(app, "-t,--type", raw.type,
              compress ? "Element type: float (also float32, f4, f32: binary32) or double "
                         "(float64, f8, f64: binary64), in any case. Needed to compress a raw "
                         "file (ndzip cannot tell them apart); a .npy file's header gives it."
                       : "Element type; needed with --raw, else it must match the frame.")
        ->type_name("float|double");
    add_value(app, "-n,--extents", raw.extents,
              "The 1 to 3 extents, slowest dimension first: 2161x4320, 2161X4320 or 2161 4320. "
              "Compressing, the input must hold exactly their product of values (default: "
              "1-D, the whole input; a .npy file: its header's shape, which -n must match); a "
              "shape that compresses much worse than a reshaped guess draws a warning. "
              "Decompressing: needed with --raw, else must match.")
        ->type_name("N0[xN1[xN2]]");
    app.add_flag("--raw", opts.raw,
                 "Bare ndzip stream (upstream ndzip's format, as in the reference vectors) "
                 "instead of the self-describing, checksummed frame. Warning: a bare stream has "
                 "no checksum, so damage can decode silently into other values; decompressing "
                 "it needs --raw, -t and -n.");
    add_value(app, "--mode", raw.mode,
              compress ? "Codec mode: " + default_mode +
                             " (the default: upstream ndzip's stream, the fastest) or " +
                             high_ratio_mode +
                             " (fewer bytes, slower: the border compressed too, a gray step, "
                             "Huffman-coded blocks; docs/FORMAT.md). The frame records the mode, "
                             "so decompressing needs no option; a --raw stream of the " +
                             high_ratio_mode + " mode is not the upstream format."
                       : "The mode of the --raw stream: " + default_mode + " (the default) or " +
                             high_ratio_mode +
                             ". Frames record the mode; given with a frame, it must match.")
        ->type_name("MODE");
    app.add_flag("--high-ratio", raw.high_ratio, "The same as --mode high_ratio.");
    if (compress)
      add_value(app, "--folding", raw.folding,
                "automatic (the default) or none. automatic: an array with few values in whole "
                "hypercubes (4096, 64x64 or 16x16x16 values; those outside are stored raw) is "
                "coded as the array of fewer dimensions that its slowest ones merge into, "
                "which the frame records (5x90x180 as 81000); none: always as it is, a frame "
                "older readers also read. A --raw stream always codes the array as -n gives "
                "it.")
          ->type_name("automatic|none");
    if (compress) {
      add_value(app, "--chunked", raw.chunked,
                "auto (the default), always or never. auto: an array larger than one slab of "
                "the default size (about 64 MiB of values) is written as a chunked frame "
                "(version 4: slabs of rows along the slowest dimension, each compressed, "
                "checksummed and written as it is read, so that memory holds a few slabs "
                "whatever the array's size, from a pipe too where -n gives the shape); any "
                "other as the frame of versions 1 to 3. always: a chunked frame for any array. "
                "never: one stream of the whole array, held in memory with the input (the "
                "frame readers before version 4 read).")
          ->type_name("WHEN");
      add_value(app, "--slab-rows", raw.slab_rows,
                "Write a chunked frame in slabs of N rows of the slowest dimension (1 to its "
                "extent; default: about 64 MiB of values a slab, in whole layers of hypercubes, "
                "for --chunked auto or always).")
          ->type_name("N");
    }
    add_value(app, "-o,--output", raw.output, "Write to OUT (one input only).")->type_name("OUT");
    app.add_flag("-c,--stdout", opts.to_stdout, "Write to standard output (one input only).");
    app.add_flag("-k,--keep", raw.keep, "Keep input files (the default).");
    app.add_flag("--rm", opts.remove_input, "Remove each input file once its output is complete.");
    app.add_flag("-f,--force", opts.force,
                 "Overwrite existing outputs (regular files and symbolic links); write binary "
                 "data to a terminal; compress files already ending in .ndz.");
    add_value(app, "-T,--threads", raw.threads,
              "Host threads of the openmp and threads backends (0: one per core; default: "
              "OMP_NUM_THREADS, else all; at most " +
                  std::to_string(host_thread_limit()) + ").")
        ->type_name("N");
    add_value(
        app, "-b,--backend", raw.backend,
        "Backend to run on: " + backend_list() + " (default: " + backend_names().front() + ").")
        ->type_name("NAME");
    if (compress)
      app.add_flag("--strict", opts.strict,
                   "Make the shape warning an error (nothing is written for that input).");
    if (decompress)
      app.add_flag("--npy", opts.npy_output,
                   "Decompress into a .npy file (NumPy format 1.0: the header, then the "
                   "values), which numpy.load reads; the default for an output named *.npy.");
    if (decompress)
      add_value(app, "--region", raw.region,
                "Decompress only the box START:STOP[,START:STOP...] of a frame's array: one "
                "range per axis, slowest first as -n, STOP excluded (':' the whole axis, K the "
                "index K alone, START: or :STOP to an end; axes left out are whole; no negative "
                "indices or steps). Out: the box's values in C order, raw or, for an output "
                "named *.npy or --npy, a .npy file of the box's shape. A file is mapped, and "
                "only the slabs of a chunked frame that the box touches are read and checked; "
                "a pipe is read whole first.")
          ->type_name("BOX");
    app.add_flag(
        "--no-progress", [&opts](std::int64_t) { opts.progress = false; },
        "Never show the progress bar (it shows on a terminal for inputs that take over "
        "a second).");
  }
  // Counted through callbacks, which run only for a flag given: the same counters serve the
  // top-level app and every subcommand, and bound as variables they came out 0 after a
  // top-level -q with CLI11 2.2 to 2.5 (2.1 kept them): `ndzip -q -v` was accepted there.
  app.add_flag_function(
      "-q,--quiet", [&raw](std::int64_t count) { raw.quiet += static_cast<int>(count); },
      "No summary, warnings or progress; errors only.");
  app.add_flag_function(
      "-v,--verbose", [&raw](std::int64_t count) { raw.verbose += static_cast<int>(count); },
      set == option_set::info ? "Accepted for symmetry; info is always detailed."
                              : "More detail: array, backend, timings; -l: one block per file, "
                                "as `info`.");
}

// The help's closing paragraphs, one per line, each wrapped to 79 columns by footer().
constexpr std::string_view footer_paragraphs =
    "Arrays are raw little-endian IEEE-754 values in C order without a header, or .npy files "
    "(NumPy formats 1.0-3.0, dtype '<f4' or '<f8', C order), whose header gives type and shape: "
    "x.npy compresses to x.npy.ndz, which decompresses to x.npy, header included. FILE '-' (or "
    "no FILE, when standard input is not a terminal) is standard input, and then the output "
    "goes to standard output.\n"
    "Outputs are written to a temporary file beside them and renamed only when complete: a "
    "failed or interrupted run leaves no output behind. An output that is a character device or "
    "a FIFO (such as /dev/null) is written to, never replaced. One failed input does not stop "
    "the others.\n"
    "Compressed files are framed: a 48-byte header (magic \"NDZK\", version, type, extents, "
    "stream length, XXH3-64 checksum of header and stream) followed by the ndzip stream. With "
    "--raw the bare stream is read or written, compatible with upstream ndzip, and nothing "
    "detects damage to it: keep the frame for files that are stored or sent.\n"
    "Memory: an array larger than about 64 MiB is compressed into a chunked frame a slab at a "
    "time, and such a frame is decompressed a slab at a time (from a pipe too), so that a few "
    "slabs are held whatever the array's size; a smaller array, --chunked never and --raw hold "
    "the whole array and its whole stream at once. -l lists a chunked frame's slabs from its "
    "index and slab heads without decoding them.\n"
    "Part of an array: ndzip -d --region 10 -o slice.npy field.ndz writes the slice 10 of "
    "the slowest axis of a 3-D field, a .npy file of shape (1, N1, N2); only the slabs it "
    "touches are read and checked.\n"
    "Exit status: 0 success, 1 data or I/O error (of any input), 2 usage error.";

std::string footer() {
  std::string text;
  std::string_view rest = footer_paragraphs;
  while (!rest.empty()) {
    const std::size_t end = std::min(rest.find('\n'), rest.size());
    text += (text.empty() ? "" : "\n\n") + wrapped(std::string(rest.substr(0, end)), 79);
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  return text;
}

void check_once(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    const bool repeatable = opt->check_name("-q") || opt->check_name("-v");
    if (!opt->get_positional() && !repeatable && opt->count() > 1)
      throw usage_error("option " + opt->get_name() + " given twice");
  }
}

// A usage error for what CLI11 refused, in the words of the tool's other messages.
usage_error translate(const CLI::ParseError& e, const CLI::App& top, const CLI::App* sub) {
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    const auto& rest = sub ? sub->remaining() : top.remaining();
    for (const std::string& arg : rest) {
      if (arg.size() < 2 || arg[0] != '-') continue;
      const std::string name = arg.substr(0, arg.find('='));
      if (sub && top.get_option_no_throw(name))
        return usage_error("option " + name + " does not apply to '" + sub->get_name() + "'");
      return usage_error("unknown option '" + arg + "'");
    }
    return usage_error("unexpected argument '" + (rest.empty() ? "" : rest.front()) + "'");
  }
  return usage_error(e.what());
}

// The backend -b names (in any case), else the default one.
std::string chosen_backend(const std::optional<std::string>& given) {
  const auto names = backend_names();
  if (!given) return names.front();
  const auto it = std::find(names.begin(), names.end(), lowercase(*given));
  if (it == names.end())
    throw usage_error("unknown backend '" + *given + "' (this build has: " + backend_list() + ")");
  return *it;
}

int parse_threads(const std::string& text) {
  if (!is_unsigned_number(text) || text.size() > 4)
    throw usage_error("option -T needs a number of threads (0: one per core), got '" + text + "'");
  const int count = std::stoi(text);
  if (count > host_thread_limit())
    throw usage_error("option -T: Kokkos runs at most " + std::to_string(host_thread_limit()) +
                      " host threads, got " + text);
  return count;
}

// The checks that need the whole command line.
void check_combination(options& opts, const raw_options& raw) {
  const char* const mode = opts.cmd != command::none    ? command_name(opts.cmd)
                           : opts.op == operation::list ? "--list"
                                                        : nullptr;
  auto refuse_with = [&](bool given, const char* what) {
    if (given && mode) throw usage_error(std::string(what) + " does not apply to '" + mode + "'");
  };
  if (opts.op == operation::list) {
    refuse_with(raw.type || raw.extents, "-t/-n");
    refuse_with(opts.raw, "--raw");
    refuse_with(raw.mode || raw.high_ratio, "--mode/--high-ratio");
    refuse_with(opts.to_stdout || raw.output, "-o/-c");
    refuse_with(opts.remove_input, "--rm");
    refuse_with(opts.strict, "--strict");
    refuse_with(opts.npy_output, "--npy");
    refuse_with(raw.region.has_value(), "--region");
  }
  if (raw.chunked || raw.slab_rows) {
    const std::string what = raw.slab_rows ? "--slab-rows" : "--chunked";
    if (opts.op != operation::compress) throw usage_error(what + " applies to compression only");
    if (opts.raw)
      throw usage_error(what + " applies to frames: a --raw stream is one stream of the array");
  }
  if (raw.chunked) {
    const std::string given = lowercase(*raw.chunked);
    if (given == "auto" || given == "automatic")
      opts.chunked = chunking::automatic;
    else if (given == "always")
      opts.chunked = chunking::always;
    else if (given == "never")
      opts.chunked = chunking::never;
    else
      throw usage_error("unknown value '" + *raw.chunked + "' for --chunked (use auto, always or never)");
  }
  if (raw.slab_rows) {
    if (!is_unsigned_number(*raw.slab_rows) || raw.slab_rows->size() > 19 ||
        std::stoull(*raw.slab_rows) == 0)
      throw usage_error("option --slab-rows needs a number of rows, at least 1, got '" +
                        *raw.slab_rows + "'");
    if (opts.chunked == chunking::never)
      throw usage_error("--slab-rows and --chunked never contradict each other");
    opts.slab_rows = std::stoull(*raw.slab_rows);
  }
  if (opts.op == operation::decompress && opts.strict)
    throw usage_error("--strict applies to compression only");
  if (opts.op == operation::decompress && raw.folding)
    throw usage_error("--folding applies to compression only (a frame records its folding)");
  if (opts.raw && raw.folding)
    throw usage_error("--folding applies to frames: a --raw stream codes the array as -n gives it");
  if (raw.region) {
    if (opts.op != operation::decompress)
      throw usage_error("--region applies to decompression only (ndzip -d --region BOX FILE.ndz)");
    if (opts.raw)
      throw usage_error("--region reads frames (of versions 1 to 4), not a --raw stream");
    if (opts.remove_input)
      throw usage_error("--rm with --region: the output holds only part of the array, so the "
                        "input is kept");
    opts.region = parse_region(*raw.region);
    opts.region_text = raw.region;
  }
  if (opts.op == operation::compress && opts.npy_output)
    throw usage_error(
        "--npy applies to decompression only (a .npy input is recognised by its header)");
  if (raw.output) {
    if (raw.output->empty()) throw usage_error("option -o needs a file name");
    opts.output = raw.output;
  }
  if (opts.output && opts.to_stdout) throw usage_error("-o and -c both name the output");
  if (opts.remove_input && opts.to_stdout)
    throw usage_error("--rm with -c: the input is kept when the output goes to standard output");
  if (opts.remove_input && raw.keep) throw usage_error("-k and --rm contradict each other");
  if (raw.threads) opts.threads = parse_threads(*raw.threads);

  if (std::find(opts.files.begin(), opts.files.end(), "") != opts.files.end())
    throw usage_error("an empty file name");
  opts.in_out = (opts.cmd == command::compress || opts.cmd == command::decompress) &&
                opts.files.size() == 2 && !opts.output && !opts.to_stdout;
  if (opts.files.empty()) {
    if (::isatty(STDIN_FILENO))
      throw usage_error("no input: standard input is a terminal (name the files, or see --help)");
    opts.files.push_back("-");
  }
  if ((opts.output || opts.to_stdout) && opts.files.size() > 1)
    throw usage_error(std::string(opts.output ? "-o" : "-c") + " takes one input, but " +
                      std::to_string(opts.files.size()) + " were given");
  if (opts.op == operation::decompress && opts.raw && (!opts.type || opts.extents.empty()))
    throw usage_error(
        "decompressing --raw needs the element type (-t) and the extents (-n): a raw stream "
        "does not record them");
}

}  // namespace

std::vector<std::uint64_t> parse_extents(const std::string& text) {
  std::vector<std::uint64_t> extents;
  std::string_view rest = text;
  while (true) {
    const auto x = rest.find_first_of("xX");
    extents.push_back(parse_extent(rest.substr(0, x)));
    if (x == std::string_view::npos) break;
    rest.remove_prefix(x + 1);
  }
  if (extents.size() > 3)
    throw usage_error("option -n needs 1 to 3 extents, slowest dimension first, got " +
                      std::to_string(extents.size()));
  return extents;
}

std::vector<region_axis> parse_region(const std::string& text) {
  const std::string spelling =
      "option --region needs START:STOP for each axis, slowest first, separated by commas "
      "(':' the whole axis, K the index K alone, START: or :STOP to an end), as 10:20,0:50 or "
      "7,:,0:60";
  if (text.empty()) throw usage_error(spelling + ", got an empty region");
  // "'1-2'", or "'1-2' in '0:5,1-2'".
  const auto where = [&](std::string_view part) {
    return "'" + std::string(part) + "'" + (part == text ? "" : " in '" + text + "'");
  };
  // An index: digits, below 10^18 (so that K+1 and every sum stays in range).
  const auto index = [&](std::string_view part, std::string_view s) {
    if (s.size() > 1 && s[0] == '-' && is_unsigned_number(s.substr(1)))
      throw usage_error("option --region: negative indices are not supported (" + where(part) +
                        "); indices count from 0 at the start of each axis");
    if (!is_unsigned_number(s))
      throw usage_error(spelling + ", got " + where(part));
    if (s.size() > 18)
      throw usage_error("option --region: the index '" + std::string(s) + "' in '" + text +
                        "' is too large");
    return static_cast<std::uint64_t>(std::stoull(std::string(s)));
  };
  std::vector<region_axis> axes;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    const std::size_t colon = part.find(':');
    region_axis axis;
    if (colon == std::string_view::npos) {
      axis.start = index(part, part);
      axis.stop = axis.start + 1;
    } else {
      const std::string_view first = part.substr(0, colon), last = part.substr(colon + 1);
      if (last.find(':') != std::string_view::npos)
        throw usage_error("option --region: steps are not supported (" + where(part) +
                          "): one START:STOP per axis");
      if (!first.empty()) axis.start = index(part, first);
      if (!last.empty()) axis.stop = index(part, last);
    }
    axes.push_back(axis);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (axes.size() > static_cast<std::size_t>(ndzip::array_shape::max_rank))
    throw usage_error("option --region names " + std::to_string(axes.size()) + " axes in '" +
                      text + "'; ndzip arrays have 1 to 3");
  return axes;
}

array_desc options::array() const {
  return {ndzip::array_shape(type.value(), static_cast<int>(extents.size()), extents.data()),
          mode.value_or(ndzip::codec_mode::ndzip)};
}

const char* command_name(command cmd) {
  switch (cmd) {
    case command::compress:
      return "compress";
    case command::decompress:
      return "decompress";
    case command::info:
      return "info";
    case command::none:
      break;
  }
  return "";
}

command command_from_name(std::string_view name) {
  for (const command cmd : {command::compress, command::decompress, command::info})
    if (name == command_name(cmd)) return cmd;
  return command::none;
}

options parse_command_line(int argc, const char* const* argv) {
  options opts;
  raw_options raw;
  const std::string_view program =
      argc > 0 ? std::string_view(argv[0]).substr(std::string_view(argv[0]).rfind('/') + 1)
               : "ndzip";
  const bool unndzip = program == "unndzip";

  CLI::App top(
      "Lossless compression of dense float and double arrays (1-3-D grids) in the "
      "ndzip stream format (ndzip-kokkos).",
      "ndzip");
  auto formatter = std::make_shared<help_formatter>();
  formatter->column_width(24);
  top.formatter(formatter);
  top.footer(footer());
  // Repeated options are refused by check_once, with the tool's message.
  top.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  bool decompress = false, list = false;
  std::vector<std::string> files;
  top.add_flag("-d,--decompress", decompress, "Decompress FILE.ndz to FILE (as unndzip).");
  top.add_flag("-l,--list", list,
               "Describe and check compressed files as -d does (decoding them), one line each "
               "and a total; Ratio: file bytes / array bytes (info: in detail).");
  add_options(top, option_set::top, opts, raw);
  top.add_flag("-V,--version", opts.version, "Show the version and the enabled backends.");
  top.add_flag("--list-backends", opts.list_backends,
               "List the enabled backends, one per line, default first.");
  top.add_option("FILE", files, "Inputs; FILE compresses to FILE.ndz, -d restores FILE.")
      ->type_name("");
  formatter->usage[&top] =
      "Usage: ndzip [OPTIONS] -t float|double [-n N0xN1xN2] FILE...  (FILE -> FILE.ndz)\n"
      "       ndzip [OPTIONS] FILE.npy...                            (-> FILE.npy.ndz)\n"
      "       ndzip -d [OPTIONS] FILE.ndz...                         (FILE.ndz -> FILE)\n"
      "       ndzip -d --region START:STOP[,...] [OPTIONS] FILE.ndz  (a box of it)\n"
      "       ndzip -l [-v] FILE.ndz...\n"
      "       ndzip COMMAND ...  (compress, decompress, info; ndzip COMMAND --help)\n"
      "       ndzip --help | --version | --list-backends";

  struct sub_spec {
    command cmd;
    option_set set;
    const char* description;
    const char* usage;
  };
  const sub_spec subs[] = {
      {command::compress, option_set::compress,
       "Compress raw arrays or .npy files: IN to OUT, or each FILE to FILE.ndz.",
       "Usage: ndzip compress -t float|double [-n N0xN1xN2] [OPTIONS] IN OUT\n"
       "       ndzip compress -t float|double [-n N0xN1xN2] [OPTIONS] FILE...\n"
       "       ndzip compress [OPTIONS] FILE.npy... | IN.npy OUT\n"
       "       ndzip compress ... -o OUT FILE | -c FILE"},
      {command::decompress, option_set::decompress,
       "Restore arrays: IN to OUT, or each FILE.ndz to FILE (raw values; a .npy file with --npy "
       "or for a name ending in .npy).",
       "Usage: ndzip decompress [OPTIONS] IN OUT\n"
       "       ndzip decompress [OPTIONS] FILE.ndz...\n"
       "       ndzip decompress --region START:STOP[,...] [OPTIONS] IN OUT | FILE.ndz...\n"
       "       ndzip decompress ... -o OUT FILE.ndz | -c FILE.ndz"},
      {command::info, option_set::info,
       "Describe and check framed files as -d does (decoding them): type, extents, sizes, "
       "checksum, decoding, ratio (stream bytes / array bytes) and file ratio (file bytes / "
       "array bytes, as -l); a damaged file is reported after what could be read of it.",
       "Usage: ndzip info FILE..."},
  };
  std::vector<CLI::App*> sub_apps;
  for (const sub_spec& spec : subs) {
    CLI::App* sub = top.add_subcommand(command_name(spec.cmd), spec.description);
    add_options(*sub, spec.set, opts, raw);
    sub->add_option("FILE", files,
                    spec.cmd == command::info
                        ? "Framed files ('-': standard input)."
                        : "Operands: IN OUT (two, without -o/-c), or FILE... as for ndzip.")
        ->type_name("");
    sub->footer(footer());
    formatter->usage[sub] = spec.usage;
    sub_apps.push_back(sub);
  }

  for (CLI::App* app : {&top, sub_apps[0], sub_apps[1], sub_apps[2]})
    for (CLI::Option* opt : app->get_options()) opt->description(wrapped(opt->get_description()));
  top.description(wrapped(top.get_description(), 79));
  for (CLI::App* sub_app : sub_apps) sub_app->description(wrapped(sub_app->get_description()));

  const std::vector<std::string> args = join_extent_words(argc, argv);
  std::vector<const char*> arg_pointers{argc > 0 ? argv[0] : "ndzip"};
  for (const auto& arg : args) arg_pointers.push_back(arg.c_str());
  const CLI::App* sub = nullptr;
  try {
    top.parse(static_cast<int>(arg_pointers.size()), arg_pointers.data());
    for (std::size_t i = 0; i < sub_apps.size(); ++i)
      if (sub_apps[i]->parsed()) {
        sub = sub_apps[i];
        opts.cmd = subs[i].cmd;
      }
  } catch (const CLI::CallForHelp&) {
    opts.help = top.help();
    return opts;
  } catch (const CLI::ParseError& e) {
    for (const auto* s : sub_apps)
      if (s->parsed()) sub = s;
    throw translate(e, top, sub);
  }
  check_once(top);
  if (sub) check_once(*sub);
  refuse_level_flags(files, args);
  if (opts.version || opts.list_backends) {
    if (args.size() > 1) throw usage_error("unexpected argument besides --version/--list-backends");
    return opts;
  }

  if (decompress && list) throw usage_error("-d and -l: choose one");
  if (opts.cmd == command::compress || (opts.cmd == command::none && !decompress && !list))
    opts.op = operation::compress;
  if (opts.cmd == command::decompress || decompress || (unndzip && !list))
    opts.op = operation::decompress;
  if (opts.cmd == command::info || list) opts.op = operation::list;
  if (opts.cmd != command::none && (decompress || list))
    throw usage_error("-d and -l do not go with a COMMAND");
  if (unndzip && opts.cmd == command::compress)
    throw usage_error("unndzip decompresses; run ndzip to compress");
  opts.verbosity = raw.quiet > 0 ? 0 : raw.verbose > 0 || opts.cmd == command::info ? 2 : 1;
  if (raw.quiet > 0 && raw.verbose > 0) throw usage_error("-q and -v contradict each other");

  if (raw.type) {
    opts.type = parse_type_name(*raw.type);
    if (!opts.type)
      throw usage_error("unknown element type '" + *raw.type +
                        "' (use float, float32, f4 or double, float64, f8)");
  }
  if (raw.extents) opts.extents = parse_extents(*raw.extents);
  if (raw.mode) {
    const std::optional<ndzip::codec_mode> mode = ndzip::parse_codec_mode(lowercase(*raw.mode));
    if (!mode)
      throw usage_error("unknown codec mode '" + *raw.mode + "' (use " +
                        ndzip::codec_mode_names() + ")");
    if (raw.high_ratio && *mode != ndzip::codec_mode::high_ratio)
      throw usage_error("--high-ratio and --mode " + *raw.mode + " contradict each other");
    opts.mode = *mode;
  }
  if (raw.high_ratio) opts.mode = ndzip::codec_mode::high_ratio;
  if (raw.folding) {
    const std::optional<ndzip::folding> folding = ndzip::parse_folding(lowercase(*raw.folding));
    if (!folding)
      throw usage_error("unknown folding '" + *raw.folding + "' (use automatic or none)");
    opts.folding = *folding;
  }
  opts.backend = chosen_backend(raw.backend);
  opts.files = files;
  check_combination(opts, raw);
  return opts;
}

}  // namespace ndzip_cli
