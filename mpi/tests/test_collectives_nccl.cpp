// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The collectives over NCCL (nccl_communicator::bcast ... alltoall and their plans), where
// ndzip::mpi is built with NCCL (a GPU machine, a rank per GPU): the cases of
// collective_checks.hpp, as over MPI, and a mismatched View that leaves the communicator in step.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <vector>

#include "collective_checks.hpp"
#include "nccl_test_support.hpp"

using namespace collective_checks;

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;

// The collectives over the NCCL communicator of MPI_COMM_WORLD, as collective_checks.hpp calls
// them: a communicator per call, with the call's options.
struct over_nccl {
  exec_space exec;
  ndzip::mpi::nccl_communicator<exec_space> with(const ndzip::mpi::options& o) const {
    return ndzip::mpi::nccl_communicator<exec_space>(exec, world_nccl(), o);
  }
  template <class V>
  void bcast(const V& v, int root, const ndzip::mpi::options& o) {
    with(o).bcast(v, root);
  }
  template <class S, class R>
  void gather(const S& s, const std::vector<R>& r, int root, const ndzip::mpi::options& o) {
    with(o).gather(s, r, root);
  }
  template <class S, class R>
  void scatter(const std::vector<S>& s, const R& r, int root, const ndzip::mpi::options& o) {
    with(o).scatter(s, r, root);
  }
  template <class S, class R>
  void allgather(const S& s, const std::vector<R>& r, const ndzip::mpi::options& o) {
    with(o).allgather(s, r);
  }
  template <class S, class R>
  void alltoall(const std::vector<S>& s, const std::vector<R>& r, const ndzip::mpi::options& o) {
    with(o).alltoall(s, r);
  }
  template <class V>
  ndzip::mpi::collective_plan plan_bcast(const V& v, int root, const ndzip::mpi::options& o) {
    return with(o).plan_bcast(v, root);
  }
  template <class S, class R>
  ndzip::mpi::collective_plan plan_gather(const S& s, const std::vector<R>& r, int root,
                                          const ndzip::mpi::options& o) {
    return with(o).plan_gather(s, r, root);
  }
  template <class S, class R>
  ndzip::mpi::collective_plan plan_scatter(const std::vector<S>& s, const R& r, int root,
                                           const ndzip::mpi::options& o) {
    return with(o).plan_scatter(s, r, root);
  }
  template <class S, class R>
  ndzip::mpi::collective_plan plan_allgather(const S& s, const std::vector<R>& r,
                                             const ndzip::mpi::options& o) {
    return with(o).plan_allgather(s, r);
  }
  template <class S, class R>
  ndzip::mpi::collective_plan plan_alltoall(const std::vector<S>& s, const std::vector<R>& r,
                                            const ndzip::mpi::options& o) {
    return with(o).plan_alltoall(s, r);
  }
};

}  // namespace

TEST_CASE_TEMPLATE("nccl: every collective delivers every piece bit for bit", T, float, double) {
  over_nccl link;
  check_every_operation<T>(link);
}

TEST_CASE("nccl: collectives sent raw, adaptive, incompressible and in many rounds") {
  over_nccl link;
  check_every_way(link);
}

TEST_CASE("nccl: a collective into a View of other extents gives mismatch_error there only") {
  const int me = rank(), n = world_size();
  over_nccl link;
  auto v = make<float, 1>({me == n - 1 ? std::size_t{6000} : std::size_t{7000}, 1, 1});
  if (me == 0) fill(v, 5);
  if (me == n - 1) {
    CHECK_THROWS_AS(link.bcast(v, 0, {}), ndzip::mpi::mismatch_error);
  } else {
    link.bcast(v, 0, {});
    CHECK(differences(v, 5) == 0);
  }
  // Still in step: the next collective delivers.
  check_operation<float, 2>(link, operation::alltoall, 0, {}, false, {true, true});
}
