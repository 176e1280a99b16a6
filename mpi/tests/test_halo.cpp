// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The halo exchange of a 3-D domain decomposition over all ranks (2x2x1 on 4 ranks, 2x1x1 on
// 2; periodic, so every rank has 26 neighbours, itself included where the grid is thin):
// ndzip::mpi::neighbor_exchange must leave every ghost cell bit for bit as a plain-MPI exchange
// of the same pieces does.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <cstring>
#include <ndzip/mpi.hpp>
#include <vector>

#include "mpi_test_support.hpp"

using namespace mpi_test;

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;
using block_view = Kokkos::View<double***>;
using piece_view = Kokkos::View<double***, Kokkos::LayoutStride>;
using range = std::pair<std::size_t, std::size_t>;

// The faces across axis 2 (64 x 66 as 2-D grids) hold a 64 x 64 hypercube and travel
// compressed; every other piece is too thin to hold one and travels raw.
constexpr std::array<std::size_t, 3> interior = {64, 66, 20};

// The cells of a block (interior plus one ghost layer) next to side `d` (-1, 0, 1 per axis):
// the interior layer a neighbour in direction d needs (ghost = false), or the ghost layer that
// the neighbour in direction d fills (ghost = true).
piece_view region(const block_view& block, const std::array<int, 3>& d, bool ghost) {
  std::array<range, 3> r;
  for (int a = 0; a < 3; ++a) {
    const std::size_t n = interior[a];
    if (d[a] == 0)
      r[a] = {1, n + 1};
    else if (d[a] < 0)
      r[a] = ghost ? range{0, 1} : range{1, 2};
    else
      r[a] = ghost ? range{n + 1, n + 2} : range{n, n + 1};
  }
  return Kokkos::subview(block, r[0], r[1], r[2]);
}

std::vector<std::array<int, 3>> directions() {
  std::vector<std::array<int, 3>> all;
  for (int x = -1; x <= 1; ++x)
    for (int y = -1; y <= 1; ++y)
      for (int z = -1; z <= 1; ++z)
        if (x || y || z) all.push_back({x, y, z});
  return all;
}

int tag_of(const std::array<int, 3>& d) { return (d[0] + 1) * 9 + (d[1] + 1) * 3 + (d[2] + 1); }

}  // namespace

TEST_CASE("ndzip::mpi::neighbor_exchange equals a plain-MPI halo exchange bit for bit") {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int dims[3] = {0, 0, 1};
  MPI_Dims_create(size, 3, dims);
  int periods[3] = {1, 1, 1};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
  int me = 0, coords[3];
  MPI_Comm_rank(cart, &me);
  MPI_Cart_coords(cart, me, 3, coords);
  const auto neighbour = [&](const std::array<int, 3>& d) {
    int c[3] = {coords[0] + d[0], coords[1] + d[1], coords[2] + d[2]};
    int r = 0;
    MPI_Cart_rank(cart, c, &r);
    return r;
  };

  const exec_space exec;
  block_view compressed("compressed", interior[0] + 2, interior[1] + 2, interior[2] + 2);
  block_view plain("plain", interior[0] + 2, interior[1] + 2, interior[2] + 2);
  // A smooth field that differs per rank, in the interior; ghosts start at a sentinel.
  Kokkos::deep_copy(compressed, -1.0);
  const auto inner = Kokkos::subview(compressed, range{1, interior[0] + 1},
                                     range{1, interior[1] + 1}, range{1, interior[2] + 1});
  fill(inner, 100 + static_cast<std::uint64_t>(me));
  Kokkos::deep_copy(plain, compressed);

  // Each rank sends towards d what the neighbour there keeps in its ghost layer at -d, with
  // the tag of d; it receives from the neighbour at -d (sending towards d) into its own ghost
  // layer at -d.
  std::vector<ndzip::mpi::piece<piece_view>> sends, receives;
  for (const auto& d : directions()) {
    const std::array<int, 3> back = {-d[0], -d[1], -d[2]};
    sends.push_back({region(compressed, d, false), neighbour(d), tag_of(d)});
    receives.push_back({region(compressed, back, true), neighbour(back), tag_of(d)});
  }
  ndzip::mpi::neighbor_exchange<exec_space, piece_view> halo(exec, cart, sends, receives);
  CHECK(halo.send_count() == 26);
  const auto stats = halo.exchange();
  CHECK(stats.sent.segments == 26);
  CHECK(stats.received.segments == 26);
  CHECK(stats.sent.wire_bytes <= stats.sent.raw_bytes + 26 * 96);
  CHECK(stats.sent.raw_segments == 24);
  CHECK(stats.received.raw_segments == 24);

  // The same exchange with its messages handed to MPI in device memory (options::transport), and
  // checksummed: the same bytes on the wire, the same ghosts.
  if (mpi_device_testable()) {
    block_view direct("direct", interior[0] + 2, interior[1] + 2, interior[2] + 2);
    Kokkos::deep_copy(direct, -1.0);
    fill(Kokkos::subview(direct, range{1, interior[0] + 1}, range{1, interior[1] + 1},
                         range{1, interior[2] + 1}),
         100 + static_cast<std::uint64_t>(me));
    std::vector<ndzip::mpi::piece<piece_view>> direct_sends, direct_receives;
    for (const auto& d : directions()) {
      const std::array<int, 3> back = {-d[0], -d[1], -d[2]};
      direct_sends.push_back({region(direct, d, false), neighbour(d), tag_of(d)});
      direct_receives.push_back({region(direct, back, true), neighbour(back), tag_of(d)});
    }
    ndzip::mpi::options opts;
    opts.transport = ndzip::mpi::transport_kind::mpi_device;
    opts.checksum = true;
    ndzip::mpi::neighbor_exchange<exec_space, piece_view> direct_halo(exec, cart, direct_sends,
                                                                      direct_receives, opts);
    const auto direct_stats = direct_halo.exchange();
    CHECK(direct_stats.sent.wire_bytes == stats.sent.wire_bytes);
    const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), direct);
    const auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), compressed);
    CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
  }

  // The same pieces by plain MPI: packed on the host, raw bytes.
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), plain);
  std::vector<std::vector<double>> out, in;
  std::vector<MPI_Request> requests;
  for (const auto& d : directions()) {
    const std::array<int, 3> back = {-d[0], -d[1], -d[2]};
    const auto from = region(plain, d, false);
    const auto to = region(plain, back, true);
    auto& o = out.emplace_back(from.size());
    std::size_t i = 0;
    for (std::size_t a = 0; a < from.extent(0); ++a)
      for (std::size_t b = 0; b < from.extent(1); ++b)
        for (std::size_t c = 0; c < from.extent(2); ++c) {
          // The host mirror at the same offsets as the piece.
          const auto base = from.data() - plain.data();
          o[i++] = host.data()[base + a * from.stride(0) + b * from.stride(1) + c * from.stride(2)];
        }
    in.emplace_back(to.size());
    requests.emplace_back();
    MPI_Irecv(in.back().data(), static_cast<int>(to.size()), MPI_DOUBLE, neighbour(back),
              1000 + tag_of(d), cart, &requests.back());
  }
  std::size_t k = 0;
  for (const auto& d : directions()) {
    requests.emplace_back();
    MPI_Isend(out[k].data(), static_cast<int>(out[k].size()), MPI_DOUBLE, neighbour(d),
              1000 + tag_of(d), cart, &requests.back());
    ++k;
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  k = 0;
  for (const auto& d : directions()) {
    const std::array<int, 3> back = {-d[0], -d[1], -d[2]};
    const auto to = region(plain, back, true);
    const auto base = to.data() - plain.data();
    std::size_t i = 0;
    for (std::size_t a = 0; a < to.extent(0); ++a)
      for (std::size_t b = 0; b < to.extent(1); ++b)
        for (std::size_t c = 0; c < to.extent(2); ++c)
          host.data()[base + a * to.stride(0) + b * to.stride(1) + c * to.stride(2)] = in[k][i++];
    ++k;
  }

  auto result = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), compressed);
  REQUIRE(result.size() == host.size());
  CHECK(std::memcmp(result.data(), host.data(), host.size() * sizeof(double)) == 0);
  // Every ghost cell was written (no sentinel left) in both.
  std::size_t sentinels = 0;
  for (std::size_t i = 0; i < result.size(); ++i) sentinels += result.data()[i] == -1.0;
  CHECK(sentinels == 0);

  // A second exchange of changed values reuses the scratch: every ghost layer at -d must now
  // hold the new values of the neighbour's interior layer towards d.
  fill(inner, 200 + static_cast<std::uint64_t>(me));
  halo.exchange();
  auto again = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), compressed);
  std::size_t stale = 0;
  for (const auto& d : directions()) {
    const std::array<int, 3> back = {-d[0], -d[1], -d[2]};
    // The neighbour's block, rebuilt from its seed.
    block_view theirs("theirs", interior[0] + 2, interior[1] + 2, interior[2] + 2);
    fill(Kokkos::subview(theirs, range{1, interior[0] + 1}, range{1, interior[1] + 1},
                         range{1, interior[2] + 1}),
         200 + static_cast<std::uint64_t>(neighbour(back)));
    auto theirs_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), theirs);
    const auto from = region(theirs, d, false);
    const auto to = region(compressed, back, true);
    const auto from_base = from.data() - theirs.data();
    const auto to_base = to.data() - compressed.data();
    for (std::size_t a = 0; a < to.extent(0); ++a)
      for (std::size_t b = 0; b < to.extent(1); ++b)
        for (std::size_t c = 0; c < to.extent(2); ++c) {
          const double want =
              theirs_host
                  .data()[from_base + a * from.stride(0) + b * from.stride(1) + c * from.stride(2)];
          const double got =
              again.data()[to_base + a * to.stride(0) + b * to.stride(1) + c * to.stride(2)];
          stale += std::memcmp(&want, &got, sizeof want) != 0;
        }
  }
  CHECK(stale == 0);
  MPI_Comm_free(&cart);
}

TEST_CASE("ndzip::mpi::neighbor_exchange batches pieces by the rank of their grids") {
  // Pieces of one View type whose grids, less their extents of 1, are 1-D (a line of 5000),
  // 2-D (a 64 x 64 face) and 3-D (16 x 16 x 20): one batch each, every piece compressed, each
  // arriving bit for bit at the paired rank.
  const exec_space exec;
  const std::array<std::array<std::size_t, 3>, 3> shapes = {
      {{1, 1, 5000}, {1, 64, 64}, {16, 16, 20}}};
  std::vector<ndzip::mpi::piece<piece_view>> sends, receives;
  std::vector<block_view> received;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto& e = shapes[i];
    block_view mine("mine", e[0], e[1], e[2]);
    fill(mine, 300 + 10 * static_cast<std::uint64_t>(rank()) + i);
    received.emplace_back("theirs", e[0], e[1], e[2]);
    sends.push_back({piece_view(mine), peer(), 300 + static_cast<int>(i)});
    receives.push_back({piece_view(received.back()), peer(), 300 + static_cast<int>(i)});
  }
  ndzip::mpi::neighbor_exchange<exec_space, piece_view> exchange(exec, MPI_COMM_WORLD, sends,
                                                                 receives);
  const auto stats = exchange.exchange();
  CHECK(stats.sent.segments == 3);
  CHECK(stats.sent.raw_segments == 0);
  CHECK(stats.sent.wire_bytes < stats.sent.raw_bytes);
  CHECK(stats.received.raw_segments == 0);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    CAPTURE(i);
    CHECK(differences(received[i], 300 + 10 * static_cast<std::uint64_t>(peer()) + i) == 0);
  }
}

TEST_CASE("ndzip::mpi::neighbor_exchange compresses or sends raw as options::compression says") {
  // The pieces of the batching case; `never`: every piece raw (the same messages a piece too
  // small to shrink makes); `adaptive`: compressed until timed, then raw until timed (the first
  // exchange of each way untimed), whatever the times; every exchange arriving whole.
  const exec_space exec;
  const std::array<std::array<std::size_t, 3>, 3> shapes = {
      {{1, 1, 5000}, {1, 64, 64}, {16, 16, 20}}};
  for (const auto choice :
       {ndzip::mpi::compression_choice::never, ndzip::mpi::compression_choice::adaptive}) {
    CAPTURE(ndzip::mpi::compression_name(choice));
    std::vector<ndzip::mpi::piece<piece_view>> sends, receives;
    std::vector<block_view> mine, received;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const auto& e = shapes[i];
      mine.emplace_back("mine", e[0], e[1], e[2]);
      received.emplace_back("theirs", e[0], e[1], e[2]);
      sends.push_back({piece_view(mine.back()), peer(), 400 + static_cast<int>(i)});
      receives.push_back({piece_view(received.back()), peer(), 400 + static_cast<int>(i)});
    }
    ndzip::mpi::options opts;
    opts.compression = choice;
    ndzip::mpi::neighbor_exchange<exec_space, piece_view> exchange(exec, MPI_COMM_WORLD, sends,
                                                                   receives, opts);
    std::vector<bool> raw_ways;
    for (std::uint64_t round = 0; round < 4; ++round) {
      for (std::size_t i = 0; i < shapes.size(); ++i)
        fill(mine[i], 500 + 100 * round + 10 * static_cast<std::uint64_t>(rank()) + i);
      const auto stats = exchange.exchange();
      raw_ways.push_back(stats.sent.plain);
      CHECK(stats.sent.segments == 3);
      CHECK(stats.sent.raw_segments == (stats.sent.plain ? 3 : 0));
      if (stats.sent.plain) CHECK(stats.sent.wire_bytes == stats.sent.raw_bytes + 3 * 96);
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        CAPTURE(round);
        CAPTURE(i);
        CHECK(differences(received[i],
                          500 + 100 * round + 10 * static_cast<std::uint64_t>(peer()) + i) == 0);
      }
    }
    if (choice == ndzip::mpi::compression_choice::never)
      CHECK(raw_ways == std::vector<bool>{true, true, true, true});
    else
      CHECK(raw_ways == std::vector<bool>{false, false, true, true});
  }
}
