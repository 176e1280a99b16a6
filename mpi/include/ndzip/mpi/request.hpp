// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::mpi::options and ndzip::mpi::request (ndzip/mpi.hpp).

#include <cstddef>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "ndzip/mpi/transfer.hpp"

namespace ndzip::mpi {

struct options {
  // Values per segment, in bytes (rounded down to whole rows of the slowest dimension; one row
  // and 4096 bytes at least, or all rows where the View is smaller). Smaller segments overlap
  // compression and transfer more finely; each costs a message and a kernel launch.
  std::size_t segment_bytes = std::size_t{16} << 20;
  // Sending: an XXH3-64 checksum of every segment, which every receiver checks. Receiving: a
  // message without checksums is refused (ndzip::mpi::mismatch_error, after it is consumed),
  // so that a receiver can demand the check whatever the sender was told. Off by default: MPI's
  // transports check their own frames (InfiniBand and Ethernet CRCs, TCP), and every message
  // is validated on arrival either way (heads, sizes, extents, streams that must decode
  // exactly). Turn it on, on both sides, for an end-to-end check across layers you do not
  // trust; it costs two hashing passes over the compressed bytes (on an H200 node, 2 ranks:
  // 1.58x raw instead of 2.18x for 64 MiB floats, 0.69x instead of 1.02x for incompressible
  // data; docs/PERFORMANCE-HISTORY.md).
  bool checksum = false;
  // How the bytes of device Views meet MPI (host Views are always handed to MPI in place):
  //  - automatic: directly, device pointers to MPI, where the MPI library says at run time that
  //    it takes them (Open MPI built with CUDA or ROCm support: MPIX_Query_cuda_support,
  //    MPIX_Query_rocm_support), except for sends with the checksum on (hashed on the host);
  //    otherwise staged;
  //  - staged: the compressed bytes are copied through host-pinned memory;
  //  - direct: device pointers to MPI without asking, for GPU-aware MPI libraries that have no
  //    such query (an MPI that is not GPU-aware then fails or crashes inside MPI).
  // The bytes on the wire are the same on either path, so the two ranks may choose differently.
  // On the direct path a rank still copies each message's heads (96 bytes at most) to the host
  // to check them, and with the checksum on, the whole segment, to hash it.
  enum class device_path { automatic, staged, direct };
  device_path path = device_path::automatic;
};

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
