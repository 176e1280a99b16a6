// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How a sender of any link keeps several segments in flight: the instance compresses a segment
// and finishes it in the execution space's memory (the segment head, and the raw values where
// the stream would not be smaller), then publishes the payload's size to the host; the host
// waits for that segment alone, advancing its link meanwhile (MPI's messages already posted),
// and hands it to the link while the instance compresses the next ones. Not part of the API.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"

namespace ndzip::mpi::detail {

// Writes segment `index`'s head into `head` (its payload follows it) once the encoder has
// written its stream size into `*stream_bytes` (device memory; `raw_bytes` or more for a slab
// sent raw without compression), copying the slab's values over the payload where the stream
// is not smaller than them. The payload's size goes to `*payload_bytes` (device memory).
template <class T>
struct finish_segment {
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  const std::uint64_t* stream_bytes;
  std::uint64_t* payload_bytes;
  const bits* slab;
  std::byte* head;
  std::uint64_t raw_bytes;
  std::uint64_t index;
  std::size_t threads;  // each copies every `threads`-th word: few threads where nothing is copied

  KOKKOS_FUNCTION void operator()(std::size_t t) const {
    const bool raw = *stream_bytes >= raw_bytes;
    // Values as bits: no float load or store may touch a NaN's payload.
    if (raw)
      for (std::size_t i = t; i < raw_bytes / sizeof(bits); i += threads)
        reinterpret_cast<bits*>(head + segment_head_bytes)[i] = slab[i];
    if (t == 0) {
      const std::uint64_t payload = raw ? raw_bytes : *stream_bytes;
      put_segment_head(head, raw ? segment_kind::raw : segment_kind::stream, index, payload, 0);
      *payload_bytes = payload;
    }
  }
};

// Raises a mark in host memory, after the work queued before it.
struct raise_mark {
  volatile std::uint64_t* mark;
  KOKKOS_FUNCTION void operator()(int) const { *mark = 1; }
};

// Copies a payload size from device memory to the host and raises the segment's mark there,
// after the work queued before it.
struct publish_segment {
  const std::uint64_t* payload_bytes;
  volatile std::uint64_t* published;  // {payload bytes, mark}
  KOKKOS_FUNCTION void operator()(int) const {
    published[0] = *payload_bytes;
    published[1] = 1;
  }
};

// The per-segment sizes and marks of one transfer.
template <class ExecSpace>
class segment_slots {
  using memory_space = typename ExecSpace::memory_space;
  using staging_space = typename staging<ExecSpace>::space;
  // Where the device cannot write host memory (Kokkos 3 with a device), the host fences and
  // copies the sizes instead of reading marks.
  static constexpr bool device_writes_host =
      Kokkos::SpaceAccessibility<ExecSpace, staging_space>::accessible;

 public:
  segment_slots(buffer_pool<ExecSpace>& memory, std::size_t count)
      : m_exec(memory.exec()),
        m_device(memory.device_buffer(2 * sizeof(std::uint64_t) * count)),
        m_host(memory.staging_buffer(2 * sizeof(std::uint64_t) * count)) {
    for (std::size_t k = 0; k < 2 * count; ++k) host_slots()[k] = 0;
  }

  // Where the encoder of segment k writes its stream size.
  std::uint64_t* stream_bytes(std::size_t k) const { return device_slots() + 2 * k; }
  std::uint64_t* payload_bytes_on_device(std::size_t k) const { return device_slots() + 2 * k + 1; }

  // Sets segment k's stream size on the host's behalf (a slab sent raw without compression).
  void set_stream_bytes(std::size_t k, std::uint64_t bytes) {
    Kokkos::View<std::uint64_t, memory_space, Kokkos::MemoryUnmanaged> slot(stream_bytes(k));
    Kokkos::deep_copy(m_exec, slot, bytes);
  }

  // Queues the finishing of the message in slot k, holding segment `index` of its transfer
  // (finish_segment), the encoder having written the stream size to `stream_size` (device
  // memory; stream_bytes(k) by default), and its publication.
  template <class T>
  void finish(std::size_t k, std::uint64_t index, const T* slab, std::uint64_t raw_bytes,
              std::byte* head, const std::uint64_t* stream_size = nullptr) {
    using bits = typename finish_segment<T>::bits;
    // Enough threads to copy at the memory's speed where the values go raw.
    const std::size_t threads =
        std::clamp<std::size_t>(raw_bytes / sizeof(bits), 1, std::size_t{1} << 18);
    Kokkos::parallel_for(
        "ndzip::mpi finish segment", Kokkos::RangePolicy<ExecSpace>(m_exec, 0, threads),
        finish_segment<T>{stream_size ? stream_size : stream_bytes(k), payload_bytes_on_device(k),
                          reinterpret_cast<const bits*>(slab), head, raw_bytes, index, threads});
    queue_publication(k);
  }

  // Publishes `bytes` as the payload size in slot k once the work queued so far is done: a
  // message assembled without finish() (a plain transfer's copied values).
  void publish(std::size_t k, std::uint64_t bytes) {
    Kokkos::View<std::uint64_t, memory_space, Kokkos::MemoryUnmanaged> slot(
        payload_bytes_on_device(k));
    Kokkos::deep_copy(m_exec, slot, bytes);
    queue_publication(k);
  }

  // Waits until segment k is finished, calling `progress()` meanwhile (once at least: the MPI
  // link advances its receives there); returns its payload size.
  template <class Progress>
  std::uint64_t wait(std::size_t k, Progress&& progress) {
    if constexpr (device_writes_host) {
      const volatile std::uint64_t* slot = host_slots() + 2 * k;
      do {
        progress();
      } while (slot[1] == 0);
      return slot[0];
    } else {
      progress();
      m_exec.fence();
      std::uint64_t sizes[2];
      copy_bytes<Kokkos::HostSpace, memory_space>(
          m_exec, reinterpret_cast<std::byte*>(sizes),
          reinterpret_cast<const std::byte*>(stream_bytes(k)), sizeof sizes);
      m_exec.fence();
      return sizes[1];
    }
  }

 private:
  // Queues the copy of slot k's payload size to the host and the raising of its mark there
  // (where the device cannot write host memory, wait() fences and copies instead).
  void queue_publication(std::size_t k) {
    if constexpr (device_writes_host)
      Kokkos::parallel_for("ndzip::mpi publish segment",
                           Kokkos::RangePolicy<ExecSpace>(m_exec, 0, 1),
                           publish_segment{payload_bytes_on_device(k), host_slots() + 2 * k});
  }

  std::uint64_t* device_slots() const { return reinterpret_cast<std::uint64_t*>(m_device.data()); }
  std::uint64_t* host_slots() const { return reinterpret_cast<std::uint64_t*>(m_host.data()); }

  ExecSpace m_exec;
  typename buffer_pool<ExecSpace>::device_lease m_device;
  typename buffer_pool<ExecSpace>::staging_lease m_host;
};

}  // namespace ndzip::mpi::detail
