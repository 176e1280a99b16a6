// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled, never linked or run, by scripts/build-hip.sh: every operation of the NCCL link
// (ndzip/mpi/nccl.hpp) instantiated for both element types and every rank, contiguous and
// strided, so that the link's HIP half (RCCL, the GPU stream seam's HIP runtime) compiles
// where no GPU and no RCCL are (against rccl-stub/ where no real rccl.h is found). On CUDA the
// link's tests (test_nccl.cpp) and the MPI bench compile it instead.
#include <Kokkos_Core.hpp>
#include <ndzip/mpi/nccl.hpp>
#include <vector>

namespace {

using space = ndzip::mpi::detail::gpu::space;

template <class View>
void every_operation(const ndzip::mpi::nccl_communicator<space>& link, const View& values) {
  link.send(values, 0);
  link.recv(values, 0);
  link.sendrecv(values, 0, values, 0);
  const std::vector<ndzip::mpi::piece<View>> pieces = {{values, 0, 0}};
  link.exchange(pieces, pieces);
  const std::vector<View> many = {values, values};
  link.bcast(values, 0);
  link.gather(values, many, 0);
  link.scatter(many, values, 0);
  link.allgather(values, many);
  link.alltoall(many, many);
  link.plan_alltoall(many, many).execute();
}

template <class T>
void every_rank(const ndzip::mpi::nccl_communicator<space>& link) {
  using memory = typename space::memory_space;
  Kokkos::View<T*, memory> v1("v1", 1);
  Kokkos::View<T**, memory> v2("v2", 1, 1);
  Kokkos::View<T***, memory> v3("v3", 1, 1, 1);
  every_operation(link, v1);
  every_operation(link, v2);
  every_operation(link, v3);
  every_operation(link, Kokkos::subview(v3, Kokkos::ALL, 0, Kokkos::ALL));  // strided
}

}  // namespace

// Referenced by nothing: its body is what has to compile.
void ndzip_nccl_link_compiles(const space& exec, ncclComm_t comm) {
  const ndzip::mpi::nccl_communicator<space> link(exec, comm);
  every_rank<float>(link);
  every_rank<double>(link);
}
