// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs the doctest suite inside one Kokkos session (every backend this Kokkos was built with).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <optional>
#include <string_view>

namespace {

// True for doctest invocations that only print (listings, counts, help, version): those run
// without Kokkos, so that nothing Kokkos prints at start-up ends up in the output that
// doctest_discover_tests parses as test names.
bool only_prints(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.substr(0, 1) != "-") continue;
    arg.remove_prefix(arg.substr(0, 2) == "--" ? 2 : 1);
    if (arg.substr(0, 3) == "dt-") arg.remove_prefix(3);
    arg = arg.substr(0, arg.find('='));
    for (std::string_view option :
         {"list-test-cases", "ltc", "list-test-suites", "lts", "list-reporters", "lr", "count", "c",
          "help", "h", "?", "version", "v"})
      if (arg == option) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Kokkos::ScopeGuard> kokkos;
  if (!only_prints(argc, argv)) kokkos.emplace(argc, argv);
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
