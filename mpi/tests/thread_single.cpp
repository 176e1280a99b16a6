// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MPI initialised with MPI_Init (MPI_THREAD_SINGLE in Open MPI): every ndzip::mpi call must
// throw std::logic_error that names the thread level, before any message is sent.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <ndzip/mpi.hpp>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int provided = 0;
  MPI_Query_thread(&provided);
  int failures = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    Kokkos::View<float*> values("values", 100);
    const auto refused = [&](const char* call, auto&& f) {
      try {
        f();
        std::fprintf(stderr, "FAIL: %s under MPI_THREAD_SINGLE did not throw\n", call);
        ++failures;
      } catch (const std::logic_error& e) {
        if (std::string(e.what()).find("MPI_THREAD_FUNNELED") == std::string::npos) {
          std::fprintf(stderr, "FAIL: %s: the message does not name the level: %s\n", call,
                       e.what());
          ++failures;
        }
      }
    };
    if (provided >= MPI_THREAD_FUNNELED) {
      // An MPI whose MPI_Init gives more than SINGLE has nothing to refuse.
      std::printf("MPI_Init gave thread level %d: nothing to check\n", provided);
    } else {
      const Kokkos::DefaultExecutionSpace exec;
      refused("send", [&] { ndzip::mpi::send(exec, values, 0, 1, MPI_COMM_WORLD); });
      refused("irecv", [&] { ndzip::mpi::irecv(exec, values, 0, 1, MPI_COMM_WORLD); });
    }
  }
  MPI_Finalize();
  if (failures == 0) std::printf("ndzip::mpi refuses MPI_THREAD_SINGLE: ok\n");
  return failures == 0 ? 0 : 1;
}
