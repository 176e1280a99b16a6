// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What the collectives' cases share over every link (test_collectives.cpp over MPI,
// test_collectives_nccl.cpp over NCCL): pieces of every shape, run through one operation on
// every rank of MPI_COMM_WORLD and checked bit for bit. A link is a type with the operations
// (bcast, ...) and their plans (plan_bcast, ...), each taking the options last.
#include <doctest/doctest.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <ndzip/mpi.hpp>
#include <type_traits>
#include <vector>

#include "mpi_test_support.hpp"

namespace collective_checks {

using namespace mpi_test;

using exec_space = Kokkos::DefaultExecutionSpace;
using extents = std::array<std::size_t, 3>;

inline int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

template <class T, int Dims>
using view_of = std::conditional_t<Dims == 1, Kokkos::View<T*>,
                                   std::conditional_t<Dims == 2, Kokkos::View<T**>,
                                                      Kokkos::View<T***>>>;

template <class T, int Dims>
view_of<T, Dims> make(const extents& e) {
  if constexpr (Dims == 1)
    return view_of<T, 1>("piece", e[0]);
  else if constexpr (Dims == 2)
    return view_of<T, 2>("piece", e[0], e[1]);
  else
    return view_of<T, 3>("piece", e[0], e[1], e[2]);
}

enum class operation { bcast, gather, scatter, allgather, alltoall };
inline constexpr operation all_operations[] = {operation::bcast, operation::gather,
                                               operation::scatter, operation::allgather,
                                               operation::alltoall};
inline const char* name_of(operation o) {
  const char* names[] = {"bcast", "gather", "scatter", "allgather", "alltoall"};
  return names[static_cast<int>(o)];
}

struct shape_choice {
  bool varied = false;   // pieces differ in extents by source and destination
  bool empties = false;  // some pieces have no elements
};

// The extents of the piece rank s sends to rank d (d = -1: the same piece to every rank). Each
// holds whole hypercubes (it compresses) unless empty.
template <int Dims>
extents piece_extents(int s, int d, shape_choice c) {
  const std::size_t v = c.varied ? static_cast<std::size_t>(3 * s + d + 1) : 0;
  extents e;
  if constexpr (Dims == 1)
    e = {5000 + 300 * v, 1, 1};
  else if constexpr (Dims == 2)
    e = {70 + v, 65, 1};
  else
    e = {17 + v, 18, 33};
  if (c.empties && (s + d + 3) % 3 == 2) e[0] = 0;
  return e;
}

inline std::uint64_t seed_of(int s, int d) {
  return 1 + 101 * static_cast<std::uint64_t>(s) + d + 1;
}

template <class View>
void zero(const View& v) {
  Kokkos::deep_copy(v, typename View::value_type{0});
}

// Runs operation `o` `calls` times (a plan for several calls, the one-call form for one) and
// checks every value every rank received.
template <class T, int Dims, class Link>
void check_operation(Link& link, operation o, int root, const ndzip::mpi::options& opts,
                     bool random, shape_choice shapes, int calls = 1) {
  const int me = rank(), n = world_size();
  using view = view_of<T, Dims>;
  std::vector<view> sends, recvs;
  view one;
  const auto fresh = [&](int s, int d) {
    view v = make<T, Dims>(piece_extents<Dims>(s, d, shapes));
    if (s == me) fill(v, seed_of(s, d), random);
    return v;
  };
  switch (o) {
    case operation::bcast:
      one = fresh(root, -1);
      break;
    case operation::gather:
      one = fresh(me, root);
      if (me == root)
        for (int s = 0; s < n; ++s)
          recvs.push_back(make<T, Dims>(piece_extents<Dims>(s, root, shapes)));
      break;
    case operation::scatter:
      one = make<T, Dims>(piece_extents<Dims>(root, me, shapes));
      if (me == root)
        for (int d = 0; d < n; ++d) sends.push_back(fresh(root, d));
      break;
    case operation::allgather:
      one = fresh(me, -1);
      for (int s = 0; s < n; ++s)
        recvs.push_back(make<T, Dims>(piece_extents<Dims>(s, -1, shapes)));
      break;
    case operation::alltoall:
      for (int d = 0; d < n; ++d) sends.push_back(fresh(me, d));
      for (int s = 0; s < n; ++s)
        recvs.push_back(make<T, Dims>(piece_extents<Dims>(s, me, shapes)));
      break;
  }
  const auto run = [&](auto&& plan_or_call) {
    for (int k = 0; k < calls; ++k) {
      for (auto& v : recvs) zero(v);
      if (o == operation::scatter || (o == operation::bcast && me != root)) zero(one);
      plan_or_call();
    }
  };
  if (calls == 1) {
    run([&] {
      switch (o) {
        case operation::bcast: link.bcast(one, root, opts); break;
        case operation::gather: link.gather(one, recvs, root, opts); break;
        case operation::scatter: link.scatter(sends, one, root, opts); break;
        case operation::allgather: link.allgather(one, recvs, opts); break;
        case operation::alltoall: link.alltoall(sends, recvs, opts); break;
      }
    });
  } else {
    ndzip::mpi::collective_plan plan = [&] {
      switch (o) {
        case operation::bcast: return link.plan_bcast(one, root, opts);
        case operation::gather: return link.plan_gather(one, recvs, root, opts);
        case operation::scatter: return link.plan_scatter(sends, one, root, opts);
        case operation::allgather: return link.plan_allgather(one, recvs, opts);
        default: return link.plan_alltoall(sends, recvs, opts);
      }
    }();
    run([&] { plan.execute(); });
  }
  INFO(name_of(o), " on rank ", me, " of ", n, ", root ", root);
  switch (o) {
    case operation::bcast:
      CHECK(differences(one, seed_of(root, -1), random) == 0);
      break;
    case operation::gather:
      for (int s = 0; s < static_cast<int>(recvs.size()); ++s)
        CHECK(differences(recvs[s], seed_of(s, root), random) == 0);
      break;
    case operation::scatter:
      CHECK(differences(one, seed_of(root, me), random) == 0);
      break;
    case operation::allgather:
      for (int s = 0; s < n; ++s) CHECK(differences(recvs[s], seed_of(s, -1), random) == 0);
      break;
    case operation::alltoall:
      for (int s = 0; s < n; ++s) CHECK(differences(recvs[s], seed_of(s, me), random) == 0);
      break;
  }
}

inline ndzip::mpi::options with(ndzip::mpi::compression_choice c, std::size_t segment_bytes = 0) {
  ndzip::mpi::options o;
  o.compression = c;
  o.segment_bytes = segment_bytes;
  return o;
}

using ndzip::mpi::compression_choice;

// Every operation, type and rank; root 0 and the last rank.
template <class T, class Link>
void check_every_operation(Link& link) {
  const int last = world_size() - 1;
  for (operation o : all_operations)
    for (int root : {0, last}) {
      if ((o == operation::allgather || o == operation::alltoall) && root != 0) continue;
      check_operation<T, 1>(link, o, root, with(compression_choice::always), false, {});
      check_operation<T, 2>(link, o, root, with(compression_choice::always), false, {true, true});
      check_operation<T, 3>(link, o, root, with(compression_choice::always), false, {true, false});
    }
}

// Raw, adaptive, incompressible, many rounds.
template <class Link>
void check_every_way(Link& link) {
  const int last = world_size() - 1;
  for (operation o : all_operations) {
    const int root = o == operation::allgather || o == operation::alltoall ? 0 : last;
    check_operation<float, 2>(link, o, root, with(compression_choice::never), false, {true, true});
    check_operation<double, 3>(link, o, root, with(compression_choice::adaptive), false,
                               {true, true}, 6);
    check_operation<float, 1>(link, o, root, with(compression_choice::always), true, {true, false});
    // Segments of 4 KiB: 5-7 rounds of the 1-D pieces, a different number from each source.
    check_operation<float, 1>(link, o, root, with(compression_choice::always, 4096), false,
                              {true, true}, 2);
    check_operation<double, 2>(link, o, root, with(compression_choice::never, 4096), true,
                               {true, false});
  }
}

}  // namespace collective_checks
