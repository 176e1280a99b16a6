// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip::mpi between pairs of ranks: bit-exact round trips, strided Views, empty Views,
// incompressible data, mismatched receives, and many requests in flight.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cstring>
#include <ndzip/mpi.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mpi_test_support.hpp"

using namespace mpi_test;

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;

template <class T, int Dims>
auto make_view(const std::string& label, const std::array<std::size_t, 3>& e) {
  if constexpr (Dims == 1)
    return Kokkos::View<T*>(label, e[0]);
  else if constexpr (Dims == 2)
    return Kokkos::View<T**>(label, e[0], e[1]);
  else
    return Kokkos::View<T***>(label, e[0], e[1], e[2]);
}

// One message from each sender to its receiver; the receiver checks every bit.
template <class T, int Dims>
void round_trip(const std::array<std::size_t, 3>& e, std::size_t segment_bytes, int tag,
                bool random = false) {
  CAPTURE(Dims);
  CAPTURE(sizeof(T));
  CAPTURE(e[0]);
  CAPTURE(e[1]);
  CAPTURE(e[2]);
  CAPTURE(segment_bytes);
  const exec_space exec;
  const std::uint64_t seed = static_cast<std::uint64_t>(tag) * 7 + Dims;
  auto values = make_view<T, Dims>("values", e);
  ndzip::mpi::options opts;
  opts.segment_bytes = segment_bytes;
  opts.checksum = tag % 2 == 0;  // half the transfers with segment checksums, half without
  if (is_sender()) {
    fill(values, seed, random);
    const auto stats = ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
    CHECK(stats.raw_bytes == values.size() * sizeof(T));
    // Never more than the values plus the heads (64 bytes, 32 per segment).
    CHECK(stats.wire_bytes <=
          stats.raw_bytes + 64 + 32 * std::max<std::uint64_t>(stats.segments, 1));
    if (!random && values.size() >= 4096 && segment_bytes >= (1 << 20))
      CHECK(stats.wire_bytes < stats.raw_bytes);
    if (random) CHECK(stats.raw_segments == stats.segments);
  } else {
    const auto stats = ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD);
    CHECK(differences(values, seed, random) == 0);
    CHECK(stats.raw_bytes == values.size() * sizeof(T));
  }
}

}  // namespace

TEST_CASE(
    "ndzip::mpi round trips are bit-exact: float and double, rank 1-3, one or many segments") {
  for (const std::size_t segment : {std::size_t{16} << 20, std::size_t{5000}}) {
    round_trip<float, 1>({100003, 1, 1}, segment, 1);
    round_trip<double, 1>({70001, 1, 1}, segment, 2);
    round_trip<float, 2>({301, 199, 1}, segment, 3);
    round_trip<double, 2>({64, 640, 1}, segment, 4);
    round_trip<float, 3>({17, 33, 65}, segment, 5);
    round_trip<double, 3>({40, 20, 33}, segment, 6);
    round_trip<float, 1>({5, 1, 1}, segment, 7);
  }
}

TEST_CASE("ndzip::mpi: device buffers handed to MPI directly carry the bytes staged ones do") {
  if (!mpi_device_testable()) return;
  using path = ndzip::mpi::transport_kind;
  const exec_space exec;
  int tag = 600;
  const std::pair<path, path> paths[] = {
      {path::staged, path::mpi_device},
      {path::mpi_device, path::staged},
      {path::mpi_device, path::mpi_device}};
  for (const bool checksum : {false, true}) {
    for (const bool random : {false, true}) {
      for (const auto& pair : paths) {
        // Named copies, not a structured binding: CAPTURE takes them into a lambda.
        const path send_path = pair.first, recv_path = pair.second;
        CAPTURE(checksum);
        CAPTURE(random);
        CAPTURE(static_cast<int>(send_path));
        CAPTURE(static_cast<int>(recv_path));
        ++tag;
        // Segments of 16, 16 and 8 rows: a hypercube thick, and too thin for one (raw values).
        Kokkos::View<float***> values("values", 40, 33, 20);
        ndzip::mpi::options opts;
        opts.segment_bytes = 16 * 33 * 20 * sizeof(float);
        opts.checksum = checksum;
        const std::uint64_t seed = static_cast<std::uint64_t>(tag);
        if (is_sender()) {
          fill(values, seed, random);
          opts.transport = path::staged;
          const auto staged = ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
          opts.transport = send_path;
          const auto sent = ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
          CHECK(sent.wire_bytes == staged.wire_bytes);
          CHECK(sent.segments == 3);
          CHECK(sent.raw_segments == (random ? 3 : 1));
        } else {
          opts.transport = recv_path;
          for (int pass = 0; pass < 2; ++pass) {
            CAPTURE(pass);
            Kokkos::deep_copy(values, 0.0f);
            ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
            CHECK(differences(values, seed, random) == 0);
          }
        }
      }
    }
  }
}

TEST_CASE("ndzip::mpi: Views without elements send only the transfer head") {
  round_trip<float, 1>({0, 1, 1}, 1 << 20, 8);
  round_trip<double, 2>({5, 0, 1}, 1 << 20, 9);
  round_trip<float, 3>({0, 3, 4}, 1 << 20, 10);
  round_trip<double, 3>({3, 4, 0}, 1 << 20, 11);
  const exec_space exec;
  Kokkos::View<float**> empty("empty", 0, 7);
  if (is_sender())
    CHECK(ndzip::mpi::send(exec, empty, peer(), 12, MPI_COMM_WORLD).wire_bytes == 64);
  else
    CHECK(ndzip::mpi::recv(exec, empty, peer(), 12, MPI_COMM_WORLD).wire_bytes == 64);
}

TEST_CASE("ndzip::mpi: incompressible values go raw, never more than the values plus heads") {
  round_trip<double, 1>({100000, 1, 1}, 64 << 10, 13, true);
  round_trip<float, 3>({30, 40, 50}, 20 << 10, 14, true);
  round_trip<float, 2>({3, 5, 1}, 1 << 20, 15, true);
}

TEST_CASE("ndzip::mpi: strided faces and sub-boxes, received into strided Views") {
  const exec_space exec;
  Kokkos::View<double***> block("block", 24, 20, 16);
  using Kokkos::ALL;
  using range = std::pair<int, int>;
  const auto faces = [](const Kokkos::View<double***>& b) {
    return std::make_tuple(Kokkos::subview(b, 0, ALL, ALL), Kokkos::subview(b, ALL, 3, ALL),
                           Kokkos::subview(b, ALL, ALL, 15),
                           Kokkos::subview(b, range(2, 10), range(1, 19), range(3, 9)),
                           Kokkos::subview(b, 7, 2, ALL), Kokkos::subview(b, ALL, 19, 0));
  };
  const double sentinel = -7.25;
  if (!is_sender()) Kokkos::deep_copy(block, sentinel);
  const auto [i0, j3, k15, box, line, column] = faces(block);
  ndzip::mpi::options small;
  small.segment_bytes = 512;  // several segments per face
  // The pieces overlap: each is sent right after it is filled, and checked right after it is
  // received.
  int tag = 30;
  const auto exchange = [&](const auto& piece, const ndzip::mpi::options& opts) {
    CAPTURE(tag);
    if (is_sender()) {
      fill(piece, tag);
      ndzip::mpi::send(exec, piece, peer(), tag, MPI_COMM_WORLD, opts);
    } else {
      ndzip::mpi::recv(exec, piece, peer(), tag, MPI_COMM_WORLD);
      CHECK(differences(piece, tag) == 0);
    }
    ++tag;
  };
  exchange(i0, small);
  exchange(j3, small);
  exchange(k15, small);
  exchange(box, small);
  exchange(line, {});
  exchange(column, {});
  if (!is_sender()) {
    // Nothing outside the received Views was written.
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), block);
    std::size_t touched = 0;
    for (int a = 0; a < 24; ++a)
      for (int b = 0; b < 20; ++b)
        for (int c = 0; c < 16; ++c) {
          const bool inside = a == 0 || b == 3 || c == 15 ||
                              (a >= 2 && a < 10 && b >= 1 && b < 19 && c >= 3 && c < 9) ||
                              (a == 7 && b == 2) || (b == 19 && c == 0);
          if (!inside && host(a, b, c) != sentinel) ++touched;
        }
    CHECK(touched == 0);
  }
}

TEST_CASE("ndzip::mpi: a LayoutLeft View receives the same elements as a LayoutRight one sent") {
  const exec_space exec;
  Kokkos::View<float***, Kokkos::LayoutRight> right("right", 9, 31, 70);
  Kokkos::View<float***, Kokkos::LayoutLeft> left("left", 9, 31, 70);
  if (is_sender()) {
    fill(left, 40);
    ndzip::mpi::send(exec, left, peer(), 40, MPI_COMM_WORLD);
    fill(right, 41);
    ndzip::mpi::send(exec, right, peer(), 41, MPI_COMM_WORLD);
  } else {
    ndzip::mpi::recv(exec, right, peer(), 40, MPI_COMM_WORLD);
    CHECK(differences(right, 40) == 0);
    ndzip::mpi::recv(exec, left, peer(), 41, MPI_COMM_WORLD);
    CHECK(differences(left, 41) == 0);
  }
}

TEST_CASE(
    "ndzip::mpi: a receive into another type or other extents throws, names both, "
    "consumes the message") {
  const exec_space exec;
  Kokkos::View<float**> sent("sent", 10, 10);
  Kokkos::View<float**> many("many segments", 1000, 100);
  Kokkos::View<float*> line("line", 100);
  ndzip::mpi::options small;
  small.segment_bytes = 4096;
  if (is_sender()) {
    fill(sent, 50);
    fill(many, 51);
    // Each mismatched message is followed by one the receiver takes correctly: the mismatch
    // left nothing of its message behind.
    ndzip::mpi::send(exec, sent, peer(), 50, MPI_COMM_WORLD);
    ndzip::mpi::send(exec, sent, peer(), 50, MPI_COMM_WORLD);
    ndzip::mpi::send(exec, many, peer(), 51, MPI_COMM_WORLD, small);
    ndzip::mpi::send(exec, many, peer(), 51, MPI_COMM_WORLD, small);
    ndzip::mpi::send(exec, sent, peer(), 52, MPI_COMM_WORLD);
    ndzip::mpi::send(exec, sent, peer(), 52, MPI_COMM_WORLD);
  } else {
    Kokkos::View<double**> as_double("as double", 10, 10);
    Kokkos::deep_copy(as_double, 3.0);
    try {
      ndzip::mpi::recv(exec, as_double, peer(), 50, MPI_COMM_WORLD);
      FAIL("a float message was received into a double View");
    } catch (const ndzip::mpi::mismatch_error& e) {
      const std::string what = e.what();
      CHECK(what.find("float 10x10") != std::string::npos);
      CHECK(what.find("double 10x10") != std::string::npos);
      CHECK(what.find("as double") != std::string::npos);
      CHECK(what.find("rank " + std::to_string(peer())) != std::string::npos);
    }
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), as_double);
    CHECK(std::all_of(host.data(), host.data() + host.size(), [](double v) { return v == 3.0; }));
    ndzip::mpi::recv(exec, sent, peer(), 50, MPI_COMM_WORLD);
    CHECK(differences(sent, 50) == 0);

    Kokkos::View<float**> narrower("narrower", 1000, 99);
    CHECK_THROWS_WITH_AS(ndzip::mpi::recv(exec, narrower, peer(), 51, MPI_COMM_WORLD),
                         doctest::Contains("float 1000x100"), ndzip::mpi::mismatch_error);
    ndzip::mpi::recv(exec, many, peer(), 51, MPI_COMM_WORLD);
    CHECK(differences(many, 51) == 0);

    CHECK_THROWS_WITH_AS(ndzip::mpi::recv(exec, line, peer(), 52, MPI_COMM_WORLD),
                         doctest::Contains("float 100"), ndzip::mpi::mismatch_error);
    ndzip::mpi::recv(exec, sent, peer(), 52, MPI_COMM_WORLD);
    CHECK(differences(sent, 50) == 0);
  }
}

TEST_CASE("ndzip::mpi: many requests in flight, completed in any order") {
  const exec_space exec;
  constexpr int count = 12;
  std::vector<Kokkos::View<double**>> views;
  for (int i = 0; i < count; ++i)
    views.emplace_back("message " + std::to_string(i), 50 + 13 * i, 40 + 7 * (i % 5));
  std::vector<ndzip::mpi::request> requests;
  std::mt19937 shuffle(1234);
  ndzip::mpi::options small;
  small.segment_bytes = 8192;
  // One communicator: its buffers and codecs are shared by all requests in flight.
  const ndzip::mpi::communicator<exec_space> channel(exec, MPI_COMM_WORLD, small);
  if (is_sender()) {
    for (int i = 0; i < count; ++i) {
      fill(views[i], 60 + i);
      requests.push_back(channel.isend(views[i], peer(), 60 + i));
    }
    std::shuffle(requests.begin(), requests.end(), shuffle);
    for (auto& r : requests) r.wait();
  } else {
    // Posted in reverse order, completed by polling in a random order.
    for (int i = count - 1; i >= 0; --i)
      requests.push_back(channel.irecv(views[i], peer(), 60 + i));
    std::vector<int> order(count);
    for (int i = 0; i < count; ++i) order[i] = i;
    int left = count;
    while (left > 0) {
      std::shuffle(order.begin(), order.end(), shuffle);
      for (const int i : order)
        if (!requests[i].done() && requests[i].test()) --left;
    }
    for (int i = 0; i < count; ++i) CHECK(differences(views[i], 60 + i) == 0);
  }
}

TEST_CASE("ndzip::mpi: MPI_ANY_SOURCE and MPI_ANY_TAG match like MPI_Recv") {
  const exec_space exec;
  Kokkos::View<float*> values("values", 3000);
  if (is_sender()) {
    fill(values, 70);
    ndzip::mpi::send(exec, values, peer(), 70, MPI_COMM_WORLD);
  } else {
    ndzip::mpi::recv(exec, values, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD);
    CHECK(differences(values, 70) == 0);
  }
}

TEST_CASE("ndzip::mpi under MPI_THREAD_FUNNELED refuses calls from other threads") {
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided != MPI_THREAD_FUNNELED) return;
  Kokkos::View<float*> values("values", 10);
  std::string error;
  std::thread other([&] {
    try {
      ndzip::mpi::send(exec_space(), values, peer(), 80, MPI_COMM_WORLD);
    } catch (const std::logic_error& e) {
      error = e.what();
    }
  });
  other.join();
  CHECK(error.find("MPI_THREAD_FUNNELED") != std::string::npos);
}

TEST_CASE("ndzip::mpi::communicator: repeated transfers of changing sizes reuse its memory") {
  const exec_space exec;
  ndzip::mpi::options opts;
  opts.segment_bytes = 20000;
  const ndzip::mpi::communicator<exec_space> channel(exec, MPI_COMM_WORLD, opts);
  for (int round = 0; round < 6; ++round) {
    // Sizes that go up and down, so that buffers of several sizes are taken and given back.
    const std::size_t n = 3000 + static_cast<std::size_t>((round * 7919) % 5) * 4000;
    Kokkos::View<float**> values("values", n / 100, 100);
    const int tag = 110 + round;
    if (is_sender()) {
      fill(values, static_cast<std::uint64_t>(tag));
      channel.send(values, peer(), tag);
    } else {
      channel.recv(values, peer(), tag);
      CHECK(differences(values, static_cast<std::uint64_t>(tag)) == 0);
    }
  }
}

TEST_CASE("ndzip::mpi: a send that fails part way leaves the receiver an error, not a hang") {
  // One segment compressed ahead (pipeline_depth 1): segment 3 of 4 fails on the sender after
  // segments 0 and 1 are on the wire. The receiver, which waits for all four, must get
  // ndzip::stream_error saying the sender gave up at segment 2, and a later transfer on the same
  // tag must arrive intact (nothing left over on either side).
  const exec_space exec;
  ndzip::mpi::options opts;
  opts.segment_bytes = 100 * 100 * sizeof(double);
  opts.pipeline_depth = 1;
  Kokkos::View<double**> values("values", 400, 100);
  constexpr int tag = 120;
  if (is_sender()) {
    fill(values, tag);
    ndzip::mpi::detail::send_fault_at() = 3;
    CHECK_THROWS_WITH_AS(ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, opts),
                         doctest::Contains("fault injected before segment 3"), std::runtime_error);
    CHECK(ndzip::mpi::detail::send_fault_at() == -1);
    ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
  } else {
    CHECK_THROWS_WITH_AS(ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD),
                         doctest::Contains("segment 2 of the received message is empty"),
                         ndzip::stream_error);
    Kokkos::deep_copy(values, 0.0);
    ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD);
    CHECK(differences(values, tag) == 0);
  }
}

TEST_CASE("ndzip::mpi: a send that fails before its first message is posted sends nothing") {
  // Segment 0 is posted once segment 1 is queued: segment 1 fails while segment 0 is still
  // being compressed, so nothing is on the wire; the receiver gets the next transfer on the
  // tag, intact.
  const exec_space exec;
  ndzip::mpi::options opts;
  opts.segment_bytes = 100 * 100 * sizeof(double);
  Kokkos::View<double**> values("values", 400, 100);
  constexpr int tag = 121;
  if (is_sender()) {
    fill(values, tag);
    ndzip::mpi::detail::send_fault_at() = 1;
    CHECK_THROWS_WITH_AS(ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, opts),
                         doctest::Contains("fault injected before segment 1"), std::runtime_error);
    ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
  } else {
    const auto stats = ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD);
    CHECK(stats.segments == 4);
    CHECK(differences(values, tag) == 0);
  }
}

TEST_CASE("ndzip::mpi: a face one cell thick compresses as the 2-D grid it is") {
  // ndzip's 3-D hypercubes span all three axes, so a (128, 128, 1) grid holds none and would
  // travel raw; as a 128 x 128 grid it holds four 64 x 64 hypercubes. The face is a strided
  // subview of a block, received into a contiguous View of the same extents.
  const exec_space exec;
  Kokkos::View<double***> block("block", 128, 128, 3);
  const auto face = Kokkos::subview(block, Kokkos::ALL, Kokkos::ALL, std::pair<int, int>{1, 2});
  constexpr int tag = 121;
  if (is_sender()) {
    fill(face, tag);
    const auto stats = ndzip::mpi::send(exec, face, peer(), tag, MPI_COMM_WORLD);
    CHECK(stats.raw_segments == 0);
    CHECK(stats.wire_bytes < stats.raw_bytes * 9 / 10);
  } else {
    Kokkos::View<double***> received("received", 128, 128, 1);
    const auto stats = ndzip::mpi::recv(exec, received, peer(), tag, MPI_COMM_WORLD);
    CHECK(stats.raw_segments == 0);
    CHECK(differences(received, tag) == 0);
  }
}

TEST_CASE("ndzip::mpi buffer pool: the buffers of a transfer of many segments are all kept") {
  // A 1 GiB transfer at 16 MiB a segment holds 64 staging buffers at once; the pool kept 32,
  // so every such transfer allocated pinned memory again (slower than the transfer on an H200).
  const auto memory = std::make_shared<ndzip::mpi::detail::buffer_pool<exec_space>>(exec_space{});
  for (int round = 0; round < 3; ++round) {
    std::vector<ndzip::mpi::detail::buffer_pool<exec_space>::lease<
        ndzip::mpi::detail::buffer_pool<exec_space>::staging_bytes>>
        held;
    for (int k = 0; k < 100; ++k) held.push_back(memory->staging_buffer(20000));
    CHECK(memory->allocations() == 100);
  }
  // Above 1 MiB, whole MiB: a 16 MiB segment and its heads take 17 MiB, not 32.
  CHECK(memory->staging_buffer((16u << 20) + 96).size() == (17u << 20));
}

TEST_CASE(
    "ndzip::mpi: receives match in the order they were posted, whatever order completes them") {
  // A and B posted on one source and tag, B waited for first: A must still get the first
  // message (it got the second, and B the first, when a receive matched only once waited for).
  const exec_space exec;
  constexpr int tag = 130;
  ndzip::mpi::options opts;
  opts.segment_bytes = 4096;  // several segments each
  Kokkos::View<float**> a("A", 40, 100), b("B", 40, 100);
  if (is_sender()) {
    fill(a, 1);
    fill(b, 2);
    ndzip::mpi::send(exec, a, peer(), tag, MPI_COMM_WORLD, opts);
    ndzip::mpi::send(exec, b, peer(), tag, MPI_COMM_WORLD, opts);
  } else {
    auto first = ndzip::mpi::irecv(exec, a, peer(), tag, MPI_COMM_WORLD);
    auto second = ndzip::mpi::irecv(exec, b, peer(), tag, MPI_COMM_WORLD);
    second.wait();
    first.wait();
    CHECK(differences(a, 1) == 0);
    CHECK(differences(b, 2) == 0);
  }

  // Sixteen of different sizes on one tag, completed in a random order by wait() and test():
  // 15 of 16 threw mismatch_error and lost their messages.
  constexpr int count = 16;
  std::vector<Kokkos::View<double*>> views;
  for (int i = 0; i < count; ++i) views.emplace_back("message " + std::to_string(i), 700 + 300 * i);
  const ndzip::mpi::communicator<exec_space> channel(exec, MPI_COMM_WORLD, opts);
  if (is_sender()) {
    std::vector<ndzip::mpi::request> sends;
    for (int i = 0; i < count; ++i) {
      fill(views[i], 200 + i);
      sends.push_back(channel.isend(views[i], peer(), tag + 1));
    }
    for (auto& s : sends) s.wait();
  } else {
    std::vector<ndzip::mpi::request> receives;
    for (int i = 0; i < count; ++i) receives.push_back(channel.irecv(views[i], peer(), tag + 1));
    std::vector<int> order(count);
    for (int i = 0; i < count; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(77));
    for (int j = 0; j < count; ++j) {
      if (j % 2 == 0) {
        receives[order[j]].wait();
      } else {
        while (!receives[order[j]].test()) {
        }
      }
    }
    for (int i = 0; i < count; ++i) {
      CAPTURE(i);
      CHECK(differences(views[i], 200 + i) == 0);
    }
  }
}

TEST_CASE("ndzip::mpi: a receive destroyed before it matched is cancelled, even while unwinding") {
  // Its destructor waited for a message that was never sent, so the exception being thrown
  // never reached its handler. Nothing may be consumed: the message sent afterwards on the same
  // tag goes to the next receive.
  const exec_space exec;
  constexpr int tag = 140, go = 141;
  Kokkos::View<float*> values("values", 5000);
  if (is_sender()) {
    int token = 0;
    MPI_Recv(&token, 1, MPI_INT, peer(), go, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fill(values, tag);
    ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD);
  } else {
    bool handled = false;
    try {
      auto pending = ndzip::mpi::irecv(exec, values, peer(), tag, MPI_COMM_WORLD);
      CHECK_FALSE(pending.test());
      throw std::runtime_error("unwinding");
    } catch (const std::runtime_error&) {
      handled = true;
    }
    CHECK(handled);
    int token = 1;
    MPI_Send(&token, 1, MPI_INT, peer(), go, MPI_COMM_WORLD);
    ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD);
    CHECK(differences(values, tag) == 0);
  }
}

TEST_CASE("ndzip::mpi: segments hold 4096 bytes of values at least, whatever segment_bytes says") {
  // options::segment_bytes = 1 made a segment, a message and a staging buffer per value (22 s
  // and 530 MB per rank for 400 KB).
  const exec_space exec;
  constexpr int tag = 150;
  ndzip::mpi::options tiny;
  tiny.segment_bytes = 1;
  Kokkos::View<float*> values("values", 100000);
  Kokkos::View<double**> rows("rows", 300, 3);  // 24-byte rows: 171 to a segment
  if (is_sender()) {
    fill(values, tag);
    fill(rows, tag + 1);
    CHECK(ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, tiny).segments == 98);
    CHECK(ndzip::mpi::send(exec, rows, peer(), tag, MPI_COMM_WORLD, tiny).segments == 2);
  } else {
    CHECK(ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD).segments == 98);
    CHECK(ndzip::mpi::recv(exec, rows, peer(), tag, MPI_COMM_WORLD).segments == 2);
    CHECK(differences(values, tag) == 0);
    CHECK(differences(rows, tag + 1) == 0);
  }
}

TEST_CASE("ndzip::mpi: a sender stops compressing a View whose segments do not shrink") {
  // Eight segments of 16384 floats: the first two random bits, the rest a smooth field. Segment
  // 0 is posted once segment 1 is queued (the pipeline fills one segment per post, whatever
  // its depth), so segment 0 comes out raw while segment 1 compresses, and segments 2-7 go
  // uncompressed (options::raw_after_ratio); with the option at 1 they compress. Both arrive
  // bit for bit.
  const exec_space exec;
  constexpr std::size_t segment = 16384, count = 8 * segment;
  Kokkos::View<float*> values("values", count);
  const auto expected = Kokkos::create_mirror_view(values);
  for (std::size_t i = 0; i < count; ++i) expected(i) = value_at<float>(i, 130, i < 2 * segment);
  int tag = 130;
  for (const double ratio : {0.9, 1.0}) {
    CAPTURE(ratio);
    ++tag;
    ndzip::mpi::options opts;
    opts.segment_bytes = segment * sizeof(float);
    opts.raw_after_ratio = ratio;
    if (is_sender()) {
      Kokkos::deep_copy(values, expected);
      const auto stats = ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
      CHECK(stats.segments == 8);
      CHECK(stats.raw_segments == (ratio < 1 ? 8 : 2));
      if (ratio < 1) CHECK(stats.wire_bytes == count * sizeof(float) + 64 + 8 * 32);
    } else {
      Kokkos::deep_copy(values, 0.0f);
      ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
      const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < count; ++i)
        wrong += std::memcmp(&got(i), &expected(i), sizeof(float)) != 0;
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("ndzip::mpi: both ranks of a pair may wait for their send before their receive") {
  // An exchange written send-first: MPI moves a large message only once a receive matches it,
  // and an ndzip::mpi receive matches only while it is advanced; a send's wait() advances the
  // process's receives, so neither rank waits for the other forever.
  const exec_space exec;
  constexpr int tag = 140;
  Kokkos::View<double**> out("out", 512, 256), in("in", 512, 256);
  fill(out, static_cast<std::uint64_t>(tag + rank()));
  ndzip::mpi::options opts;
  opts.segment_bytes = 64 * 256 * sizeof(double);  // eight segments of 128 KiB
  auto r = ndzip::mpi::irecv(exec, in, peer(), tag, MPI_COMM_WORLD, opts);
  auto s = ndzip::mpi::isend(exec, out, peer(), tag, MPI_COMM_WORLD, opts);
  s.wait();
  r.wait();
  CHECK(differences(in, static_cast<std::uint64_t>(tag + peer())) == 0);
}
