// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The transports of the MPI link: where the bytes of a message lie while MPI moves them, and
// how they get there from the codec's memory and back (options::transport). Not part of the
// API.
//
// A sender assembles every message in the execution space's memory (the encoder writes the
// stream there, the finishing kernel the segment head: core/segment_encoder.hpp); a receiver
// hands each arrived payload to the decoder in that memory. A transport says where MPI reads and
// writes the bytes in between:
//   host_transport        host backends (in_place): the execution space's memory is host
//                         memory, handed to MPI as it is;
//   staged_transport      device memory, copied through host-pinned buffers (an MPI without
//                         GPU support);
//   mpi_device_transport  device memory handed to MPI as it is (a CUDA- or ROCm-aware MPI).
// Above it, written once: segmenting, heads, validation and the codec calls (core/), and the MPI
// calls (point_to_point_send.hpp, point_to_point_recv.hpp, neighbor_exchange.hpp). A plain
// transfer's values go from and to the View itself where the transport says MPI takes the
// execution space's memory (mpi_takes_views), else through pack() and unpack() like raw
// segments. NCCL is not a transport but a link of its own (detail/nccl/).

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/transfer_plan.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"
#include "ndzip/mpi/detail/mpi/gpu_aware.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi::detail {

template <class ExecSpace>
class transport {
 public:
  using memory_space = typename ExecSpace::memory_space;
  // Waits for the work queued on the instance so far, calling MPI meanwhile for the messages
  // already posted (progress.hpp).
  using wait_function = std::function<void()>;

  explicit transport(std::shared_ptr<buffer_pool<ExecSpace>> memory)
      : m_memory(std::move(memory)) {}
  virtual ~transport() = default;
  transport(const transport&) = delete;
  transport& operator=(const transport&) = delete;

  virtual transport_kind kind() const = 0;
  buffer_pool<ExecSpace>& memory() const { return *m_memory; }
  // The segment size of a View of `bytes` where options::segment_bytes leaves it to the
  // transport: 16 MiB (through the host, measured for PCIe copies overlapping MPI).
  virtual std::size_t segment_bytes(std::uint64_t bytes) const {
    (void)bytes;
    return std::size_t{16} << 20;
  }
  const ExecSpace& exec() const { return m_memory->exec(); }

  // Sending. Memory in the execution space's reach to assemble a message of `bytes` in.
  virtual buffer assembly(std::size_t bytes) = 0;
  // Where MPI sends an assembled message of `bytes` from (complete in the assembly: the caller
  // has waited for its finishing): the assembly itself, or a host copy kept in `staged`, queued
  // and then waited for with `wait`.
  virtual std::byte* outgoing(const buffer& assembled, std::size_t bytes, buffer& staged,
                              const wait_function& wait) = 0;
  // Whether MPI's side of the messages is host memory: the bytes outgoing() returns and the
  // inboxes, which the host then reads where they are (a checksum, the heads), else through
  // copy_to_host.
  virtual bool host_reads_messages() const = 0;
  // Queues on the instance a copy of `bytes` from `from` (a staging buffer:
  // buffer_pool::staging_buffer) into an assembly.
  virtual void copy_from_host(std::byte* to, const std::byte* from, std::size_t bytes) = 0;
  // Queues on the instance a copy of `bytes` from `from` in the execution space's memory (a
  // View's values) into an assembly.
  virtual void pack(std::byte* to, const std::byte* from, std::size_t bytes) = 0;
  // Whether MPI reads and writes the execution space's own memory: a plain transfer then hands
  // MPI the View itself.
  virtual bool mpi_takes_views() const = 0;
  // Whether MPI sends from host copies of the assemblies (a collective's round of payloads is
  // then copied, payload by payload, into a staging buffer with stage_outgoing).
  virtual bool stages_outgoing() const { return false; }
  // Queues on the instance a copy of `bytes` at `from` in an assembly to `to` in a staging
  // buffer (only where stages_outgoing()).
  virtual void stage_outgoing(std::byte* to, const std::byte* from, std::size_t bytes) {
    (void)to;
    (void)from;
    (void)bytes;
  }

  // Receiving. Where MPI receives a message of `bytes`.
  virtual buffer inbox(std::size_t bytes) = 0;
  // Where the decoder reads `bytes` at `at` in an inbox: there, or a copy in the execution
  // space's memory, queued on the instance and kept in `copy`.
  virtual const std::byte* to_codec(const std::byte* at, std::size_t bytes, buffer& copy) = 0;
  // Queues on the instance a copy of `bytes` at `at` in an inbox (or an assembly) to host memory
  // `to` (valid after a fence).
  virtual void copy_to_host(std::byte* to, const std::byte* at, std::size_t bytes) = 0;
  // Queues on the instance a copy of `bytes` at `at` in an inbox to `to` in the execution
  // space's memory (raw values into the View).
  virtual void unpack(std::byte* to, const std::byte* at, std::size_t bytes) = 0;

 protected:
  std::shared_ptr<buffer_pool<ExecSpace>> m_memory;
};

// Host backends: every message is in host memory, which the codec and MPI share.
template <class ExecSpace>
class host_transport final : public transport<ExecSpace> {
 public:
  using transport<ExecSpace>::transport;
  transport_kind kind() const override { return transport_kind::in_place; }
  buffer assembly(std::size_t bytes) override {
    return buffer(this->memory().staging_buffer(bytes));
  }
  std::byte* outgoing(const buffer& assembled, std::size_t, buffer&,
                      const typename transport<ExecSpace>::wait_function&) override {
    return assembled.data();
  }
  bool host_reads_messages() const override { return true; }
  void copy_from_host(std::byte* to, const std::byte* from, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(to, from, bytes);
  }
  void pack(std::byte* to, const std::byte* from, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(to, from, bytes);
  }
  bool mpi_takes_views() const override { return true; }
  buffer inbox(std::size_t bytes) override { return buffer(this->memory().staging_buffer(bytes)); }
  const std::byte* to_codec(const std::byte* at, std::size_t, buffer&) override { return at; }
  void copy_to_host(std::byte* to, const std::byte* at, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(to, at, bytes);
  }
  void unpack(std::byte* to, const std::byte* at, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(to, at, bytes);
  }
};

// A device whose messages MPI moves through host-pinned memory.
template <class ExecSpace>
class staged_transport final : public transport<ExecSpace> {
  using staging_space = typename staging<ExecSpace>::space;
  using memory_space = typename ExecSpace::memory_space;

 public:
  using transport<ExecSpace>::transport;
  transport_kind kind() const override { return transport_kind::staged; }
  buffer assembly(std::size_t bytes) override {
    return buffer(this->memory().device_buffer(bytes));
  }
  std::byte* outgoing(const buffer& assembled, std::size_t bytes, buffer& staged,
                      const typename transport<ExecSpace>::wait_function& wait) override {
    staged = buffer(this->memory().staging_buffer(bytes));
    copy_bytes<staging_space, memory_space>(this->exec(), staged.data(), assembled.data(), bytes);
    wait();
    return staged.data();
  }
  bool host_reads_messages() const override { return true; }
  void copy_from_host(std::byte* to, const std::byte* from, std::size_t bytes) override {
    copy_bytes<memory_space, staging_space>(this->exec(), to, from, bytes);
  }
  void pack(std::byte* to, const std::byte* from, std::size_t bytes) override {
    copy_bytes<memory_space, memory_space>(this->exec(), to, from, bytes);
  }
  bool mpi_takes_views() const override { return false; }
  bool stages_outgoing() const override { return true; }
  void stage_outgoing(std::byte* to, const std::byte* from, std::size_t bytes) override {
    copy_bytes<staging_space, memory_space>(this->exec(), to, from, bytes);
  }
  buffer inbox(std::size_t bytes) override { return buffer(this->memory().staging_buffer(bytes)); }
  const std::byte* to_codec(const std::byte* at, std::size_t bytes, buffer& copy) override {
    copy = buffer(this->memory().device_buffer(bytes));
    copy_bytes<memory_space, staging_space>(this->exec(), copy.data(), at, bytes);
    return copy.data();
  }
  void copy_to_host(std::byte* to, const std::byte* at, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(to, at, bytes);
  }
  void unpack(std::byte* to, const std::byte* at, std::size_t bytes) override {
    copy_bytes<memory_space, staging_space>(this->exec(), to, at, bytes);
  }
};

// A device whose buffers a GPU-aware MPI reads and writes (wire<ExecSpace>::space: the device's
// own memory, or managed memory in the MPI tests).
template <class ExecSpace>
class mpi_device_transport final : public transport<ExecSpace> {
  using wire_space = typename wire<ExecSpace>::space;

 public:
  using transport<ExecSpace>::transport;
  transport_kind kind() const override { return transport_kind::mpi_device; }
  std::size_t segment_bytes(std::uint64_t bytes) const override {
    return device_segment_bytes(bytes);
  }
  buffer assembly(std::size_t bytes) override { return buffer(this->memory().wire_buffer(bytes)); }
  std::byte* outgoing(const buffer& assembled, std::size_t, buffer&,
                      const typename transport<ExecSpace>::wait_function&) override {
    return assembled.data();
  }
  bool host_reads_messages() const override { return false; }
  void copy_from_host(std::byte* to, const std::byte* from, std::size_t bytes) override {
    copy_bytes<wire_space, typename staging<ExecSpace>::space>(this->exec(), to, from, bytes);
  }
  void pack(std::byte* to, const std::byte* from, std::size_t bytes) override {
    copy_bytes<wire_space, typename ExecSpace::memory_space>(this->exec(), to, from, bytes);
  }
  // Not where the MPI tests put the wire in shared memory (core/buffer_pool.hpp) for an MPI
  // that is not GPU-aware.
  bool mpi_takes_views() const override {
    return std::is_same_v<wire_space, typename ExecSpace::memory_space>;
  }
  buffer inbox(std::size_t bytes) override { return buffer(this->memory().wire_buffer(bytes)); }
  const std::byte* to_codec(const std::byte* at, std::size_t, buffer&) override { return at; }
  void copy_to_host(std::byte* to, const std::byte* at, std::size_t bytes) override {
    copy_bytes<Kokkos::HostSpace, wire_space>(this->exec(), to, at, bytes);
  }
  void unpack(std::byte* to, const std::byte* at, std::size_t bytes) override {
    copy_bytes<typename ExecSpace::memory_space, wire_space>(this->exec(), to, at, bytes);
  }
};

// The transport of `kind` (chosen_transport) over `memory`: host backends have one.
template <class ExecSpace>
std::unique_ptr<transport<ExecSpace>> make_transport(
    std::shared_ptr<buffer_pool<ExecSpace>> memory, transport_kind kind) {
  if constexpr (staging<ExecSpace>::in_place) {
    (void)kind;
    return std::make_unique<host_transport<ExecSpace>>(std::move(memory));
  } else {
    if (kind == transport_kind::mpi_device)
      return std::make_unique<mpi_device_transport<ExecSpace>>(std::move(memory));
    return std::make_unique<staged_transport<ExecSpace>>(std::move(memory));
  }
}

// The transport options::transport picks on this rank for sends (`sending`) or receives:
// in_place for host Views; in automatic mode, a device sends with the checksum on through the
// staged transport (the hash is computed on the host).
template <class ExecSpace>
transport_kind chosen_transport(const options& opts, bool sending) {
  if constexpr (staging<ExecSpace>::in_place) {
    (void)opts;
    (void)sending;
    return transport_kind::in_place;
  } else {
    switch (opts.transport) {
      case transport_kind::staged:
        return transport_kind::staged;
      case transport_kind::in_place:
        throw std::invalid_argument(
            "ndzip::mpi: options::transport is in_place, which only host Views have; device "
            "Views take staged, mpi_device or automatic");
      case transport_kind::mpi_device:
        return transport_kind::mpi_device;
      default:
        return !(sending && opts.checksum) && mpi_reports_gpu_support<ExecSpace>()
                   ? transport_kind::mpi_device
                   : transport_kind::staged;
    }
  }
}

// Writes the checksum into the head of a segment finished in the transport's device memory (its
// payload complete once `wait` returns): the segment is hashed in a host copy and its head,
// with the checksum, copied back in front of the payload; returns once it is there.
template <class ExecSpace>
void write_checksum_on_device(transport<ExecSpace>& via, std::byte* segment,
                              const segment_head& head,
                              const typename transport<ExecSpace>::wait_function& wait) {
  const auto host = via.memory().staging_buffer(segment_head_bytes + head.payload_bytes);
  via.copy_to_host(host.data(), segment, segment_head_bytes + head.payload_bytes);
  wait();
  write_segment_head(head, true, host.data());
  via.copy_from_host(segment, host.data(), segment_head_bytes);
  wait();  // before the host copy goes back to the pool
}

}  // namespace ndzip::mpi::detail
