// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::request (ndzip/mpi.hpp).

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "ndzip/mpi/detail/mpi/runtime.hpp"
#include "ndzip/mpi/detail/mpi/transfer.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi {

// A send or receive in flight.
class request {
 public:
  request() = default;
  explicit request(std::unique_ptr<detail::transfer> transfer) : m_transfer(std::move(transfer)) {}
  request(request&&) noexcept = default;
  request& operator=(request&& other) noexcept {
    if (this != &other) {
      abandon();
      m_transfer = std::move(other.m_transfer);
      m_done = other.m_done;
      m_stats = other.m_stats;
    }
    return *this;
  }
  // An incomplete request: a receive that has not matched a message yet is cancelled (nothing
  // is consumed); any other transfer is completed first, its errors written to standard error
  // (ndzip/mpi.hpp "Aliasing and lifetimes").
  ~request() { abandon(); }

  // Blocks until the transfer is complete. Throws what went wrong (see ndzip/mpi.hpp), and
  // std::logic_error once MPI is finalised.
  void wait() { advance(true); }
  // Advances the transfer without blocking (it may wait for the bytes of a message that has
  // begun to arrive, never for a message to be sent); true once it is complete.
  bool test() { return advance(false); }
  bool done() const { return m_done; }
  // The raw and wire bytes of the transfer (complete once done()).
  const transfer_stats& stats() const { return m_transfer ? m_transfer->stats() : m_stats; }

 private:
  bool advance(bool block) {
    if (m_done || !m_transfer) return true;
    if (detail::mpi_finalized())
      throw std::logic_error(std::string("ndzip::mpi::request::") + (block ? "wait" : "test") +
                             ": MPI is already finalised, so the transfer can no longer "
                             "complete (complete every request before MPI_Finalize)");
    try {
      if (!m_transfer->progress(block)) return false;
    } catch (...) {
      release();
      throw;
    }
    release();
    return true;
  }
  void release() {
    m_stats = m_transfer->stats();
    m_transfer.reset();
    m_done = true;
  }
  void abandon() noexcept {
    if (m_done || !m_transfer) return;
    if (detail::mpi_finalized()) {
      // No MPI call may be made: the transfer's MPI requests are left as they are.
      std::fprintf(stderr,
                   "ndzip::mpi: a request was destroyed after MPI_Finalize without having "
                   "completed; its transfer is incomplete\n");
    } else {
      m_transfer->abandon();
    }
    release();
  }

  std::unique_ptr<detail::transfer> m_transfer;
  transfer_stats m_stats;
  bool m_done = false;
};

}  // namespace ndzip::mpi
