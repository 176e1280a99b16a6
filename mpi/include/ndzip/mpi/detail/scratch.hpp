// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The memory an ndzip::mpi::communicator keeps between transfers: host staging buffers, device
// stream buffers and the codecs of the slab shapes it has seen, so that repeated transfers
// allocate nothing (cudaHostAlloc and cudaMalloc take far longer than a transfer's compression).
// Not part of the API.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ndzip/compressor.hpp"
#include "ndzip/mpi/detail/wire_format.hpp"

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

// Memory handed to MPI by the mpi_device transport (transport.hpp): the execution space's own.
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
class scratch : public std::enable_shared_from_this<scratch<ExecSpace>> {
 public:
  using staging_bytes = typename staging<ExecSpace>::bytes;
  using device_bytes = Kokkos::View<std::byte*, typename ExecSpace::memory_space>;
  using wire_bytes = typename wire<ExecSpace>::bytes;

  // A buffer on loan: goes back to the scratch when the lease ends.
  template <class View>
  class lease {
   public:
    lease() = default;
    lease(View view, std::shared_ptr<scratch> owner, std::vector<View>* free)
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
    std::shared_ptr<scratch> m_owner;
    std::vector<View>* m_free = nullptr;  // the owner's list this buffer goes back to
  };

  using staging_lease = lease<staging_bytes>;
  using device_lease = lease<device_bytes>;
  using wire_lease = lease<wire_bytes>;

  explicit scratch(const ExecSpace& exec) : m_exec(exec) {}
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

  // The codec of one slab shape, made on first use. Shared, so that an entry dropped from the
  // cache stays alive while a transfer still uses it.
  template <class T, int Dims>
  std::shared_ptr<compressor<T, Dims, ExecSpace>> codec(const extent<Dims>& grid) {
    const std::array<std::uint64_t, 5> key = {sizeof(T), Dims, grid[0], Dims > 1 ? grid[1] : 1,
                                              Dims > 2 ? grid[Dims - 1] : 1};
    std::lock_guard<std::mutex> lock(m_mutex);
    if (auto found = m_codecs.find(key); found != m_codecs.end())
      return std::static_pointer_cast<compressor<T, Dims, ExecSpace>>(found->second);
    if (m_codecs.size() >= max_codecs) m_codecs.clear();
    auto made = std::make_shared<compressor<T, Dims, ExecSpace>>(m_exec, grid);
    m_codecs.emplace(key, made);
    return made;
  }

 private:
  // Buffers kept per kind: enough for every segment of a 1 GiB transfer at 4 MiB a segment (a
  // transfer holds all its segments' buffers at once; with fewer kept, each large transfer
  // allocated pinned memory again, which took longer than the transfer); codecs kept (the
  // shapes of a halo exchange or of a few message sizes fit; a program sending ever new shapes
  // starts over when the cache is full).
  static constexpr std::size_t max_free = 256;
  static constexpr std::size_t max_codecs = 64;

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
  std::map<std::array<std::uint64_t, 5>, std::shared_ptr<void>> m_codecs;
};

}  // namespace ndzip::mpi::detail
