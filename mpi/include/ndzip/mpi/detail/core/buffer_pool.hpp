// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The buffers a communicator (of any link) keeps between transfers: host staging buffers,
// device buffers and the buffers a GPU-aware MPI reads and writes, lent and given back, so that
// repeated transfers allocate nothing (cudaHostAlloc and cudaMalloc take far longer than a
// transfer's compression); and `buffer`, a lent buffer whatever its kind. Not part of the API.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ndzip::mpi::detail {

// Host memory for the bytes MPI sends and receives: the execution space's own memory where the
// host can access it, else host-pinned memory (Kokkos 4; pageable host memory with Kokkos 3).
template <class ExecSpace>
struct staging {
  using memory_space = typename ExecSpace::memory_space;
  static constexpr bool in_place =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
#if KOKKOS_VERSION >= 40000
  using space = std::conditional_t<in_place, memory_space, Kokkos::SharedHostPinnedSpace>;
#else
  using space = std::conditional_t<in_place, memory_space, Kokkos::HostSpace>;
#endif
  using bytes = Kokkos::View<std::byte*, space>;
};

// Memory handed to MPI by the mpi_device transport (mpi/transport.hpp): the execution space's
// own.
// The MPI tests build with NDZIP_MPI_TEST_WIRE_IN_SHARED_SPACE to run that transport with an
// MPI that is not GPU-aware: the buffers are then in memory the host can read too
// (Kokkos::SharedSpace, Kokkos 4), which MPI's host copies can handle.
template <class ExecSpace>
struct wire {
#if defined(NDZIP_MPI_TEST_WIRE_IN_SHARED_SPACE) && KOKKOS_VERSION >= 40000
  using space = std::conditional_t<staging<ExecSpace>::in_place, typename ExecSpace::memory_space,
                                   Kokkos::SharedSpace>;
#else
  using space = typename ExecSpace::memory_space;
#endif
  using bytes = Kokkos::View<std::byte*, space>;
};

template <class ExecSpace>
class buffer_pool : public std::enable_shared_from_this<buffer_pool<ExecSpace>> {
 public:
  using staging_bytes = typename staging<ExecSpace>::bytes;
  using device_bytes = Kokkos::View<std::byte*, typename ExecSpace::memory_space>;
  using wire_bytes = typename wire<ExecSpace>::bytes;

  // A buffer on loan: goes back to the pool when the lease ends.
  template <class View>
  class lease {
   public:
    lease() = default;
    lease(View view, std::shared_ptr<buffer_pool> owner, std::vector<View>* free)
        : m_view(std::move(view)), m_owner(std::move(owner)), m_free(free) {}
    // Written out: Kokkos 4's View move constructor is not noexcept, and nvcc (C++17) deletes
    // a defaulted noexcept one then, leaving std::vector<lease> with the deleted copy.
    lease(lease&& other) noexcept
        : m_view(std::move(other.m_view)),
          m_owner(std::move(other.m_owner)),
          m_free(std::exchange(other.m_free, nullptr)) {}
    lease& operator=(lease&& other) noexcept {
      if (this != &other) {
        give_back();
        m_view = std::move(other.m_view);
        m_owner = std::move(other.m_owner);
        m_free = other.m_free;
      }
      return *this;
    }
    lease(const lease&) = delete;
    lease& operator=(const lease&) = delete;
    ~lease() { give_back(); }

    std::byte* data() const { return m_view.data(); }
    std::size_t size() const { return m_view.size(); }

   private:
    void give_back() {
      if (m_owner) m_owner->keep(*m_free, std::move(m_view));
      m_owner.reset();
      m_view = View();
    }
    View m_view;
    std::shared_ptr<buffer_pool> m_owner;
    std::vector<View>* m_free = nullptr;  // the owner's list this buffer goes back to
  };

  using staging_lease = lease<staging_bytes>;
  using device_lease = lease<device_bytes>;
  using wire_lease = lease<wire_bytes>;

  explicit buffer_pool(const ExecSpace& exec) : m_exec(exec) {}
  const ExecSpace& exec() const { return m_exec; }
  // Buffers allocated so far (the rest were reused).
  std::size_t allocations() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_allocations;
  }

  // A host staging buffer, or a buffer in the execution space's memory, of `bytes` bytes at
  // least (8-byte aligned, as every Kokkos allocation).
  staging_lease staging_buffer(std::size_t bytes) {
    return {take(m_free_staging, bytes, "ndzip::mpi staging"), this->shared_from_this(),
            &m_free_staging};
  }
  device_lease device_buffer(std::size_t bytes) {
    return {take(m_free_device, bytes, "ndzip::mpi stream"), this->shared_from_this(),
            &m_free_device};
  }
  // A message buffer of the mpi_device transport, which MPI reads or writes in device memory.
  wire_lease wire_buffer(std::size_t bytes) {
    return {take(m_free_wire, bytes, "ndzip::mpi message"), this->shared_from_this(), &m_free_wire};
  }

 private:
  // Buffers kept per kind: enough for every segment of a 1 GiB transfer at 4 MiB a segment (a
  // transfer holds all its segments' buffers at once; with fewer kept, each large transfer
  // allocated pinned memory again, which took longer than the transfer).
  static constexpr std::size_t max_free = 256;

  template <class View>
  View take(std::vector<View>& free, std::size_t bytes, const char* label) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      std::size_t best = free.size();
      for (std::size_t i = 0; i < free.size(); ++i)
        if (free[i].size() >= bytes && (best == free.size() || free[i].size() < free[best].size()))
          best = i;
      if (best < free.size()) {
        View found = std::move(free[best]);
        free.erase(free.begin() + static_cast<std::ptrdiff_t>(best));
        return found;
      }
    }
    // Rounded up, so that transfers of nearby sizes reuse buffers: to a power of two up to
    // 1 MiB (4 KiB at least), above that to whole MiB (a segment of 16 MiB plus its heads must
    // not take 32).
    constexpr std::size_t mib = std::size_t{1} << 20;
    std::size_t size = 4096;
    while (size < bytes && size < mib) size *= 2;
    if (size < bytes) size = (bytes + mib - 1) / mib * mib;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      ++m_allocations;
    }
    return View(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), size);
  }

  template <class View>
  void keep(std::vector<View>& free, View view) {
    if (view.size() == 0) return;
    std::lock_guard<std::mutex> lock(m_mutex);
    free.push_back(std::move(view));
    if (free.size() > max_free) {
      // Drop the smallest.
      std::size_t smallest = 0;
      for (std::size_t i = 1; i < free.size(); ++i)
        if (free[i].size() < free[smallest].size()) smallest = i;
      free.erase(free.begin() + static_cast<std::ptrdiff_t>(smallest));
    }
  }

  ExecSpace m_exec;
  mutable std::mutex m_mutex;
  std::size_t m_allocations = 0;
  std::vector<staging_bytes> m_free_staging;
  std::vector<device_bytes> m_free_device;
  std::vector<wire_bytes> m_free_wire;
};

// Memory on loan from a pool, whatever kind: goes back when the last copy is dropped.
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

}  // namespace ndzip::mpi::detail
