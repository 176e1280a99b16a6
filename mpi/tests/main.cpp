// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs the ndzip::mpi doctest suite on every rank, inside MPI (MPI_THREAD_FUNNELED) and one
// Kokkos session. Every rank runs every case; the cases pair rank r with rank r ^ 1. The exit
// status is the worst of all ranks', so that mpiexec fails if any rank failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstdio>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 1;
#ifdef NDZIP_MPI_TESTS_ANY_RANKS
  const bool runs = true;  // the collectives' cases run on any number of ranks
#else
  const bool runs = size % 2 == 0;
#endif
  if (!runs) {
    std::fprintf(stderr, "ndzip-mpi-tests: run on an even number of ranks (they pair up)\n");
  } else {
    Kokkos::ScopeGuard kokkos(argc, argv);
    doctest::Context context;
    context.applyCommandLine(argc, argv);
    status = context.run();
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
