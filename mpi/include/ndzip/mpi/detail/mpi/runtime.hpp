// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the MPI link asks of the MPI runtime: whether calls may be made now and from this
// thread, MPI's errors as ndzip::mpi::error, and the mutex that keeps the matching of one
// process's transfers whole under MPI_THREAD_MULTIPLE. Not part of the API.

#include <mpi.h>

#include <mutex>

#include "ndzip/export.hpp"
#include "ndzip/mpi/error.hpp"

namespace ndzip::mpi::detail {

// Throws std::logic_error unless MPI is initialised (and not finalised) with a thread level
// that allows this call from this thread: MPI_THREAD_FUNNELED or more, from the main thread
// below MPI_THREAD_SERIALIZED.
NDZIP_EXPORT void require_mpi_ready(const char* call);
// Whether MPI_Finalize has been called: no MPI call may follow it, so a request left over then
// can neither complete nor be waited for.
NDZIP_EXPORT bool mpi_finalized();
// Throws ndzip::mpi::error with MPI's message unless `rc` is MPI_SUCCESS.
NDZIP_EXPORT void check(int rc, const char* what);
// Held while receives take and handle their messages (matching.hpp) and while a send posts its
// messages: with MPI_THREAD_MULTIPLE, another ndzip::mpi call on the same (communicator, peer,
// tag) could otherwise take one of them, or interleave its messages with them.
NDZIP_EXPORT std::mutex& matching_mutex();

}  // namespace ndzip::mpi::detail
