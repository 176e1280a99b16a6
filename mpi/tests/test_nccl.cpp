// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The NCCL link (ndzip/mpi/nccl.hpp), where ndzip::mpi is built with it (a Kokkos with CUDA and
// NCCL: the GPU machines, one rank per GPU). Ranks pair up as in the other cases; the NCCL
// communicator spans MPI_COMM_WORLD, made from a unique id that MPI broadcasts.
#include <doctest/doctest.h>
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "nccl_test_support.hpp"
#include "ndzip/mpi.hpp"
#include "ndzip/mpi/nccl.hpp"

namespace {

using mpi_test::differences;
using mpi_test::fill;
using mpi_test::is_sender;
using mpi_test::peer;
using exec_space = Kokkos::Cuda;
using space = exec_space::memory_space;
// C order, which NCCL transfers take as it is (Kokkos::Cuda's default, LayoutLeft, is copied).
template <class Data>
using view_of = Kokkos::View<Data, Kokkos::LayoutRight, space>;

ndzip::mpi::options with_segments(std::size_t bytes, ndzip::mpi::compression_choice c) {
  ndzip::mpi::options o;
  o.segment_bytes = bytes;
  o.compression = c;
  return o;
}

// Sends a View of `extents` from the even rank to the odd one and checks it arrived bit for bit;
// returns the receiver's statistics (the sender's on the sender).
template <class T, int Dims>
ndzip::mpi::transfer_stats round_trip(const std::array<std::size_t, 3>& extents,
                                      const ndzip::mpi::options& opts, std::uint64_t seed,
                                      bool random = false) {
  using view = view_of<std::conditional_t<Dims == 1, T*, std::conditional_t<Dims == 2, T**, T***>>>;
  view v;
  if constexpr (Dims == 1) v = view("v", extents[0]);
  if constexpr (Dims == 2) v = view("v", extents[0], extents[1]);
  if constexpr (Dims == 3) v = view("v", extents[0], extents[1], extents[2]);
  ndzip::mpi::nccl_communicator<exec_space> nc(exec_space(), mpi_test::world_nccl(), opts);
  ndzip::mpi::transfer_stats stats;
  if (is_sender()) {
    fill(v, seed, random);
    stats = nc.send(v, peer());
  } else {
    stats = nc.recv(v, peer());
    exec_space().fence();
    CHECK(differences(v, seed, random) == 0);
  }
  CHECK(stats.raw_bytes == v.size() * sizeof(T));
  return stats;
}

}  // namespace

TEST_CASE("nccl: round trips of every rank and type, compressed and plain, one or many segments") {
  using ndzip::mpi::compression_choice;
  for (const auto c : {compression_choice::always, compression_choice::never}) {
    CAPTURE(ndzip::mpi::compression_name(c));
    // Many segments (4 KiB rows of 1 024 floats; 64 KiB segments: 16 rows each).
    // Plain: the largest segments (one per GiB), whatever options::segment_bytes says.
    const bool plain = c == compression_choice::never;
    auto s = round_trip<float, 2>({500, 1024, 1}, with_segments(64 << 10, c), 1);
    CHECK(s.segments == (plain ? 1 : 32));
    CHECK(s.plain == (c == compression_choice::never));
    // Never more than the values and the heads (these noisy values barely shrink).
    CHECK(s.wire_bytes <= s.raw_bytes + 128 + 32 * s.segments);
    round_trip<double, 1>({3 << 20, 1, 1}, with_segments(0, c), 2);
    round_trip<float, 3>({70, 64, 64}, with_segments(1 << 20, c), 3);
    // One segment, and two: fewer than the heads the opening carries.
    CHECK(round_trip<double, 3>({8, 32, 32}, with_segments(0, c), 4).segments == 1);
    CHECK(round_trip<float, 1>({2048, 1, 1}, with_segments(4096, c), 5).segments ==
          (plain ? 1 : 2));
    // No element at all: the opening alone.
    CHECK(round_trip<float, 2>({0, 7, 1}, with_segments(0, c), 6).segments == 0);
  }
}

TEST_CASE("nccl: incompressible values go raw, segment by segment") {
  const auto always = with_segments(256 << 10, ndzip::mpi::compression_choice::always);
  const auto s = round_trip<float, 1>({1 << 20, 1, 1}, always, 7, true);
  CHECK(s.segments == 16);
  CHECK(s.raw_segments == 16);
}

TEST_CASE("nccl: sendrecv moves both directions at once, of different shapes") {
  ndzip::mpi::nccl_communicator<exec_space> nc(exec_space(), mpi_test::world_nccl(),
                                               with_segments(128 << 10, {}));
  view_of<float**> even("even", 300, 512);
  view_of<double*> odd("odd", 200000);
  for (int step = 0; step < 3; ++step) {
    // Adaptive: the first transfers compress, then plain ones are timed; both arrive whole.
    if (is_sender()) {
      fill(even, 10 + step);
      const auto stats = nc.sendrecv(even, peer(), odd, peer());
      CHECK(stats.sent.raw_bytes == even.size() * sizeof(float));
      CHECK(stats.received.raw_bytes == odd.size() * sizeof(double));
      exec_space().fence();
      CHECK(differences(odd, 20 + step) == 0);
    } else {
      fill(odd, 20 + step);
      nc.sendrecv(odd, peer(), even, peer());
      exec_space().fence();
      CHECK(differences(even, 10 + step) == 0);
    }
  }
}

TEST_CASE("nccl: a transfer into a View of other extents is consumed and refused, in step") {
  ndzip::mpi::nccl_communicator<exec_space> nc(exec_space(), mpi_test::world_nccl(),
                                               with_segments(64 << 10, {}));
  view_of<float**> sent("sent", 256, 256), wrong("wrong", 255, 256);
  if (is_sender()) {
    fill(sent, 30);
    nc.send(sent, peer());
    nc.send(sent, peer());
  } else {
    CHECK_THROWS_AS(nc.recv(wrong, peer()), ndzip::mpi::mismatch_error);
    nc.recv(sent, peer());  // the next transfer matches: nothing of the first was left
    exec_space().fence();
    CHECK(differences(sent, 30) == 0);
  }
}

namespace {

// What a forged sender sends: `opening` (nccl_opening_bytes), then one NCCL message of each
// size in `payloads` (bytes 0xa5), on the instance's stream.
void forge(const std::vector<std::byte>& opening, const std::vector<std::size_t>& payloads) {
  using ndzip::mpi::detail::nccl_opening_bytes;
  std::size_t largest = 1;
  for (const std::size_t p : payloads) largest = std::max(largest, p);
  std::vector<std::byte> bytes(nccl_opening_bytes + largest, std::byte{0xa5});
  std::memcpy(bytes.data(), opening.data(), nccl_opening_bytes);
  Kokkos::View<std::byte*, space> device("forged", bytes.size());
  Kokkos::deep_copy(device, Kokkos::View<const std::byte*, Kokkos::HostSpace,
                                         Kokkos::MemoryUnmanaged>(bytes.data(), bytes.size()));
  const cudaStream_t stream = exec_space().cuda_stream();
  ncclSend(device.data(), nccl_opening_bytes, ncclUint8, peer(), mpi_test::world_nccl(), stream);
  for (const std::size_t p : payloads)
    ncclSend(device.data() + nccl_opening_bytes, p, ncclUint8, peer(), mpi_test::world_nccl(),
             stream);
  exec_space().fence();
}

// The opening of a 1-D float transfer of 2048 values in two segments of 1024 (4096 bytes),
// with `checksummed` in its head and the given segment heads.
std::vector<std::byte> opening_of(bool checksummed,
                                  const std::array<ndzip::mpi::detail::segment_head, 2>& heads) {
  using namespace ndzip::mpi::detail;
  transfer_head head;
  head.extents = {2048, 1, 1};
  head.segment_rows = 1024;
  head.checksummed = checksummed;
  std::vector<std::byte> opening(nccl_opening_bytes);
  write_transfer_head(head, opening.data());
  for (std::size_t k = 0; k < 2; ++k)
    write_segment_head(heads[k], false,
                       opening.data() + transfer_head_bytes + k * segment_head_bytes);
  return opening;
}

// The even rank forges a transfer (`forge_it`), then sends a sound one; the odd rank's receive
// of the forged one throws ndzip::stream_error saying `expected`, and the sound one arrives
// whole after it: nothing of the forged transfer was left unmatched.
template <class Forge>
void refused_then_in_step(Forge&& forge_it, const std::string& expected) {
  ndzip::mpi::nccl_communicator<exec_space> nc(exec_space(), mpi_test::world_nccl(),
                                               with_segments(4096, {}));
  view_of<float*> v("v", 2048);
  if (is_sender()) {
    forge_it();
    fill(v, 40);
    nc.send(v, peer());
  } else {
    try {
      nc.recv(v, peer());
      FAIL("the forged transfer was accepted");
    } catch (const ndzip::stream_error& e) {
      CAPTURE(e.what());
      CHECK(std::string(e.what()).find(expected) != std::string::npos);
    }
    nc.recv(v, peer());
    exec_space().fence();
    CHECK(differences(v, 40) == 0);
  }
}

}  // namespace

TEST_CASE("nccl: forged transfers are refused with a clear error, on the rank that receives them") {
  using ndzip::mpi::detail::segment_head;
  using ndzip::mpi::detail::segment_kind;
  const std::size_t raw = 4096;
  SUBCASE("a stream that does not decode: refused naming its segment, the rounds in step") {
    refused_then_in_step(
        [] {
          forge(opening_of(false, {segment_head{segment_kind::stream, 0, 1000},
                                   segment_head{segment_kind::stream, 1, 1000}}),
                {1000, 1000});
        },
        "segment 0");
  }
  SUBCASE("a head with checksums, which no NCCL sender writes: consumed and refused") {
    refused_then_in_step(
        [&] {
          forge(opening_of(true, {segment_head{segment_kind::raw, 0, raw},
                                  segment_head{segment_kind::raw, 1, raw}}),
                {raw, raw});
        },
        "checksums");
  }
  SUBCASE("a damaged transfer head: the later counts are unknown, the communicator out of step") {
    // The forger sends nothing after the opening, so the communicator stays usable here.
    refused_then_in_step(
        [] { forge(std::vector<std::byte>(ndzip::mpi::detail::nccl_opening_bytes,
                                          std::byte{0x5a}), {}); },
        "out of step");
  }
  SUBCASE("a segment head announcing more than its slab's values: out of step") {
    refused_then_in_step(
        [&] {
          forge(opening_of(false, {segment_head{segment_kind::stream, 0, raw + 1},
                                   segment_head{segment_kind::stream, 1, 1000}}),
                {});
        },
        "out of step");
  }
}

TEST_CASE("nccl: strided Views go through C-order copies, and exchange() matches pieces by tag") {
  // The faces of a 3-D block, each a strided subview, both ways at once; two pieces travel
  // between the same two ranks, told apart by their tags (listed in another order on each side).
  ndzip::mpi::nccl_communicator<exec_space> nc(exec_space(), mpi_test::world_nccl());
  using block = Kokkos::View<double***, space>;  // LayoutLeft on CUDA
  using face = Kokkos::View<double***, Kokkos::LayoutStride, space>;
  block mine("mine", 40, 48, 56), theirs("theirs", 40, 48, 56);
  fill(mine, 50 + mpi_test::rank());
  const std::pair<int, int> first_layer(0, 1);
  const face side(Kokkos::subview(mine, Kokkos::ALL, first_layer, Kokkos::ALL));
  const face top(Kokkos::subview(mine, Kokkos::ALL, Kokkos::ALL, first_layer));
  const face side_in(Kokkos::subview(theirs, Kokkos::ALL, first_layer, Kokkos::ALL));
  const face top_in(Kokkos::subview(theirs, Kokkos::ALL, Kokkos::ALL, first_layer));
  std::vector<ndzip::mpi::piece<face>> sends = {{top, peer(), 7}, {side, peer(), 3}};
  std::vector<ndzip::mpi::piece<face>> receives = {{side_in, peer(), 3}, {top_in, peer(), 7}};
  if (is_sender()) std::swap(sends[0], sends[1]);
  const auto stats = nc.exchange(sends, receives);
  CHECK(stats.sent.raw_bytes == (side.size() + top.size()) * sizeof(double));
  CHECK(stats.received.raw_bytes == stats.sent.raw_bytes);
  exec_space().fence();
  // What arrived is the peer's faces, value for value.
  block expected("expected", 40, 48, 56);
  fill(expected, 50 + peer());
  // Strided device Views reach the host through a C-order copy on the device.
  const auto on_host = [](const face& f) {
    const auto packed = mpi_test::contiguous_like(f);
    Kokkos::deep_copy(packed, f);
    return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), packed);
  };
  const auto got_side = on_host(side_in);
  const auto want_side =
      on_host(face(Kokkos::subview(expected, Kokkos::ALL, first_layer, Kokkos::ALL)));
  const auto got_top = on_host(top_in);
  const auto want_top =
      on_host(face(Kokkos::subview(expected, Kokkos::ALL, Kokkos::ALL, first_layer)));
  std::size_t wrong = 0;
  for (std::size_t a = 0; a < 40; ++a)
    for (std::size_t c = 0; c < 56; ++c)
      wrong += std::memcmp(&got_side(a, 0, c), &want_side(a, 0, c), sizeof(double)) != 0;
  for (std::size_t a = 0; a < 40; ++a)
    for (std::size_t b = 0; b < 48; ++b)
      wrong += std::memcmp(&got_top(a, b, 0), &want_top(a, b, 0), sizeof(double)) != 0;
  CHECK(wrong == 0);
}

TEST_CASE("nccl: calls it cannot make are refused before anything is sent") {
  view_of<float*> v("v", 64);
  ndzip::mpi::nccl_communicator<exec_space> nc(exec_space(), mpi_test::world_nccl());
  CHECK_THROWS_AS(nc.send(v, 1 << 20), std::invalid_argument);
  CHECK_THROWS_AS(nc.recv(v, -1), std::invalid_argument);
  ndzip::mpi::options checksummed;
  checksummed.checksum = true;
  CHECK_THROWS_AS(
      ndzip::mpi::nccl_communicator<exec_space>(exec_space(), mpi_test::world_nccl(), checksummed),
      std::invalid_argument);
  CHECK_THROWS_AS(ndzip::mpi::nccl_communicator<exec_space>(exec_space(), nullptr),
                  std::invalid_argument);
}
