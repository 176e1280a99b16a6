// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The transport seam of ndzip::mpi: where the bytes of a message lie while MPI moves them, and
// how they get there from the codec's memory and back. Not part of the API.
//
// A sender assembles every message in the execution space's memory (the encoder writes the
// stream there, the finisher the segment head: segment_pipeline.hpp); a receiver hands each
// arrived payload to the decoder in that memory. An engine says where MPI reads and writes the
// bytes in between:
//   host_transport        host backends: the execution space's memory is host memory, handed
//                         to MPI in place;
//   staged_transport      device memory, copied through host-pinned buffers (an MPI without
//                         GPU support);
//   mpi_device_transport  device memory handed to MPI as it is (a CUDA- or ROCm-aware MPI).
// Above the seam, written once: segmenting, heads, validation, the codec calls and the MPI
// calls (send_transfer.hpp, recv_transfer.hpp, the neighbor_exchange). A plain transfer's values
// go from and to the View itself where the engine says MPI takes the execution space's memory
// (mpi_takes_views), else through pack() and unpack() like raw segments. An engine that moves
// payloads outside MPI (NCCL: heads matched through MPI, payloads queued on the instance) adds
// the posting of a payload to this interface.

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

#include "ndzip/mpi/detail/gpu_aware.hpp"
#include "ndzip/mpi/detail/scratch.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi::detail {

// Memory on loan from a scratch, whatever kind: goes back when the last copy is dropped.
class buffer {
 public:
  buffer() = default;
  template <class Lease>
  explicit buffer(Lease lease)
      : m_data(lease.data()),
        m_size(lease.size()),
        m_keep(std::make_shared<Lease>(std::move(lease))) {}
  std::byte* data() const { return m_data; }
  std::size_t size() const { return m_size; }
  explicit operator bool() const { return m_keep != nullptr; }

 private:
  std::byte* m_data = nullptr;
  std::size_t m_size = 0;
  std::shared_ptr<void> m_keep;
};

// Queues on `exec` a copy of `bytes` bytes from `from` (in FromSpace) to `to` (in ToSpace).
template <class ToSpace, class FromSpace, class ExecSpace>
void copy_bytes(const ExecSpace& exec, std::byte* to, const std::byte* from, std::size_t bytes) {
  if (bytes == 0) return;
  Kokkos::View<std::byte*, ToSpace, Kokkos::MemoryUnmanaged> destination(to, bytes);
  Kokkos::View<const std::byte*, FromSpace, Kokkos::MemoryUnmanaged> source(from, bytes);
  Kokkos::deep_copy(exec, destination, source);
}

// The segment size of a View of `bytes` in device memory handed to the link as it is (a
// GPU-aware MPI, NCCL): a quarter of the View, 16 to 64 MiB. On two H200s over NVLink, segments
// of 16 MiB left 256 MiB to 1 GiB messages at 0.8-0.95x the raw transfer in ping-pong, 64 MiB
// ones at 1.0-1.3x, while 64 MiB messages did best in segments of 16
// (docs/PERFORMANCE-HISTORY.md).
inline std::size_t device_segment_bytes(std::uint64_t bytes) {
  constexpr std::uint64_t mib = std::uint64_t{1} << 20;
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(bytes / 4, 16 * mib, 64 * mib));
}

template <class ExecSpace>
class transport {
 public:
  using memory_space = typename ExecSpace::memory_space;
  // Waits for the work queued on the instance so far, calling MPI meanwhile for the messages
  // already posted (segment_pipeline.hpp).
  using wait_function = std::function<void()>;

  explicit transport(std::shared_ptr<scratch<ExecSpace>> memory) : m_memory(std::move(memory)) {}
  virtual ~transport() = default;
  transport(const transport&) = delete;
  transport& operator=(const transport&) = delete;

  virtual transport_kind kind() const = 0;
  scratch<ExecSpace>& memory() const { return *m_memory; }
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
  // scratch::staging_buffer) into an assembly.
  virtual void copy_from_host(std::byte* to, const std::byte* from, std::size_t bytes) = 0;
  // Queues on the instance a copy of `bytes` from `from` in the execution space's memory (a
  // View's values) into an assembly.
  virtual void pack(std::byte* to, const std::byte* from, std::size_t bytes) = 0;
  // Whether MPI reads and writes the execution space's own memory: a plain transfer then hands
  // MPI the View itself.
  virtual bool mpi_takes_views() const = 0;

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
  std::shared_ptr<scratch<ExecSpace>> m_memory;
};

// Host backends: every message is in host memory, which the codec and MPI share.
template <class ExecSpace>
class host_transport final : public transport<ExecSpace> {
 public:
  using transport<ExecSpace>::transport;
  transport_kind kind() const override { return transport_kind::staged; }
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
  // Not where the MPI tests put the wire in shared memory (scratch.hpp) for an MPI that is not
  // GPU-aware.
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

// The engine of `kind` for the sending (`sending`) or receiving side of a transfer: host
// backends have one; a device sends with the checksum on through the staged engine in automatic
// mode (the hash is computed on the host).
template <class ExecSpace>
std::unique_ptr<transport<ExecSpace>> make_transport(std::shared_ptr<scratch<ExecSpace>> memory,
                                                     transport_kind kind) {
  if constexpr (staging<ExecSpace>::in_place) {
    (void)kind;
    return std::make_unique<host_transport<ExecSpace>>(std::move(memory));
  } else {
    if (kind == transport_kind::mpi_device)
      return std::make_unique<mpi_device_transport<ExecSpace>>(std::move(memory));
    return std::make_unique<staged_transport<ExecSpace>>(std::move(memory));
  }
}

// The engine options::transport picks on this rank: never mpi_device for host Views.
template <class ExecSpace>
transport_kind chosen_transport(const options& opts, bool sending) {
  if constexpr (staging<ExecSpace>::in_place) {
    (void)opts;
    (void)sending;
    return transport_kind::staged;
  } else {
    switch (opts.transport) {
      case transport_kind::staged:
        return transport_kind::staged;
      case transport_kind::mpi_device:
        return transport_kind::mpi_device;
      default:
        return !(sending && opts.checksum) && mpi_reports_gpu_support<ExecSpace>()
                   ? transport_kind::mpi_device
                   : transport_kind::staged;
    }
  }
}

}  // namespace ndzip::mpi::detail
