// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The collectives over the NCCL link: what detail/core/collective_engine.hpp asks of a link,
// with NCCL's operations on a stream of the link's own (heads: ncclBroadcast, ncclAllGather or
// grouped ncclSend/ncclRecv of fixed-size blocks, copied to the host to be checked; verdicts:
// ncclAllReduce; bytes: ncclBroadcast, or grouped ncclSend/ncclRecv of each piece's payload,
// since ncclAllGather takes one count from every rank), all in device memory. The round's
// decoding, queued on the codec's instance, waits for its bytes on the device; the host waits
// only for heads and verdicts, which it reads. Not part of the API.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/collective_layout.hpp"
#include "ndzip/mpi/detail/gpu/stream.hpp"
#include "ndzip/mpi/detail/nccl/api.hpp"
#include "ndzip/mpi/detail/nccl/link.hpp"

namespace ndzip::mpi::detail {

template <class ExecSpace>
class nccl_collective_link {
 public:
  nccl_collective_link(std::shared_ptr<buffer_pool<ExecSpace>> memory, ncclComm_t comm, int rank,
                       int size)
      : m_comm(comm),
        m_rank(rank),
        m_size(size),
        m_memory(std::move(memory)),
        m_kept(std::make_unique<nccl_stream>()) {}

  int rank() const { return m_rank; }
  int size() const { return m_size; }
  void require_ready(const char*) const {}
  const std::string& refused() const { return m_refused; }

  // Everything in device memory, which NCCL reads and writes as it is.
  buffer assembly(std::size_t bytes) { return buffer(m_memory->device_buffer(bytes)); }
  buffer inbox(std::size_t bytes) { return buffer(m_memory->device_buffer(bytes)); }
  bool stages_outgoing() const { return false; }
  bool reads_views() const { return true; }
  buffer staging(std::size_t bytes) { return buffer(m_memory->staging_buffer(bytes)); }
  void stage_outgoing(std::byte*, const std::byte*, std::size_t) {}
  bool decodes_inbox() const { return true; }
  buffer codec_buffer(std::size_t bytes) { return buffer(m_memory->device_buffer(bytes)); }
  void copy_to_codec(std::byte*, const std::byte*, std::size_t) {}

  // Allgather's grouped sends skip the own rank.
  static constexpr bool delivers_own_piece = false;

  void allreduce_max(std::int64_t* values, int count) { reduce(values, count, false); }
  // The agreement: the largest of each value but the last, which is summed (modulo 2^64).
  void agree(std::int64_t* values) { reduce(values, agreement_values, true); }

  // As the MPI link's: `out` one slot (or one per destination for scatter and alltoall), `in`
  // one per source (or the root's one for bcast and scatter), host memory.
  void exchange_heads(collective_kind kind, int root, const std::byte* out, std::byte* in,
                      std::size_t head_bytes) {
    const std::size_t n = static_cast<std::size_t>(m_size), h = head_bytes;
    const bool many_out = kind == collective_kind::scatter || kind == collective_kind::alltoall;
    const bool one_in = kind == collective_kind::bcast || kind == collective_kind::scatter;
    const std::size_t out_bytes = (many_out ? n : 1) * h, in_bytes = (one_in ? 1 : n) * h;
    nccl_operations ops(m_comm, *m_kept);
    reserve(out_bytes + in_bytes, out_bytes + in_bytes);
    std::byte* d_out = m_device.data();
    std::byte* d_in = d_out + out_bytes;
    std::memcpy(m_host.data(), out, out_bytes);
    ops.copy(d_out, m_host.data(), out_bytes);
    switch (kind) {
      case collective_kind::bcast:
        check_nccl(ncclBroadcast(d_out, d_in, h, ncclUint8, root, m_comm, ops.stream()),
                   "ncclBroadcast", m_comm);
        break;
      case collective_kind::allgather:
        check_nccl(ncclAllGather(d_out, d_in, h, ncclUint8, m_comm, ops.stream()),
                   "ncclAllGather", m_comm);
        break;
      default:
        ops.open_group();
        for (int p = 0; p < m_size; ++p) {
          if (p == m_rank) continue;
          const std::size_t at = static_cast<std::size_t>(p) * h;
          if (sends_to(kind, root, p)) ops.send(d_out + (many_out ? at : 0), h, p);
          if (receives_from(kind, root, p)) ops.recv(d_in + (one_in ? 0 : at), h, p);
        }
        ops.close_group();
    }
    ops.copy(m_host.data() + out_bytes, d_in, in_bytes);
    ops.wait(ops.mark(ops.stream()));
    std::memcpy(in, m_host.data() + out_bytes, in_bytes);
  }

  // NCCL counts are size_t: every round fits.
  std::optional<std::string> fits(const round_counts&) const { return std::nullopt; }

  // The payloads of a round, device memory both; the instance's later work (the round's
  // decoding) waits for them on the device.
  void move_bytes(collective_kind kind, int root, const round_counts& c, const std::byte* send,
                  std::byte* recv) {
    nccl_operations ops(m_comm, *m_kept);
    const auto bytes = [](std::uint64_t units) { return units * collective_unit; };
    const bool one_in = kind == collective_kind::bcast || kind == collective_kind::scatter;
    const bool one_out = !(kind == collective_kind::scatter || kind == collective_kind::alltoall);
    if (kind == collective_kind::bcast) {
      const std::size_t count = bytes(m_rank == root ? c.send_units[0] : c.recv_units[0]);
      const std::byte* from = m_rank == root ? send + bytes(c.send_offsets[0]) : recv;
      if (count > 0)
        check_nccl(ncclBroadcast(from, m_rank == root ? const_cast<std::byte*>(from) : recv,
                                 count, ncclUint8, root, m_comm, ops.stream()),
                   "ncclBroadcast", m_comm);
    } else {
      ops.open_group();
      for (int p = 0; p < m_size; ++p) {
        if (p == m_rank) continue;
        const std::size_t out = one_out ? 0 : static_cast<std::size_t>(p);
        const std::size_t in = one_in ? 0 : static_cast<std::size_t>(p);
        if (sends_to(kind, root, p) && c.send_units[out] > 0)
          ops.send(send + bytes(c.send_offsets[out]), bytes(c.send_units[out]), p);
        if (receives_from(kind, root, p) && c.recv_units[in] > 0)
          ops.recv(recv + bytes(c.recv_offsets[in]), bytes(c.recv_units[in]), p);
      }
      ops.close_group();
    }
    gpu::order_after(gpu::stream_of(m_memory->exec()), ops.mark(ops.stream()));
  }

 private:
  // Whether this rank sends to (receives from) rank p in a pattern of the operation.
  bool sends_to(collective_kind kind, int root, int p) const {
    switch (kind) {
      case collective_kind::gather:
        return p == root;
      case collective_kind::scatter:
        return m_rank == root;
      case collective_kind::bcast:
        return m_rank == root;
      default:
        return true;
    }
  }
  bool receives_from(collective_kind kind, int root, int p) const {
    switch (kind) {
      case collective_kind::gather:
        return m_rank == root;
      case collective_kind::scatter:
      case collective_kind::bcast:
        return p == root;
      default:
        return true;
    }
  }

  // An all-reduce of `count` host integers in place: MAX, or (`last_summed`) MAX of all but the
  // last and a sum of that one, both in one group.
  void reduce(std::int64_t* values, int count, bool last_summed) {
    const std::size_t bytes = sizeof(std::int64_t) * static_cast<std::size_t>(count);
    const std::size_t maxima = static_cast<std::size_t>(count) - (last_summed ? 1 : 0);
    nccl_operations ops(m_comm, *m_kept);
    reserve(bytes, bytes);
    std::memcpy(m_host.data(), values, bytes);
    ops.copy(m_device.data(), m_host.data(), bytes);
    auto* device = reinterpret_cast<std::int64_t*>(m_device.data());
    ops.open_group();
    check_nccl(ncclAllReduce(device, device, maxima, ncclInt64, ncclMax, m_comm, ops.stream()),
               "ncclAllReduce", m_comm);
    if (last_summed)
      check_nccl(ncclAllReduce(device + maxima, device + maxima, 1, ncclUint64, ncclSum, m_comm,
                               ops.stream()),
                 "ncclAllReduce", m_comm);
    ops.close_group();
    ops.copy(m_host.data(), m_device.data(), bytes);
    ops.wait(ops.mark(ops.stream()));
    std::memcpy(values, m_host.data(), bytes);
  }

  // Device and host-pinned scratch for heads and verdicts, grown where a call needs more.
  void reserve(std::size_t device_bytes, std::size_t host_bytes) {
    if (m_device.size() < device_bytes) m_device = m_memory->device_buffer(device_bytes);
    if (m_host.size() < host_bytes) m_host = m_memory->staging_buffer(host_bytes);
  }

  ncclComm_t m_comm;
  int m_rank, m_size;
  std::shared_ptr<buffer_pool<ExecSpace>> m_memory;
  std::unique_ptr<nccl_stream> m_kept;  // NCCL's operations of this plan
  typename buffer_pool<ExecSpace>::device_lease m_device;
  typename buffer_pool<ExecSpace>::staging_lease m_host;
  std::string m_refused;
};

}  // namespace ndzip::mpi::detail
