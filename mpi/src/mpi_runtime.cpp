// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ndzip/mpi/detail/mpi/runtime.hpp"

#include <stdexcept>
#include <string>

namespace ndzip::mpi::detail {

void require_mpi_ready(const char* call) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  const std::string who = std::string("ndzip::mpi::") + call + ": ";
  if (!initialized || finalized)
    throw std::logic_error(who + (finalized ? "MPI is already finalised"
                                            : "MPI is not initialised (call MPI_Init_thread)"));
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_FUNNELED)
    throw std::logic_error(who +
                           "MPI was initialised with MPI_THREAD_SINGLE; ndzip::mpi needs "
                           "MPI_THREAD_FUNNELED or more (MPI_Init_thread), since Kokkos' host "
                           "backends run threads beside the one that calls MPI");
  if (provided < MPI_THREAD_SERIALIZED) {
    int is_main = 0;
    MPI_Is_thread_main(&is_main);
    if (!is_main)
      throw std::logic_error(who +
                             "called from a thread other than the one that initialised MPI, "
                             "which MPI_THREAD_FUNNELED forbids");
  }
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw error(std::string("ndzip::mpi: ") + what + " failed: " + std::string(text, length));
}

std::mutex& matching_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace ndzip::mpi::detail
