// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The collectives over the MPI link: what detail/core/collective_engine.hpp asks of a link, with
// MPI's own collectives (heads: MPI_Bcast, MPI_Gather, MPI_Scatter, MPI_Allgather, MPI_Alltoall
// of fixed-size blocks; bytes: MPI_Bcast, MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv,
// MPI_Alltoallv in a datatype of 64 bytes) and the transport's memory (options::transport).
// Not part of the API.

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/collective_layout.hpp"
#include "ndzip/mpi/detail/mpi/runtime.hpp"
#include "ndzip/mpi/detail/mpi/transport.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi::detail {

// MPI's datatype of collective_unit bytes, made once per link and freed unless MPI is
// finalised by then.
class unit_datatype {
 public:
  unit_datatype() {
    check(MPI_Type_contiguous(static_cast<int>(collective_unit), MPI_BYTE, &m_type),
          "MPI_Type_contiguous");
    check(MPI_Type_commit(&m_type), "MPI_Type_commit");
  }
  ~unit_datatype() {
    if (m_type != MPI_DATATYPE_NULL && !mpi_finalized()) MPI_Type_free(&m_type);
  }
  unit_datatype(const unit_datatype&) = delete;
  unit_datatype& operator=(const unit_datatype&) = delete;
  MPI_Datatype get() const { return m_type; }

 private:
  MPI_Datatype m_type = MPI_DATATYPE_NULL;
};

// MPI's reduction of an agreement (agreement_values int64 as one element of a datatype of its
// own, so that MPI never splits one): the largest of each value but the last, which is summed
// modulo 2^64. Made once per link and freed unless MPI is finalised by then.
class agreement_reduction {
 public:
  agreement_reduction() {
    check(MPI_Type_contiguous(agreement_values, MPI_INT64_T, &m_type), "MPI_Type_contiguous");
    check(MPI_Type_commit(&m_type), "MPI_Type_commit");
    check(MPI_Op_create(&reduce, 1, &m_op), "MPI_Op_create");
  }
  ~agreement_reduction() {
    if (mpi_finalized()) return;
    MPI_Op_free(&m_op);
    MPI_Type_free(&m_type);
  }
  agreement_reduction(const agreement_reduction&) = delete;
  agreement_reduction& operator=(const agreement_reduction&) = delete;
  MPI_Datatype type() const { return m_type; }
  MPI_Op op() const { return m_op; }

 private:
  static void reduce(void* in, void* inout, int* len, MPI_Datatype*) {
    const auto* a = static_cast<const std::int64_t*>(in);
    auto* b = static_cast<std::int64_t*>(inout);
    for (int e = 0; e < *len; ++e, a += agreement_values, b += agreement_values) {
      for (int i = 0; i + 1 < agreement_values; ++i) b[i] = std::max(a[i], b[i]);
      constexpr int last = agreement_values - 1;
      b[last] = static_cast<std::int64_t>(static_cast<std::uint64_t>(a[last]) +
                                          static_cast<std::uint64_t>(b[last]));
    }
  }

  MPI_Datatype m_type = MPI_DATATYPE_NULL;
  MPI_Op m_op = MPI_OP_NULL;
};

template <class ExecSpace>
class mpi_collective_link {
 public:
  // MPI must be initialised (require_mpi_ready); an option the transport refuses is kept for
  // refused(), so that every rank's call reports it.
  mpi_collective_link(const ExecSpace& exec, MPI_Comm comm, const options& opts)
      : m_comm(comm), m_memory(std::make_shared<buffer_pool<ExecSpace>>(exec)) {
    require_mpi_ready("ndzip::mpi collective");
    check(MPI_Comm_rank(comm, &m_rank), "MPI_Comm_rank");
    check(MPI_Comm_size(comm, &m_size), "MPI_Comm_size");
    m_unit = std::make_unique<unit_datatype>();
    m_agreement = std::make_unique<agreement_reduction>();
    try {
      m_transport = make_transport(m_memory, chosen_transport<ExecSpace>(opts, true));
    } catch (const std::invalid_argument& e) {
      m_refused = e.what();
      m_transport = make_transport(m_memory, transport_kind::staged);
    }
  }

  int rank() const { return m_rank; }
  int size() const { return m_size; }
  void require_ready(const char* call) const { require_mpi_ready(call); }
  const std::string& refused() const { return m_refused; }

  buffer assembly(std::size_t bytes) { return m_transport->assembly(bytes); }
  buffer inbox(std::size_t bytes) { return m_transport->inbox(bytes); }
  bool stages_outgoing() const { return m_transport->stages_outgoing(); }
  // Whether MPI reads and writes the Views' own memory (a raw piece then goes from and into its
  // View).
  bool reads_views() const { return m_transport->mpi_takes_views(); }
  buffer staging(std::size_t bytes) { return buffer(m_memory->staging_buffer(bytes)); }
  void stage_outgoing(std::byte* to, const std::byte* from, std::size_t bytes) {
    m_transport->stage_outgoing(to, from, bytes);
  }
  // Whether the decoder reads an inbox where it is (not through host staging), else a copy in
  // a codec buffer.
  bool decodes_inbox() const { return m_transport->kind() != transport_kind::staged; }
  buffer codec_buffer(std::size_t bytes) { return buffer(m_memory->device_buffer(bytes)); }
  void copy_to_codec(std::byte* to, const std::byte* from, std::size_t bytes) {
    m_transport->unpack(to, from, bytes);
  }

  // MPI_Allgatherv delivers a rank's own piece to itself.
  static constexpr bool delivers_own_piece = true;

  // The agreement, in place: this rank's values in, every rank's reduced out.
  void agree(std::int64_t* values) {
    check(MPI_Allreduce(MPI_IN_PLACE, values, 1, m_agreement->type(), m_agreement->op(), m_comm),
          "MPI_Allreduce");
  }

  void allreduce_max(std::int64_t* values, int count) {
    check(MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_INT64_T, MPI_MAX, m_comm),
          "MPI_Allreduce");
  }

  // Heads of `head_bytes` per slot, in host memory: `out` holds this rank's (one slot, or one
  // per destination for scatter and alltoall), `in` receives one slot per source (one, from the
  // root, for bcast and scatter).
  void exchange_heads(collective_kind kind, int root, const std::byte* out, std::byte* in,
                      std::size_t head_bytes) {
    const int count = static_cast<int>(head_bytes);
    switch (kind) {
      case collective_kind::bcast:
        if (m_rank == root) std::memcpy(in, out, head_bytes);
        check(MPI_Bcast(in, count, MPI_BYTE, root, m_comm), "MPI_Bcast");
        break;
      case collective_kind::gather:
        check(MPI_Gather(out, count, MPI_BYTE, in, count, MPI_BYTE, root, m_comm), "MPI_Gather");
        break;
      case collective_kind::scatter:
        check(MPI_Scatter(out, count, MPI_BYTE, in, count, MPI_BYTE, root, m_comm),
              "MPI_Scatter");
        break;
      case collective_kind::allgather:
        check(MPI_Allgather(out, count, MPI_BYTE, in, count, MPI_BYTE, m_comm), "MPI_Allgather");
        break;
      default:
        check(MPI_Alltoall(out, count, MPI_BYTE, in, count, MPI_BYTE, m_comm), "MPI_Alltoall");
    }
  }

  // Why this rank cannot move a round laid out as `counts`: MPI's counts and displacements are
  // int.
  std::optional<std::string> fits(const round_counts& counts) const {
    std::uint64_t largest = counts.recv_total;
    for (std::size_t s = 0; s < counts.send_units.size(); ++s)
      largest = std::max(largest, counts.send_offsets[s] + counts.send_units[s]);
    if (largest <= static_cast<std::uint64_t>(INT_MAX)) return std::nullopt;
    return "a round of " + std::to_string(largest * collective_unit) + " bytes on rank " +
           std::to_string(m_rank) + " is more than MPI's int counts reach in units of " +
           std::to_string(collective_unit) + " bytes; give smaller options::segment_bytes";
  }

  // The payloads of a round: `send` is this rank's send region (null where it sends nothing),
  // `recv` its inbox, both as transport memory (a region or inbox may be Views addressed
  // together: unit_addressing).
  void move_bytes(collective_kind kind, int root, const round_counts& c, const std::byte* send,
                  std::byte* recv) {
    const MPI_Datatype unit = m_unit->get();
    const std::vector<int> scounts = ints(c.send_units), sdispls = ints(c.send_offsets);
    const std::vector<int> rcounts = ints(c.recv_units), rdispls = ints(c.recv_offsets);
    // An operation with one send slot sends its piece from where it lies in the region.
    const auto* one = send ? send + c.send_offsets[0] * collective_unit : nullptr;
    switch (kind) {
      case collective_kind::bcast: {
        const bool is_root = m_rank == root;
        check(MPI_Bcast(is_root ? const_cast<std::byte*>(one) : recv,
                        is_root ? scounts[0] : rcounts[0], unit, root, m_comm),
              "MPI_Bcast");
        break;
      }
      case collective_kind::gather:
        check(MPI_Gatherv(one, scounts[0], unit, recv, rcounts.data(), rdispls.data(), unit, root,
                          m_comm),
              "MPI_Gatherv");
        break;
      case collective_kind::scatter:
        check(MPI_Scatterv(send, scounts.data(), sdispls.data(), unit, recv, rcounts[0], unit,
                           root, m_comm),
              "MPI_Scatterv");
        break;
      case collective_kind::allgather:
        check(MPI_Allgatherv(one, scounts[0], unit, recv, rcounts.data(), rdispls.data(), unit,
                             m_comm),
              "MPI_Allgatherv");
        break;
      default:
        check(MPI_Alltoallv(send, scounts.data(), sdispls.data(), unit, recv, rcounts.data(),
                            rdispls.data(), unit, m_comm),
              "MPI_Alltoallv");
    }
  }

 private:
  // Checked by fits() before the round's bytes move.
  static std::vector<int> ints(const std::vector<std::uint64_t>& units) {
    return std::vector<int>(units.begin(), units.end());
  }

  MPI_Comm m_comm;
  int m_rank = 0, m_size = 1;
  std::shared_ptr<buffer_pool<ExecSpace>> m_memory;
  std::unique_ptr<transport<ExecSpace>> m_transport;
  std::unique_ptr<unit_datatype> m_unit;
  std::unique_ptr<agreement_reduction> m_agreement;
  std::string m_refused;
};

}  // namespace ndzip::mpi::detail
