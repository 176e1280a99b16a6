// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Requests still held when MPI_Finalize has been called (two ranks): wait() and test() throw
// std::logic_error, and destroying them neither calls MPI (which aborts the job after
// MPI_Finalize) nor waits; each says on standard error that its transfer is incomplete.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <ndzip/mpi.hpp>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int peer = rank ^ 1;
  int failures = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    const Kokkos::DefaultExecutionSpace exec;
    Kokkos::View<float*> values("values", 5000), incoming("incoming", 5000);
    // A receive nobody sends to, and a send the peer receives but this rank never waits for.
    auto never_sent = ndzip::mpi::irecv(exec, incoming, peer, 7, MPI_COMM_WORLD);
    auto never_waited = ndzip::mpi::isend(exec, values, peer, 8, MPI_COMM_WORLD);
    ndzip::mpi::recv(exec, incoming, peer, 8, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    const auto refused = [&](const char* call, auto&& f) {
      try {
        f();
        std::fprintf(stderr, "FAIL: %s after MPI_Finalize did not throw\n", call);
        ++failures;
      } catch (const std::logic_error& e) {
        if (std::string(e.what()).find("finalised") == std::string::npos) {
          std::fprintf(stderr, "FAIL: %s: %s\n", call, e.what());
          ++failures;
        }
      }
    };
    refused("wait() of a receive", [&] { never_sent.wait(); });
    refused("test() of a receive", [&] { never_sent.test(); });
    refused("wait() of a send", [&] { never_waited.wait(); });
    refused("test() of a send", [&] { never_waited.test(); });
    // Both requests are destroyed here, before Kokkos is finalised.
  }
  if (failures == 0) std::printf("requests after MPI_Finalize: ok\n");
  return failures == 0 ? 0 : 1;
}
