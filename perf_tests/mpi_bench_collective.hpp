// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip-mpi-bench --collective (mpi_bench_collective.cpp): the compressed collectives of
// ndzip::mpi against MPI's own (or, with --transport nccl, NCCL's) on any number of ranks; and
// what it and the point-to-point mode (mpi_bench.cpp) share: the rank, medians, random fields,
// bit-for-bit checks, the raw baseline's buffers (raw_channel), the fields they measure and,
// where built with NCCL, the NCCL communicator.

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <ndzip/mpi/options.hpp>
#include <string>
#include <vector>

#include "bench_inputs.hpp"

#ifdef NDZIP_MPI_HAS_NCCL
#include <ndzip/mpi/nccl.hpp>
#endif

namespace CLI {
class App;
}

namespace ndzip::perf::mpi_bench {

inline int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// Random bits in every element of a field on `exec`: nothing shrinks, so every segment goes raw.
template <class T, class ExecSpace, class MemorySpace>
void fill_random(const ExecSpace& exec, const Kokkos::View<T*, MemorySpace>& field) {
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  auto* data = reinterpret_cast<bits*>(field.data());
  Kokkos::parallel_for(
      "ndzip-mpi-bench::random", Kokkos::RangePolicy<ExecSpace>(exec, 0, field.size()),
      KOKKOS_LAMBDA(std::size_t k) { data[k] = static_cast<bits>(inputs::noise(k)); });
}

// Values bit for bit different between `got` and `want` (`count` of each, in the memory of
// `exec`), counted on `exec`.
template <class ExecSpace, class T>
std::size_t differing_bits(const ExecSpace& exec, const T* got, const T* want, std::size_t count) {
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  const auto* x = reinterpret_cast<const bits*>(got);
  const auto* y = reinterpret_cast<const bits*>(want);
  std::size_t bad = 0;
  Kokkos::parallel_reduce(
      "ndzip-mpi-bench::verify", Kokkos::RangePolicy<ExecSpace>(exec, 0, count),
      KOKKOS_LAMBDA(std::size_t k, std::size_t & n) { n += x[k] != y[k]; }, bad);
  exec.fence();
  return bad;
}

// Plain MPI of a contiguous View: raw bytes, staged through host memory where the View is not
// host-accessible and the transport is staged; host-pinned memory where Kokkos offers it (4.x),
// as ndzip::mpi stages, so that the baseline copies at the link's full speed (pageable copies
// reach only 4-9 GB/s on an H200's PCIe 5 link).
#if KOKKOS_VERSION >= 40000
using raw_staging_space = Kokkos::SharedHostPinnedSpace;
#else
using raw_staging_space = Kokkos::HostSpace;
#endif

template <class View>
struct raw_channel {
  using T = typename View::value_type;
  View values;
  Kokkos::View<T*, raw_staging_space> staging;
  bool in_place;  // MPI reads and writes the View itself

  // `device_pointers`: the values go to MPI in device memory (the mpi-device transport's raw
  // baseline, NCCL); else they are staged where the host cannot read them.
  raw_channel(const View& v, bool device_pointers)
      : values(v),
        in_place(device_pointers ||
                 Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                            typename View::memory_space>::accessible) {
    if (!in_place) staging = Kokkos::View<T*, raw_staging_space>("staging", v.size());
  }
  T* wire() const { return in_place ? values.data() : staging.data(); }
  std::size_t bytes() const { return values.size() * sizeof(T); }
  Kokkos::View<T*, typename View::memory_space, Kokkos::MemoryUnmanaged> flat() const {
    return Kokkos::View<T*, typename View::memory_space, Kokkos::MemoryUnmanaged>(values.data(),
                                                                                  values.size());
  }
  template <class ExecSpace>
  void before_send(const ExecSpace& exec) const {
    if (!in_place) Kokkos::deep_copy(exec, staging, flat());
    exec.fence();  // the values are complete before MPI reads them
  }
  template <class ExecSpace>
  void after_receive(const ExecSpace& exec) const {
    if (in_place) return;
    Kokkos::deep_copy(exec, flat(), staging);
    exec.fence();
  }
};

// The median of the times of a measurement's repetitions.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A field the run measures: a synthetic one, random bits, or a dataset of the manifest.
enum class field_source { synthetic, random, file };

struct field_spec {
  field_source source;
  inputs::dataset data;  // name, type and extents; for field_source::file, the file
};

struct collective_config {
  // --collective: bcast, gather, scatter, allgather, alltoall or all; empty where not asked for.
  std::vector<std::string> operations;
  int root = 0;  // of bcast, gather and scatter
  // As the point-to-point mode's options say:
  std::vector<double> sizes_mib;  // of one rank's piece
  double max_mib = 0;
  int repetitions = 0;  // 0: by size
  bool csv = false;
  bool nccl = false;         // --transport nccl: through NCCL, where the bench is built with it
  ndzip::mpi::options opts;  // of the compressed collectives
};

// Adds --collective and --root to `app`, after the options --collective excludes (--checksum,
// --link-gbps, --isend-copies: the collectives have no checksums, the model and the isend
// copies are the point-to-point mode's).
void add_collective_options(CLI::App& app, collective_config& cfg);

// Measures cfg.operations on `fields` (as the point-to-point mode checked them) on every rank of
// MPI_COMM_WORLD, MPI initialised and Kokkos not (initialised here from argc and argv). Returns
// the exit status: 0; 1 where a value did not arrive intact; 2 where the run is refused (NCCL in
// a build without it, fewer than 2 ranks, a root that is no rank), said on standard error before
// any transfer.
int run_collectives(const collective_config& cfg, const std::vector<field_spec>& fields, int& argc,
                    char** argv);

#ifdef NDZIP_MPI_HAS_NCCL
// Throws std::runtime_error where an NCCL call failed. The bench checks NCCL itself: ndzip::mpi
// keeps its own NCCL checks internal. ncclInProgress is no failure (a call of a non-blocking
// communicator still under way; the bench's communicator blocks, so its calls do not return it).
void check_nccl(ncclResult_t rc, const char* what);

// The NCCL communicator over MPI_COMM_WORLD (--transport nccl), made once from a unique id that
// MPI broadcasts, on the GPU Kokkos::initialize picked for this rank: the node-local rank (as the
// launcher says) modulo the GPUs it sees, so one rank per GPU (NCCL refuses two ranks on one).
ncclComm_t world_nccl();
#endif

}  // namespace ndzip::perf::mpi_bench
