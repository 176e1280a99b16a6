// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The errors ndzip::mpi throws besides ndzip::stream_error (ndzip/mpi.hpp "Checks on arrival").

#include "ndzip/error.hpp"
#include "ndzip/export.hpp"

namespace ndzip::mpi {

// An MPI call failed with an error code (possible only where the communicator's error handler
// returns errors rather than aborting, as MPI_ERRORS_RETURN does).
class NDZIP_EXPORT error : public ndzip::error {
 public:
  using ndzip::error::error;
};

// A received message holds another element type or other extents than the View it was received
// into. The message has been consumed (every segment of it), and nothing was written.
class NDZIP_EXPORT mismatch_error : public error {
 public:
  using error::error;
};

}  // namespace ndzip::mpi
