// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The compressed collectives (ndzip/mpi/bcast.hpp ... alltoall.hpp) on every rank of
// MPI_COMM_WORLD, whatever its size (ctest runs 2, 3 and 4): every operation, element type and
// rank, root 0 and the last rank, compressed, raw and adaptive, smooth and incompressible
// values, pieces of different shapes and empty ones, strided Views, pieces in many rounds; the
// values every rank ends with are those a plain MPI collective of the same pieces delivers (the
// values each source generated, bit for bit; one case runs MPI_Alltoallv itself beside it). Then
// the errors, on every rank: mismatched Views, refused arguments, and heads and streams forged
// by a rank that speaks the protocol by hand (docs/FORMAT.md "Collectives").
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <cstring>
#include <ndzip/mpi.hpp>
#include <ndzip/mpi/detail/core/wire_format.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "collective_checks.hpp"

using namespace collective_checks;

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;

// The collectives over MPI_COMM_WORLD, as collective_checks.hpp calls them.
struct over_mpi {
  exec_space exec;
  MPI_Comm comm = MPI_COMM_WORLD;
  template <class V>
  void bcast(const V& v, int root, const ndzip::mpi::options& o) {
    ndzip::mpi::bcast(exec, v, root, comm, o);
  }
  template <class S, class R>
  void gather(const S& s, const std::vector<R>& r, int root, const ndzip::mpi::options& o) {
    ndzip::mpi::gather(exec, s, r, root, comm, o);
  }
  template <class S, class R>
  void scatter(const std::vector<S>& s, const R& r, int root, const ndzip::mpi::options& o) {
    ndzip::mpi::scatter(exec, s, r, root, comm, o);
  }
  template <class S, class R>
  void allgather(const S& s, const std::vector<R>& r, const ndzip::mpi::options& o) {
    ndzip::mpi::allgather(exec, s, r, comm, o);
  }
  template <class S, class R>
  void alltoall(const std::vector<S>& s, const std::vector<R>& r, const ndzip::mpi::options& o) {
    ndzip::mpi::alltoall(exec, s, r, comm, o);
  }
  template <class V>
  ndzip::mpi::collective_plan plan_bcast(const V& v, int root, const ndzip::mpi::options& o) {
    return ndzip::mpi::bcast_plan(exec, v, root, comm, o);
  }
  template <class S, class R>
  ndzip::mpi::collective_plan plan_gather(const S& s, const std::vector<R>& r, int root,
                                          const ndzip::mpi::options& o) {
    return ndzip::mpi::gather_plan(exec, s, r, root, comm, o);
  }
  template <class S, class R>
  ndzip::mpi::collective_plan plan_scatter(const std::vector<S>& s, const R& r, int root,
                                           const ndzip::mpi::options& o) {
    return ndzip::mpi::scatter_plan(exec, s, r, root, comm, o);
  }
  template <class S, class R>
  ndzip::mpi::collective_plan plan_allgather(const S& s, const std::vector<R>& r,
                                             const ndzip::mpi::options& o) {
    return ndzip::mpi::allgather_plan(exec, s, r, comm, o);
  }
  template <class S, class R>
  ndzip::mpi::collective_plan plan_alltoall(const std::vector<S>& s, const std::vector<R>& r,
                                            const ndzip::mpi::options& o) {
    return ndzip::mpi::alltoall_plan(exec, s, r, comm, o);
  }
};

}  // namespace

TEST_CASE_TEMPLATE("every collective delivers every piece bit for bit", T, float, double) {
  over_mpi link;
  check_every_operation<T>(link);
}

TEST_CASE("collectives sent raw, adaptive, incompressible and in many rounds") {
  over_mpi link;
  check_every_way(link);
}

TEST_CASE("collectives through every transport") {
  // Host Views take in_place whatever the option; on a device, staged and mpi_device (its
  // buffers in managed memory where MPI is not GPU-aware: mpi_test::mpi_device_testable).
  over_mpi link;
  for (auto t : {ndzip::mpi::transport_kind::staged, ndzip::mpi::transport_kind::mpi_device}) {
    if (t == ndzip::mpi::transport_kind::mpi_device && !mpi_device_testable()) continue;
    auto o = with(compression_choice::always, 4096);
    o.transport = t;
    check_operation<double, 2>(link, operation::alltoall, 0, o, false, {true, true}, 2);
    check_operation<float, 1>(link, operation::bcast, world_size() - 1, o, false, {}, 2);
  }
}

TEST_CASE("collectives of strided Views") {
  const exec_space exec;
  const int me = rank(), n = world_size();
  using strided = Kokkos::View<double***, Kokkos::LayoutStride>;
  // Every rank's block is 20 x 24 x 40 with one ghost layer on the fastest axis; the pieces are
  // its interior (strided) and, for alltoall, slabs of it along the slowest axis.
  Kokkos::View<double***> block("block", 20, 24, 42), gathered("gathered", 20, 24, 42);
  const auto interior = [](const Kokkos::View<double***>& b) {
    return strided(Kokkos::subview(b, Kokkos::ALL, Kokkos::ALL, std::make_pair(1, 41)));
  };
  fill(interior(block), seed_of(me, -1));
  std::vector<Kokkos::View<double***>> all;
  std::vector<strided> recvs;
  for (int s = 0; s < n; ++s) {
    all.emplace_back("all", 20, 24, 42);
    recvs.push_back(interior(all.back()));
  }
  ndzip::mpi::allgather(exec, interior(block), recvs, MPI_COMM_WORLD);
  for (int s = 0; s < n; ++s) CHECK(differences(recvs[s], seed_of(s, -1)) == 0);
  // Ghost layers are not written.
  auto ghost = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(all[0], Kokkos::ALL, Kokkos::ALL, 0));
  bool untouched = true;
  for (std::size_t i = 0; i < ghost.extent(0); ++i)
    for (std::size_t j = 0; j < ghost.extent(1); ++j) untouched = untouched && ghost(i, j) == 0;
  CHECK(untouched);
  strided mine = interior(gathered);
  ndzip::mpi::bcast(exec, mine, 0, MPI_COMM_WORLD);  // rank 0's zeros everywhere, written over
  if (me == 0) fill(mine, seed_of(0, -1));
  ndzip::mpi::bcast(exec, mine, 0, MPI_COMM_WORLD);
  CHECK(differences(mine, seed_of(0, -1)) == 0);
}

TEST_CASE("alltoall equals MPI_Alltoallv of the same pieces") {
  const exec_space exec;
  const int me = rank(), n = world_size();
  std::vector<Kokkos::View<float**>> sends, recvs;
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  int soff = 0, roff = 0;
  for (int p = 0; p < n; ++p) {
    sends.push_back(make<float, 2>(piece_extents<2>(me, p, {true, true})));
    fill(sends.back(), seed_of(me, p));
    recvs.push_back(make<float, 2>(piece_extents<2>(p, me, {true, true})));
    scounts.push_back(static_cast<int>(sends.back().size()));
    sdispls.push_back(soff);
    soff += scounts.back();
    rcounts.push_back(static_cast<int>(recvs.back().size()));
    rdispls.push_back(roff);
    roff += rcounts.back();
  }
  std::vector<float> packed(soff), plain(roff);
  for (int p = 0; p < n; ++p) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sends[p]);
    std::memcpy(packed.data() + sdispls[p], host.data(), host.size() * sizeof(float));
  }
  MPI_Alltoallv(packed.data(), scounts.data(), sdispls.data(), MPI_FLOAT, plain.data(),
                rcounts.data(), rdispls.data(), MPI_FLOAT, MPI_COMM_WORLD);
  ndzip::mpi::alltoall(exec, sends, recvs, MPI_COMM_WORLD);
  for (int p = 0; p < n; ++p) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), recvs[p]);
    CHECK(std::memcmp(host.data(), plain.data() + rdispls[p], host.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("collective stats count what moved") {
  const exec_space exec;
  const int me = rank(), n = world_size();
  auto send = make<float, 2>({128, 128, 1});
  fill(send, seed_of(me, -1));
  std::vector<Kokkos::View<float**>> recvs;
  for (int s = 0; s < n; ++s) recvs.push_back(make<float, 2>({128, 128, 1}));
  const auto stats = ndzip::mpi::allgather(exec, send, recvs, MPI_COMM_WORLD);
  CHECK(stats.sent.raw_bytes == 128 * 128 * 4);
  CHECK(stats.sent.segments == 1);
  CHECK(stats.sent.wire_bytes < stats.sent.raw_bytes * 3 / 4);  // the smooth field shrinks
  CHECK(stats.received.raw_bytes == static_cast<std::uint64_t>(n - 1) * 128 * 128 * 4);
  CHECK(stats.received.segments == static_cast<std::uint64_t>(n - 1));
  CHECK(stats.rounds == 1);
  CHECK_FALSE(stats.sent.plain);
}

namespace {

std::size_t launches = 0, allocations = 0;
std::string allocated;  // the labels of the allocations counted
void count_launch(const char*, std::uint32_t, std::uint64_t*) { ++launches; }
// Kokkos 4 on CUDA records each team launch's scratch as an allocation of 0 bytes: not memory.
void count_allocation(Kokkos::Tools::SpaceHandle space, const char* label, const void*,
                      std::uint64_t bytes) {
  if (bytes == 0) return;
  ++allocations;
  allocated += std::string(" ") + space.name + ":" + label + ":" + std::to_string(bytes);
}

}  // namespace

TEST_CASE("a plan's calls after its first allocate nothing") {
  // Kokkos allocations (device, host-pinned, host) during a second call of an alltoall in many
  // rounds and of a bcast: none, the buffers being the plan's own.
  const exec_space exec;
  const int me = rank(), n = world_size();
  std::vector<Kokkos::View<double**>> sends, recvs;
  for (int p = 0; p < n; ++p) {
    sends.push_back(make<double, 2>(piece_extents<2>(me, p, {true, true})));
    fill(sends.back(), seed_of(me, p));
    recvs.push_back(make<double, 2>(piece_extents<2>(p, me, {true, true})));
  }
  auto field = make<float, 3>({40, 18, 33});
  if (me == 0) fill(field, 3);
  allocations = 0;
  Kokkos::Tools::Experimental::set_allocate_data_callback(count_allocation);
  ndzip::mpi::alltoall_plan transpose(exec, sends, recvs, MPI_COMM_WORLD,
                                      with(compression_choice::always, 4096));
  ndzip::mpi::bcast_plan broadcast(exec, field, 0, MPI_COMM_WORLD);
  transpose.execute();
  broadcast.execute();
  CHECK(allocations > 0);  // the plans' own, counted
  allocations = 0;
  allocated.clear();
  transpose.execute();
  broadcast.execute();
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  INFO("allocated:", allocated);
  CHECK(allocations == 0);
  for (int s = 0; s < n; ++s) CHECK(differences(recvs[s], seed_of(s, me)) == 0);
  CHECK(differences(field, 3) == 0);
}

TEST_CASE("a collective's kernel launches do not grow with its pieces") {
  // Rank 0 scatters 1-D pieces over the world (n - 1 pieces to send) and over a communicator
  // of two ranks (1 piece): the same launches for both.
  const exec_space exec;
  const int me = rank(), n = world_size();
  MPI_Comm pair;
  MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : 1, me, &pair);
  const auto scatter_launches = [&](MPI_Comm comm) {
    int size = 1, r = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &r);
    std::vector<Kokkos::View<float*>> sends;
    if (r == 0)
      for (int d = 0; d < size; ++d) {
        sends.push_back(make<float, 1>({20000, 1, 1}));
        fill(sends.back(), seed_of(0, d));
      }
    auto recv = make<float, 1>({20000, 1, 1});
    ndzip::mpi::scatter_plan plan(exec, sends, recv, 0, comm, with(compression_choice::always));
    plan.execute();  // the first call makes the batch codecs
    launches = 0;
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(count_launch);
    Kokkos::Tools::Experimental::set_begin_parallel_reduce_callback(count_launch);
    Kokkos::Tools::Experimental::set_begin_parallel_scan_callback(count_launch);
    plan.execute();
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
    Kokkos::Tools::Experimental::set_begin_parallel_reduce_callback(nullptr);
    Kokkos::Tools::Experimental::set_begin_parallel_scan_callback(nullptr);
    CHECK(differences(recv, seed_of(0, r)) == 0);
    return launches;
  };
  const std::size_t world = scatter_launches(MPI_COMM_WORLD);
  const std::size_t two = scatter_launches(pair);
  MPI_Comm_free(&pair);
  if (me == 0) {
    INFO(std::to_string(n - 1), " pieces: ", world, " launches; 1 piece: ", two);
    CHECK(world > 0);
    CHECK(world == two);
  }
}

TEST_CASE("raw pieces of whole 64-byte units go from and into the Views, with no kernel") {
  // Sent raw (never), a bcast's piece leaves the root's View and arrives in the others' as it
  // is, as a gather's leaves each non-root rank and a scatter's arrives there: no copy kernel on
  // those ranks (rows of 64 floats: every slab whole units of 64 bytes).
  const exec_space exec;
  const int me = rank(), n = world_size();
  const auto opts = with(compression_choice::never);
  auto field = make<float, 2>({96, 64, 1});
  if (me == 0) fill(field, 11);
  auto mine = make<float, 2>({96, 64, 1});
  fill(mine, seed_of(me, 0));
  std::vector<Kokkos::View<float**>> gathered, scattered;
  if (me == 0)
    for (int r = 0; r < n; ++r) {
      gathered.push_back(make<float, 2>({96, 64, 1}));
      scattered.push_back(make<float, 2>({96, 64, 1}));
      fill(scattered.back(), seed_of(0, r));
    }
  auto part = make<float, 2>({96, 64, 1});
  ndzip::mpi::bcast_plan broadcast(exec, field, 0, MPI_COMM_WORLD, opts);
  ndzip::mpi::gather_plan gather(exec, mine, gathered, 0, MPI_COMM_WORLD, opts);
  ndzip::mpi::scatter_plan scatter(exec, scattered, part, 0, MPI_COMM_WORLD, opts);
  broadcast.execute();
  gather.execute();
  scatter.execute();
  const auto launches_of = [&](ndzip::mpi::collective_plan& plan) {
    launches = 0;
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(count_launch);
    plan.execute();
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
    return launches;
  };
  const bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                               exec_space::memory_space>::accessible;
  const std::size_t bcast_launches = launches_of(broadcast);
  const std::size_t gather_launches = launches_of(gather);
  const std::size_t scatter_launches = launches_of(scatter);
  if (host) {  // a device stages through host memory or managed memory here: copies there
    CHECK(bcast_launches == 0);
    if (me != 0) CHECK(gather_launches == 0);
    if (me != 0) CHECK(scatter_launches == 0);
  }
  CHECK(differences(field, 11) == 0);
  for (std::size_t r = 0; r < gathered.size(); ++r)
    CHECK(differences(gathered[r], seed_of(static_cast<int>(r), 0)) == 0);
  CHECK(differences(part, seed_of(0, me)) == 0);
}

TEST_CASE("raw pieces lying in one buffer per side go from and into it, with no kernel") {
  // Sent raw, the pieces of an alltoall, an allgather and a gather's and scatter's root lie in
  // one buffer per side, as an application's slabs of one array do: MPI moves them from and
  // into the Views, no kernel copies them (but a rank's own piece to itself: one copy, where
  // MPI does not deliver it). Pieces 16 bytes out of step with each other cannot be addressed
  // as one buffer: they go through the link's buffers, copied by kernels, and arrive all the
  // same.
  const exec_space exec;
  const int me = rank(), n = world_size();
  const auto opts = with(compression_choice::never);
  const bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                               exec_space::memory_space>::accessible;
  using piece = Kokkos::View<float**, Kokkos::MemoryUnmanaged>;
  constexpr std::size_t rows = 96, cols = 64, values = rows * cols;
  for (const std::size_t gap : {std::size_t{0}, std::size_t{4}}) {
    CAPTURE(gap);
    Kokkos::View<float*> sent("sent", n * (values + gap)), received("received", n * (values + gap));
    std::vector<piece> sends, recvs;
    for (int r = 0; r < n; ++r) {
      sends.emplace_back(sent.data() + r * (values + gap), rows, cols);
      recvs.emplace_back(received.data() + r * (values + gap), rows, cols);
      fill(sends.back(), seed_of(me, r));
    }
    const std::vector<piece> none;
    ndzip::mpi::alltoall_plan transpose(exec, sends, recvs, MPI_COMM_WORLD, opts);
    ndzip::mpi::allgather_plan collect(exec, sends[0], recvs, MPI_COMM_WORLD, opts);
    ndzip::mpi::gather_plan gather(exec, sends[0], me == 0 ? recvs : none, 0, MPI_COMM_WORLD,
                                   opts);
    ndzip::mpi::scatter_plan scatter(exec, me == 0 ? sends : none, recvs[0], 0, MPI_COMM_WORLD,
                                     opts);
    const auto launches_of = [&](ndzip::mpi::collective_plan& plan) {
      plan.execute();  // the first call makes what the plan keeps
      launches = 0;
      Kokkos::Tools::Experimental::set_begin_parallel_for_callback(count_launch);
      plan.execute();
      Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
      return launches;
    };
    const std::size_t transpose_launches = launches_of(transpose);
    for (int r = 0; r < n; ++r) CHECK(differences(recvs[r], seed_of(r, me)) == 0);
    const std::size_t collect_launches = launches_of(collect);
    for (int r = 0; r < n; ++r) CHECK(differences(recvs[r], seed_of(r, 0)) == 0);
    const std::size_t gather_launches = launches_of(gather);
    if (me == 0)
      for (int r = 0; r < n; ++r) CHECK(differences(recvs[r], seed_of(r, 0)) == 0);
    const std::size_t scatter_launches = launches_of(scatter);
    CHECK(differences(recvs[0], seed_of(0, me)) == 0);
    if (!host) continue;  // a device stages through host memory or managed memory here
    // The plain way (one collective of the values, no rounds) where the pieces lie in step.
    CHECK((transpose.execute().rounds == 0) == (gap == 0 || n == 2));
    CHECK((collect.execute().rounds == 0) == (gap == 0));
    INFO("alltoall ", transpose_launches, ", allgather ", collect_launches, ", gather ",
         gather_launches, ", scatter ", scatter_launches, " launches");
    if (gap == 0) {
      CHECK(transpose_launches <= 1);
      CHECK(collect_launches == 0);
      CHECK(gather_launches <= 1);
      CHECK(scatter_launches <= 1);
    } else {
      if (n > 2) CHECK(transpose_launches > 0);  // with 2 ranks, one piece a side: in step
      CHECK(collect_launches > 0);
    }
  }
}

TEST_CASE("sent raw, a View of the same bytes in another shape gives mismatch_error") {
  // MPI would deliver the bytes; the call's balance (every piece's type and extents, summed
  // over the ranks) sees that the last rank expects 64 x 96 values where the root sends 96 x 64,
  // and the call takes its rounds, whose heads say so.
  const exec_space exec;
  const int me = rank(), n = world_size();
  const auto opts = with(compression_choice::never);
  auto v = me == n - 1 ? make<float, 2>({64, 96, 1}) : make<float, 2>({96, 64, 1});
  if (me == 0) fill(v, 21);
  if (me == n - 1) {
    CHECK_THROWS_AS(ndzip::mpi::bcast(exec, v, 0, MPI_COMM_WORLD, opts),
                    ndzip::mpi::mismatch_error);
  } else {
    const auto stats = ndzip::mpi::bcast(exec, v, 0, MPI_COMM_WORLD, opts);
    CHECK(stats.rounds == 1);
    CHECK(differences(v, 21) == 0);
  }
}

TEST_CASE("a View of another shape or type gives mismatch_error on its rank only") {
  const exec_space exec;
  const int me = rank(), n = world_size();
  const MPI_Comm comm = MPI_COMM_WORLD;
  SUBCASE("bcast into a shorter View on the last rank") {
    auto v = make<float, 1>({me == n - 1 ? std::size_t{6000} : std::size_t{7000}, 1, 1});
    if (me == 0) fill(v, 5);
    if (me == n - 1) {
      CHECK_THROWS_AS(ndzip::mpi::bcast(exec, v, 0, comm), ndzip::mpi::mismatch_error);
      auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
      CHECK(host(0) == 0);  // not written
    } else {
      ndzip::mpi::bcast(exec, v, 0, comm);
      CHECK(differences(v, 5) == 0);
    }
  }
  SUBCASE("bcast into a View of double on the last rank") {
    if (me == n - 1) {
      auto v = make<double, 1>({7000, 1, 1});
      CHECK_THROWS_AS(ndzip::mpi::bcast(exec, v, 0, comm), ndzip::mpi::mismatch_error);
    } else {
      auto v = make<float, 1>({7000, 1, 1});
      if (me == 0) fill(v, 6);
      ndzip::mpi::bcast(exec, v, 0, comm);
      CHECK(differences(v, 6) == 0);
    }
  }
  SUBCASE("gather at a root whose View for rank 1 is transposed") {
    auto send = make<float, 2>({70, 80, 1});
    fill(send, seed_of(me, 0));
    std::vector<Kokkos::View<float**>> recvs;
    if (me == 0)
      for (int s = 0; s < n; ++s)
        recvs.push_back(make<float, 2>(s == 1 ? extents{80, 70, 1} : extents{70, 80, 1}));
    if (me == 0) {
      CHECK_THROWS_AS(ndzip::mpi::gather(exec, send, recvs, 0, comm), ndzip::mpi::mismatch_error);
      for (int s = 0; s < n; ++s)
        if (s != 1) CHECK(differences(recvs[s], seed_of(s, 0)) == 0);
    } else {
      ndzip::mpi::gather(exec, send, recvs, 0, comm);
    }
  }
  SUBCASE("a piece far larger than the View stops the call on every rank") {
    // 24 MiB announced to a View of 4 KiB: more than the 16 MiB a receiver drops.
    auto v = make<float, 1>({me == n - 1 ? std::size_t{1024} : std::size_t{6} << 20, 1, 1});
    if (me == 0) fill(v, 7);
    if (me == n - 1)
      CHECK_THROWS_AS(ndzip::mpi::bcast(exec, v, 0, comm), ndzip::mpi::mismatch_error);
    else
      CHECK_THROWS_AS(ndzip::mpi::bcast(exec, v, 0, comm), ndzip::mpi::error);
  }
}

TEST_CASE("a rank that fails part way stops the call on every rank, and none hangs") {
  // The last rank fails before compressing its round 2 (an allocation or the codec could): it
  // throws its own error, the others ndzip::mpi::error naming it (not the heads it could not
  // send); the next call works.
  const exec_space exec;
  const int me = rank(), n = world_size();
  std::vector<Kokkos::View<float*>> sends, recvs;
  for (int p = 0; p < n; ++p) {
    sends.push_back(make<float, 1>({20000, 1, 1}));
    fill(sends.back(), seed_of(me, p));
    recvs.push_back(make<float, 1>({20000, 1, 1}));
  }
  const auto opts = with(compression_choice::always, 4096);  // 20 rounds
  ndzip::mpi::alltoall_plan plan(exec, sends, recvs, MPI_COMM_WORLD, opts);
  if (me == n - 1) ndzip::mpi::detail::collective_fault_at() = 2;
  std::string message;
  try {
    plan.execute();
  } catch (const std::runtime_error& e) {  // the injected fault here, ndzip::mpi::error elsewhere
    message = e.what();
  }
  INFO(message);
  CHECK(message.find(me == n - 1 ? "injected fault before round 2"
                                 // round 2 is compressed while round 1 is on the wire
                                 : "rank " + std::to_string(n - 1) + " failed in round 1") !=
        std::string::npos);
  plan.execute();
  for (int s = 0; s < n; ++s) CHECK(differences(recvs[s], seed_of(s, me)) == 0);
}

TEST_CASE("refused arguments are reported on every rank, and nothing moves") {
  const exec_space exec;
  const int me = rank(), n = world_size();
  const MPI_Comm comm = MPI_COMM_WORLD;
  auto v = make<float, 1>({5000, 1, 1});
  std::vector<Kokkos::View<float*>> pieces(n, v);
  SUBCASE("a root outside the communicator") {
    CHECK_THROWS_AS(ndzip::mpi::bcast(exec, v, n, comm), std::invalid_argument);
    CHECK_THROWS_AS(ndzip::mpi::gather(exec, v, std::vector<Kokkos::View<float*>>{}, -1, comm),
                    std::invalid_argument);
  }
  SUBCASE("ranks that give different roots") {
    std::string message;
    try {
      ndzip::mpi::bcast(exec, v, me == 0 ? 0 : 1, comm);
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    CHECK(message.find("different roots") != std::string::npos);
  }
  SUBCASE("one rank with too few pieces") {
    std::vector<Kokkos::View<float*>> fewer(n - 1, v);
    std::string message;
    try {
      ndzip::mpi::alltoall(exec, me == 0 ? fewer : pieces, pieces, comm);
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    CHECK(message.find(me == 0 ? "sends and recvs hold" : "rank 0 refused its arguments") !=
          std::string::npos);
  }
  SUBCASE("pieces given where the rank is not the root") {
    std::string message;
    try {
      ndzip::mpi::scatter(exec, pieces, v, 0, comm);  // every rank gives n pieces
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    CHECK(message.find(me == 0 ? "refused its arguments" : "which is not the root") !=
          std::string::npos);
  }
  SUBCASE("options::checksum") {
    ndzip::mpi::options o;
    o.checksum = true;
    CHECK_THROWS_AS(ndzip::mpi::allgather(exec, v, pieces, comm, o), std::invalid_argument);
  }
}

namespace {

// Rank 0 plays the root of a bcast by hand (docs/FORMAT.md "Collectives"): the agreement, round
// 0's heads (`heads`, 96 bytes), the verdicts, and, if every rank took the heads, `payload`.
// Returns whether the others took the heads.
bool forge_bcast(const std::vector<std::byte>& heads, const std::vector<std::byte>& payload) {
  // One round, no last time, and not the plain way (its balance then does not matter).
  std::int64_t mine[7] = {0, 0, 0, 1, 0, 1, 0}, all[7];
  const ndzip::mpi::detail::agreement_reduction agreement;
  MPI_Allreduce(mine, all, 1, agreement.type(), agreement.op(), MPI_COMM_WORLD);
  std::vector<std::byte> h = heads;
  MPI_Bcast(h.data(), static_cast<int>(h.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
  std::int64_t verdict[2] = {0, 0}, verdicts[2];
  MPI_Allreduce(verdict, verdicts, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (verdicts[0] != 0 || verdicts[1] != 0) return false;
  std::vector<std::byte> p = payload;
  p.resize((p.size() + 63) / 64 * 64);
  MPI_Bcast(p.data(), static_cast<int>(p.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
  return true;
}

// Round 0's heads of a bcast of a float View of `elements`, one segment whose payload is
// `payload_bytes` of `kind`.
std::vector<std::byte> heads_of(std::uint64_t elements, ndzip::mpi::detail::segment_kind kind,
                                std::uint64_t payload_bytes) {
  namespace d = ndzip::mpi::detail;
  d::transfer_head head;
  head.type = d::element_code::float32;
  head.dims = 1;
  head.extents = {elements, 1, 1};
  head.segment_rows = elements;
  std::vector<std::byte> bytes(96);
  d::write_transfer_head(head, bytes.data());
  d::put_segment_head(bytes.data() + 64, kind, 0, payload_bytes, 0);
  return bytes;
}

}  // namespace

TEST_CASE("forged heads and damaged streams give stream_error naming the rank they came from") {
  const exec_space exec;
  const int me = rank();
  using kind = ndzip::mpi::detail::segment_kind;
  auto v = make<float, 1>({8192, 1, 1});
  const auto expect_error = [&](const char* what, bool at_receivers) {
    INFO(what);
    std::string message;
    try {
      ndzip::mpi::bcast(exec, v, 0, MPI_COMM_WORLD);
    } catch (const ndzip::stream_error& e) {
      message = e.what();
    }
    if (at_receivers) CHECK(message.find("rank") != std::string::npos);
    return message;
  };
  SUBCASE("a damaged transfer head") {
    auto heads = heads_of(8192, kind::stream, 1000);
    heads[20] ^= std::byte{1};
    if (me == 0)
      CHECK_FALSE(forge_bcast(heads, {}));
    else
      CHECK(expect_error("damaged head", true).find("rank") != std::string::npos);
  }
  SUBCASE("a segment head announcing more than the slab's values") {
    if (me == 0)
      CHECK_FALSE(forge_bcast(heads_of(8192, kind::stream, 8192 * 4 + 64), {}));
    else
      CHECK(expect_error("oversized payload", true).find("from rank 0") != std::string::npos);
  }
  SUBCASE("a raw segment shorter than its values") {
    if (me == 0)
      CHECK_FALSE(forge_bcast(heads_of(8192, kind::raw, 4096), {}));
    else
      expect_error("short raw", true);
  }
  SUBCASE("a stream of garbage") {
    std::vector<std::byte> garbage(1000);
    for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = std::byte(i * 37 + 11);
    if (me == 0) {
      CHECK(forge_bcast(heads_of(8192, kind::stream, garbage.size()), garbage));
    } else {
      const std::string message = expect_error("garbage stream", true);
      CHECK(message.find("the piece from rank 0, segment 0") != std::string::npos);
    }
  }
}
