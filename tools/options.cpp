// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "options.hpp"

#include <algorithm>
#include <string_view>

#include "codec.hpp"

namespace ndzip_cli {

namespace {

bool is_unsigned_number(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::uint64_t parse_extent(std::string_view s) {
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

// Walks the arguments of one command.
class argument_reader {
 public:
  argument_reader(int argc, const char* const* argv, int first)
      : m_argv(argv), m_argc(argc), m_next(first) {}

  bool done() const { return m_next >= m_argc; }
  std::string_view peek() const { return m_argv[m_next]; }
  std::string_view take() { return m_argv[m_next++]; }

  // The value of option `name`: the rest of "--name=VALUE", or the next argument.
  std::string_view value_of(std::string_view name, std::optional<std::string_view> inline_value) {
    if (inline_value) return *inline_value;
    if (done()) throw usage_error("option " + std::string(name) + " needs a value");
    return take();
  }

 private:
  const char* const* m_argv;
  int m_argc;
  int m_next;
};

void parse_command_options(argument_reader& args, options& opts) {
  const bool codec_command = opts.cmd != command::info;
  bool only_files = false;
  bool backend_given = false;
  while (!args.done()) {
    const std::string_view arg = args.take();
    if (only_files || arg == "-" || arg.empty() || arg[0] != '-') {
      opts.files.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      only_files = true;
      continue;
    }
    // "--name=value" for the long options that take one value.
    std::string_view name = arg;
    std::optional<std::string_view> inline_value;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    }
    const bool known = name == "-t" || name == "--type" || name == "-n" || name == "--extents" ||
                       name == "--raw" || name == "-f" || name == "--force" || name == "-b" ||
                       name == "--backend";
    if (!known) throw usage_error("unknown option '" + std::string(arg) + "'");
    if (!codec_command)
      throw usage_error("option " + std::string(name) + " does not apply to '" +
                        command_name(opts.cmd) + "'");
    const bool takes_value =
        name == "-t" || name == "--type" || name == "-b" || name == "--backend";
    if (inline_value && !takes_value)
      throw usage_error("option " + std::string(name) + " takes no '=' value");

    auto once = [&](bool given) {
      if (given) throw usage_error("option " + std::string(name) + " given twice");
    };
    if (name == "-t" || name == "--type") {
      once(opts.type.has_value());
      const std::string_view value = args.value_of(name, inline_value);
      opts.type = parse_type_name(value);
      if (!opts.type)
        throw usage_error("unknown element type '" + std::string(value) +
                          "' (use float or double)");
    } else if (name == "-n" || name == "--extents") {
      once(!opts.extents.empty());
      while (opts.extents.size() < 3 && !args.done() && is_unsigned_number(args.peek()))
        opts.extents.push_back(parse_extent(args.take()));
      if (opts.extents.empty())
        throw usage_error("option " + std::string(name) +
                          " needs 1 to 3 extents, slowest dimension first" +
                          (args.done() ? "" : ", got '" + std::string(args.peek()) + "'"));
    } else if (name == "--raw") {
      once(opts.raw);
      opts.raw = true;
    } else if (name == "-f" || name == "--force") {
      once(opts.force);
      opts.force = true;
    } else {  // -b, --backend
      once(backend_given);
      backend_given = true;
      opts.backend = args.value_of(name, inline_value);
      const auto names = backend_names();
      if (std::find(names.begin(), names.end(), opts.backend) == names.end())
        throw usage_error("unknown backend '" + opts.backend +
                          "' (this build has: " + backend_list() + ")");
    }
  }
}

void check_command(options& opts) {
  const std::size_t want_files = opts.cmd == command::info ? 1 : 2;
  if (opts.files.size() != want_files) {
    const char* what = opts.cmd == command::info ? "one FILE" : "IN and OUT";
    throw usage_error(std::string("'") + command_name(opts.cmd) + "' needs " + what + ", got " +
                      std::to_string(opts.files.size()) + " file name" +
                      (opts.files.size() == 1 ? "" : "s"));
  }
  if (opts.backend.empty()) opts.backend = backend_names().front();
  const bool need_array =
      opts.cmd == command::compress || (opts.cmd == command::decompress && opts.raw);
  if (need_array && (!opts.type || opts.extents.empty()))
    throw usage_error(opts.cmd == command::compress
                          ? "'compress' needs the element type (-t) and the extents (-n)"
                          : "'decompress --raw' needs the element type (-t) and the extents (-n): "
                            "a raw stream does not record them");
}

}  // namespace

array_desc options::array() const {
  array_desc a;
  a.type = type.value();
  a.dims = static_cast<int>(extents.size());
  std::copy(extents.begin(), extents.end(), a.extents.begin());
  return a;
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
  if (argc < 2) throw usage_error("no command given");
  const std::string_view first = argv[1];
  // Help wins over everything else on the line (up to a "--").
  for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i)
    if (std::string_view(argv[i]) == "-h" || std::string_view(argv[i]) == "--help")
      opts.help = true;

  opts.cmd = command_from_name(first);
  if (opts.cmd != command::none) {
    if (opts.help) return opts;
    argument_reader args(argc, argv, 2);
    parse_command_options(args, opts);
    check_command(opts);
    return opts;
  }
  if (opts.help) return opts;
  if (first == "-V" || first == "--version")
    opts.version = true;
  else if (first == "--list-backends")
    opts.list_backends = true;
  else if (!first.empty() && first[0] == '-')
    throw usage_error("unknown option '" + std::string(first) + "'");
  else
    throw usage_error("unknown command '" + std::string(first) + "'");
  if (argc > 2) throw usage_error("unexpected argument '" + std::string(argv[2]) + "'");
  return opts;
}

std::string help_text(command cmd) {
  // Lines of the help texts stay within 79 columns.
  const std::string backends = backend_list();
  const std::string default_backend = backend_names().front();
  const std::string common_options =
      "  -b, --backend NAME  Backend to run on: " + backends + " (default: " + default_backend +
      ").\n"
      "                      openmp uses OMP_NUM_THREADS threads.\n"
      "  -f, --force         Replace OUT if it is a regular file; allow binary output\n"
      "                      to a terminal.\n"
      "  -h, --help          Show this help.\n"
      "\n"
      "IN and OUT are file names, '-' meaning standard input / standard output; they\n"
      "must not be the same file. OUT is written to a temporary file beside it and\n"
      "renamed only when complete, so a failed run leaves no OUT behind; standard\n"
      "output is written only once the whole result is known. An OUT that is a\n"
      "character device or a FIFO (such as /dev/null) is written to, never replaced.\n"
      "Exit status: 0 success, 1 data or I/O error, 2 usage error.\n";

  switch (cmd) {
    case command::compress:
      return "Usage: ndzip compress -t float|double -n N0 [N1 [N2]] [--raw]\n"
             "                      [-b BACKEND] [--force] IN OUT\n"
             "\n"
             "Compresses IN, a raw array (little-endian IEEE-754 values in C order, no\n"
             "header), into OUT.\n"
             "\n"
             "Options:\n"
             "  -t, --type TYPE     Element type: float (binary32) or double (binary64).\n"
             "                      Required.\n"
             "  -n, --extents N0 [N1 [N2]]\n"
             "                      The 1 to 3 extents of the array, slowest dimension\n"
             "                      first (the last varies fastest). Required. IN must\n"
             "                      hold exactly N0*N1*N2*sizeof(TYPE) bytes.\n"
             "  --raw               Write the bare ndzip stream (as upstream ndzip does)\n"
             "                      instead of a self-describing frame; decompressing it\n"
             "                      then needs --raw, -t and -n.\n" +
             common_options;
    case command::decompress:
      return "Usage: ndzip decompress [-t float|double -n N0 [N1 [N2]]] [--raw]\n"
             "                        [-b BACKEND] [--force] IN OUT\n"
             "\n"
             "Decompresses IN into OUT, a raw array (little-endian IEEE-754 values in C\n"
             "order). A framed IN (from 'ndzip compress' without --raw) records its element\n"
             "type, extents, stream length and checksum; the checksum is verified before\n"
             "decoding.\n"
             "\n"
             "Options:\n"
             "  -t, --type TYPE     Element type: float or double. Needed with --raw;\n"
             "                      otherwise, if given, it must match the frame.\n"
             "  -n, --extents N0 [N1 [N2]]\n"
             "                      Extents, slowest dimension first. Needed with --raw;\n"
             "                      otherwise, if given, they must match the frame.\n"
             "  --raw               IN is a bare ndzip stream. It must be exactly one\n"
             "                      stream of the given array: trailing bytes are an error.\n" +
             common_options;
    case command::info:
      return "Usage: ndzip info FILE\n"
             "\n"
             "Describes a framed file written by 'ndzip compress': element type, extents,\n"
             "sizes, checksum status and compression ratio (array bytes / stream bytes).\n"
             "For a damaged file it says what is wrong and exits with status 1. FILE '-'\n"
             "is standard input. Raw streams (--raw) record nothing to describe.\n"
             "\n"
             "Options:\n"
             "  -h, --help          Show this help.\n";
    case command::none:
      break;
  }
  return "Usage: ndzip COMMAND [OPTIONS] ...\n"
         "       ndzip --help | --version | --list-backends\n"
         "\n"
         "Lossless compression of dense float and double arrays in the ndzip stream\n"
         "format (ndzip-kokkos).\n"
         "\n"
         "Commands:\n"
         "  compress    Compress a raw array: compress -t TYPE -n N0 [N1 [N2]] IN OUT\n"
         "  decompress  Restore the raw array: decompress IN OUT\n"
         "  info        Describe and check a compressed file: info FILE\n"
         "Run 'ndzip COMMAND --help' for the options of a command.\n"
         "\n"
         "Options:\n"
         "  -h, --help          Show this help.\n"
         "  -V, --version       Show the version and the enabled backends.\n"
         "  --list-backends     List the enabled backends, one per line, default first.\n"
         "\n"
         "Backends in this build: " +
         backends + " (default: " + default_backend +
         ").\n"
         "\n"
         "Compressed files are framed by default: a 48-byte header (magic \"NDZK\",\n"
         "version, type, extents, stream length, XXH3-64 checksum of header and stream)\n"
         "followed by the ndzip stream. With --raw the bare stream is read or written,\n"
         "compatible with upstream ndzip.\n"
         "\n"
         "Exit status: 0 success, 1 data or I/O error, 2 usage error.\n";
}

}  // namespace ndzip_cli
