// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A send or a receive of the MPI link in progress (point_to_point_send.hpp,
// point_to_point_recv.hpp), as a request holds it. Not part of the API.

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>

#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi::detail {

#ifdef NDZIP_MPI_FAULT_INJECTION
// Tests only (mpi/tests define this for the whole test binary): the next send fails, as an
// allocation or the codec could, just before it compresses segment `send_fault_at()` (-1: no
// fault), and clears the fault.
inline std::atomic<long long>& send_fault_at() {
  static std::atomic<long long> segment{-1};
  return segment;
}
#endif

class transfer {
 public:
  virtual ~transfer() = default;
  // Advances the transfer; returns true once it is complete. With `block`, returns only then.
  // Throws what went wrong (once; the transfer is then complete).
  virtual bool progress(bool block) = 0;
  // Its request is destroyed before completion (ndzip/mpi.hpp "Aliasing and lifetimes"): by
  // default the transfer completes, and what went wrong goes to standard error, since a
  // destructor has nobody to throw to. Called with MPI not yet finalised.
  virtual void abandon() noexcept {
    try {
      progress(true);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ndzip::mpi: a request destroyed before it completed failed: %s\n",
                   e.what());
    }
  }
  const transfer_stats& stats() const { return m_stats; }

 protected:
  transfer_stats m_stats;
};

}  // namespace ndzip::mpi::detail
