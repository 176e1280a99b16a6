// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip (and unndzip, a link to it): command-line front end of ndzip-kokkos. Parses the command
// line, runs it on every operand and turns every failure into "ndzip: error: ..." on standard
// error and a non-zero exit status (1: data or I/O error, 2: usage error).

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include <ndzip/backends.hpp>
#include <ndzip/version.hpp>

#include "codec.hpp"
#include "commands.hpp"
#include "options.hpp"

namespace ndzip_cli {
namespace {

int run(const options& opts) {
  if (!opts.help.empty()) {
    std::fputs(opts.help.c_str(), stdout);
  } else if (opts.version) {
    std::printf("ndzip %s\n", ndzip::version_string);
    std::printf("backends: %s\n", backend_list().c_str());
    std::printf("host instruction set: %s\n", ndzip::host_instruction_set());
  } else if (opts.list_backends) {
    for (const auto& name : backend_names()) std::printf("%s\n", name.c_str());
  } else {
    return run_operands(opts);
  }
  return 0;
}

void print_error(const std::string& what) {
  std::fprintf(stderr, "ndzip: error: %s\n", what.c_str());
}

// Everything main() does; Kokkos, where a command needs it, lives and dies inside run().
int run_main(int argc, const char* const* argv) {
  try {
    const int status = run(parse_command_line(argc, argv));
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      print_error(std::string("cannot write standard output: ") +
                  (errno ? std::strerror(errno) : "write error"));
      return 1;
    }
    return status;
  } catch (const usage_error& e) {
    print_error(e.what());
    const command cmd = argc > 1 ? command_from_name(argv[1]) : command::none;
    const std::string topic = cmd == command::none ? "" : std::string(" ") + command_name(cmd);
    std::fprintf(stderr, "Try 'ndzip%s --help' for more information.\n", topic.c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    print_error("out of memory");
    return 1;
  } catch (const std::exception& e) {
    print_error(codec_message(e));  // messages from the library start with "ndzip: "
    return 1;
  }
}

}  // namespace
}  // namespace ndzip_cli

int main(int argc, char** argv) {
  // A write beyond RLIMIT_FSIZE (ulimit -f) would otherwise kill the tool with SIGXFSZ in the
  // middle of its temporary file; ignored, the write fails with EFBIG, which is reported and
  // cleaned up after like any other write error.
  ::signal(SIGXFSZ, SIG_IGN);
  return ndzip_cli::run_main(argc, argv);
}
