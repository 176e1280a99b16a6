// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Plain transfers (options::compression): the values as they are, from the View itself or
// copied, on every transport; isend()'s promise about its values; the adaptive choice; and
// damaged or forged plain messages.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <chrono>
#include <cstring>
#include <ndzip/mpi.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mpi_test_support.hpp"

using namespace mpi_test;
namespace wire = ndzip::mpi::detail;

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;
using ndzip::mpi::compression_choice;
using ndzip::mpi::transport_kind;

// The bytes of the floats value_at gives elements [first, first + n) of a transfer on `tag`:
// what a plain segment of those elements carries.
std::vector<std::byte> float_value_bytes(std::size_t first, std::size_t n, int tag) {
  std::vector<std::byte> bytes(n * sizeof(float));
  for (std::size_t i = 0; i < n; ++i) {
    const float v = value_at<float>(first + i, tag, false);
    std::memcpy(bytes.data() + i * sizeof(float), &v, sizeof v);
  }
  return bytes;
}

std::vector<transport_kind> testable_transports() {
  std::vector<transport_kind> kinds = {transport_kind::staged};
  if (mpi_device_testable()) kinds.push_back(transport_kind::mpi_device);
  return kinds;
}

}  // namespace

TEST_CASE("ndzip::mpi: plain transfers are bit-exact, from the View or copied, on any transport") {
  int tag = 200;
  for (const transport_kind kind : testable_transports()) {
    for (const int how : {0, 1, 2}) {  // send(); isend(); isend() with the values staying
      CAPTURE(static_cast<int>(kind));
      CAPTURE(how);
      ++tag;
      const exec_space exec;
      ndzip::mpi::options opts;
      opts.transport = kind;
      opts.compression = compression_choice::never;
      opts.segment_bytes = 12 * 40 * 33 * sizeof(double);  // copies: segments of 12, 12, 12, 4 rows
      opts.values_stay_until_complete = how == 2;
      const ndzip::mpi::communicator<exec_space> channel(exec, MPI_COMM_WORLD, opts);
      Kokkos::View<double***> values("values", 40, 40, 33);
      // A strided face as well: packed before it is sent, unpacked after it is received.
      auto face = Kokkos::subview(values, Kokkos::ALL, 3, Kokkos::ALL);
      const std::uint64_t seed = static_cast<std::uint64_t>(tag);
      if (is_sender()) {
        fill(values, seed);
        for (int part = 0; part < 2; ++part) {
          CAPTURE(part);
          const auto stats =
              how == 0 ? (part == 0 ? channel.send(values, peer(), tag)
                                    : channel.send(face, peer(), tag))
                       : [&] {
                           auto r = part == 0 ? channel.isend(values, peer(), tag)
                                              : channel.isend(face, peer(), tag);
                           r.wait();
                           return r.stats();
                         }();
          const std::uint64_t bytes = (part == 0 ? values.size() : face.size()) * sizeof(double);
          CHECK(stats.plain);
          CHECK(stats.raw_bytes == bytes);
          CHECK(stats.wire_bytes == bytes + 64);  // the head, then the values alone
          CHECK(stats.raw_segments == stats.segments);
          // From the View: one message where MPI takes its memory; copied: in segments.
          const bool mpi_takes_views =
              kind == transport_kind::mpi_device
                  ? std::is_same_v<wire::wire<exec_space>::space, exec_space::memory_space>
                  : wire::staging<exec_space>::in_place;
          const bool in_place = how != 1 && mpi_takes_views;
          if (part == 0) CHECK(stats.segments == (in_place ? 1 : 4));
        }
      } else {
        Kokkos::View<double***> got("got", 40, 40, 33);
        const auto stats = channel.recv(got, peer(), tag);
        CHECK(stats.plain);
        CHECK(differences(got, seed) == 0);
        Kokkos::View<double**, Kokkos::LayoutLeft> face_got("face", 40, 33);
        channel.recv(face_got, peer(), tag);
        fill(values, seed);
        const auto expected = contiguous_like(face);
        Kokkos::deep_copy(expected, face);
        const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), expected);
        const auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), face_got);
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < a.extent(0); ++i)
          for (std::size_t j = 0; j < a.extent(1); ++j)
            wrong += std::memcmp(&a(i, j), &b(i, j), sizeof(double)) != 0;
        CHECK(wrong == 0);
      }
    }
  }
}

TEST_CASE("ndzip::mpi: isend() sends the values it was given, even changed before it completes") {
  // By default isend() copies plain values before it returns (the values may change then);
  // without the copy the receiver would get some of the new ones. Every message goes only
  // after the receiver has waited for the sender's barrier, so MPI cannot have read the View
  // before it changed.
  const exec_space exec;
  constexpr int tag = 220;
  ndzip::mpi::options opts;
  opts.compression = compression_choice::never;
  opts.segment_bytes = 64 << 10;
  const ndzip::mpi::communicator<exec_space> channel(exec, MPI_COMM_WORLD, opts);
  Kokkos::View<float*> values("values", 1 << 18);  // 1 MiB: MPI's rendezvous, not eager
  if (is_sender()) {
    fill(values, tag);
    auto r = channel.isend(values, peer(), tag);
    Kokkos::deep_copy(values, -1.0f);
    exec.fence();
    MPI_Barrier(MPI_COMM_WORLD);
    r.wait();
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    channel.recv(values, peer(), tag);
    CHECK(differences(values, tag) == 0);
  }
}

TEST_CASE("ndzip::mpi: adaptive sends try both ways on one communicator, every one bit-exact") {
  // The transfers of a (peer, tag, size) compress until one is timed (not the first), then go
  // plain likewise, then the faster. Whatever it picks, the receiver
  // gets the values; within eight transfers both ways have been used. With the checksum on,
  // every transfer compresses.
  const exec_space exec;
  for (const bool checksum : {false, true}) {
    CAPTURE(checksum);
    const int tag = checksum ? 231 : 230;
    ndzip::mpi::options opts;
    opts.checksum = checksum;
    opts.segment_bytes = 256 << 10;
    const ndzip::mpi::communicator<exec_space> channel(exec, MPI_COMM_WORLD, opts);
    Kokkos::View<float**> values("values", 512, 1024);  // 2 MiB in 8 segments
    int plain = 0, compressed = 0;
    for (int round = 0; round < 8; ++round) {
      CAPTURE(round);
      const std::uint64_t seed = static_cast<std::uint64_t>(tag * 100 + round);
      if (is_sender()) {
        fill(values, seed);
        const auto stats = channel.send(values, peer(), tag);
        (stats.plain ? plain : compressed) += 1;
        if (!stats.plain) CHECK(stats.wire_bytes < stats.raw_bytes);
      } else {
        Kokkos::deep_copy(values, 0.0f);
        channel.recv(values, peer(), tag);
        CHECK(differences(values, seed) == 0);
      }
    }
    if (is_sender()) {
      CHECK(compressed >= 1);
      if (checksum)
        CHECK(plain == 0);
      else
        CHECK(plain >= 1);
    }
  }
}

TEST_CASE("ndzip::mpi send_history: the faster way by 5 %, the other tried less often; followers") {
  using wire::send_mode;
  wire::send_history history;
  const std::uint64_t bytes = 64 << 20;
  // A transfer to (dest, tag) as the history chooses it, taking `compressed` or `plain` seconds;
  // the ways taken as a string ('c', 'p').
  const auto run = [&](int dest, int tag, int transfers, double compressed, double plain,
                       bool follower = false) {
    std::string ways;
    for (int t = 0; t < transfers; ++t) {
      const send_mode m = history.choose(dest, tag, bytes, follower);
      history.record(dest, tag, bytes, m, m == send_mode::compressed ? compressed : plain);
      ways += m == send_mode::compressed ? 'c' : 'p';
    }
    return ways;
  };
  const auto c = [](int n) { return std::string(n, 'c'); };
  const auto p = [](int n) { return std::string(n, 'p'); };
  // Two of each way first (the first after a change is not timed); compressing is faster, so
  // plain is tried again after 16 transfers, for two, then after 32.
  CHECK(run(1, 5, 4 + 15 + 2 + 31 + 2, 1.0, 2.0) == c(2) + p(2) + c(15) + p(2) + c(31) + p(2));
  // The data stops shrinking: the median of the last three compressed times turns the choice
  // (the first compressed transfer after the try is not timed).
  CHECK(run(1, 5, 8, 3.0, 2.0) == c(3) + p(5));
  // Sizes a power of two apart, other peers and tags have their own record.
  CHECK(history.choose(1, 5, 2 * bytes, false) == send_mode::compressed);
  CHECK(history.choose(2, 5, bytes, false) == send_mode::compressed);
  CHECK(history.choose(1, 6, bytes, false) == send_mode::compressed);
  // About equal: the way preferred stays until the other is faster by 5 %.
  CHECK(run(3, 5, 4 + 15 + 2 + 31 + 2, 1.0, 0.97) == c(2) + p(2) + c(15) + p(2) + c(31) + p(2));
  // Times that cannot be right are ignored.
  history.record(4, 5, bytes, send_mode::compressed, 1.0);  // the first: not timed
  history.record(4, 5, bytes, send_mode::compressed, 0.0);
  CHECK(history.choose(4, 5, bytes, false) == send_mode::compressed);
  history.record(4, 5, bytes, send_mode::compressed, 1.0);
  CHECK(history.choose(4, 5, bytes, false) == send_mode::plain);
  // The higher rank of a pair takes the way its peer last sent it a transfer of that size (any
  // tag) only where its own two ways are within 5 %, and keeps its own tries.
  history.observe(6, bytes + 1000, send_mode::plain);
  CHECK(run(6, 5, 4 + 15 + 2 + 3, 1.0, 1.03, true) == c(2) + p(2) + p(15) + p(2) + p(3));
  CHECK(run(7, 5, 4 + 15 + 2, 1.0, 1.03, false) == c(2) + p(2) + c(15) + p(2));
  history.observe(8, bytes, send_mode::plain);
  CHECK(run(8, 5, 4 + 15 + 2, 1.0, 2.0, true) == c(2) + p(2) + c(15) + p(2));
}

TEST_CASE("ndzip::mpi: a plain send that fails part way leaves the receiver an error, not a hang") {
  const exec_space exec;
  constexpr int tag = 240;
  ndzip::mpi::options opts;
  opts.compression = compression_choice::never;
  opts.segment_bytes = 8 * 1000 * sizeof(float);
  opts.pipeline_depth = 1;
  Kokkos::View<float**> values("values", 32, 1000);  // 4 plain segments
  if (is_sender()) {
    fill(values, tag);
    wire::send_fault_at() = 2;
    CHECK_THROWS_WITH(ndzip::mpi::isend(exec, values, peer(), tag, MPI_COMM_WORLD, opts),
                      doctest::Contains("fault injected"));
    ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
  } else {
    CHECK_THROWS_WITH_AS(ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD),
                         doctest::Contains("gave the transfer up"), ndzip::stream_error);
    Kokkos::deep_copy(values, 0.0f);
    ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD);
    CHECK(differences(values, tag) == 0);
  }
}

TEST_CASE("ndzip::mpi: plain transfers into the wrong View, or one that demands checksums") {
  // Refused with mismatch_error after every message is consumed, the View untouched; the next
  // transfer on the tag arrives intact.
  const exec_space exec;
  constexpr int tag = 250;
  ndzip::mpi::options opts;
  opts.compression = compression_choice::never;
  opts.segment_bytes = 4096;
  ndzip::mpi::options demanding;
  demanding.checksum = true;
  Kokkos::View<float*> values("values", 5000);  // 5 plain segments (copied) or 1 (send())
  if (is_sender()) {
    fill(values, tag);
    for (int t = 0; t < 2; ++t) ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
    auto r = ndzip::mpi::isend(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
    r.wait();
    CHECK(r.stats().segments == 5);
    ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
  } else {
    Kokkos::View<float*> other("other", 4999);
    Kokkos::deep_copy(other, 7.0f);
    CHECK_THROWS_AS(ndzip::mpi::recv(exec, other, peer(), tag, MPI_COMM_WORLD),
                    ndzip::mpi::mismatch_error);
    CHECK_THROWS_WITH_AS(ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD, demanding),
                         doctest::Contains("carries no segment checksums"),
                         ndzip::mpi::mismatch_error);
    Kokkos::View<double*> wrong_type("doubles", 5000);
    CHECK_THROWS_AS(ndzip::mpi::recv(exec, wrong_type, peer(), tag, MPI_COMM_WORLD),
                    ndzip::mpi::mismatch_error);
    const auto untouched = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), other);
    CHECK(untouched(0) == 7.0f);
    CHECK(untouched(4998) == 7.0f);
    ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD);
    CHECK(differences(values, tag) == 0);
  }
}

TEST_CASE("ndzip::mpi: damaged plain transfers throw ndzip::stream_error, nothing left behind") {
  // Forged with the wire format's writer and plain MPI; each is followed by a correct plain
  // transfer on the same tag, which must arrive intact.
  const exec_space exec;
  constexpr int tag = 260;
  constexpr std::size_t count = 2048;  // floats: two plain segments of 1024
  wire::transfer_head head;
  head.type = wire::element_code::float32;
  head.dims = 1;
  head.plain = true;
  head.extents = {count, 1, 1};
  head.segment_rows = count / 2;
  const auto head_bytes = [](const wire::transfer_head& h) {
    std::vector<std::byte> bytes(wire::transfer_head_bytes);
    wire::write_transfer_head(h, bytes.data());
    return bytes;
  };
  const auto values_of = [](std::size_t first, std::size_t n) {
    return float_value_bytes(first, n, tag);
  };
  std::vector<std::vector<std::byte>> good = {head_bytes(head), values_of(0, count / 2),
                                              values_of(count / 2, count / 2)};
  std::vector<std::pair<std::vector<std::vector<std::byte>>, const char*>> forged;
  {
    auto shorter = good;
    shorter[2].resize(shorter[2].size() - 4);
    forged.push_back({shorter, "plain segment 1 of the received message is 4092 bytes"});
    auto longer = good;
    longer[1].resize(longer[1].size() + 8);
    forged.push_back({longer, "plain segment 0 of the received message is 4104 bytes"});
    auto empty = good;
    empty[2].clear();
    forged.push_back({empty, "gave the transfer up"});
    auto trailing = good;
    trailing[0].resize(trailing[0].size() + 4);
    forged.push_back({trailing, "holds 4 bytes after its head"});
    wire::transfer_head checksummed = head;
    checksummed.checksummed = true;
    forged.push_back({{head_bytes(checksummed)}, "a plain transfer with checksums"});
    // A head of a compressed transfer of one segment, alone: received into host memory as a
    // plain head is, its segment 0 is empty.
    wire::transfer_head compressed = head;
    compressed.plain = false;
    compressed.segment_rows = count;
    forged.push_back({{head_bytes(compressed)}, "segment 0 of the received message is empty"});
  }
  if (is_sender()) {
    const auto send = [](const std::vector<std::byte>& m) {
      MPI_Send(m.data(), static_cast<int>(m.size()), MPI_BYTE, peer(), tag, MPI_COMM_WORLD);
    };
    for (const auto& [messages, expected] : forged) {
      (void)expected;
      for (const auto& m : messages) send(m);
      for (const auto& m : good) send(m);
    }
  } else {
    Kokkos::View<float*> values("values", count);
    for (const auto& [messages, expected] : forged) {
      const std::string what = expected;
      CAPTURE(what);
      CHECK_THROWS_WITH_AS(ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD),
                           doctest::Contains(expected), ndzip::stream_error);
      Kokkos::deep_copy(values, 0.0f);
      const auto stats = ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD);
      CHECK(stats.plain);
      CHECK(differences(values, tag) == 0);
    }
  }
}

namespace {

// recv() with a deadline: its statistics, or none where the transfer has not completed within
// `seconds` (the receive, not matched then, is withdrawn), so that a hang fails the case rather
// than stalling the run.
template <class View>
std::optional<ndzip::mpi::transfer_stats> received_within(const View& values, int tag,
                                                          double seconds) {
  auto r = ndzip::mpi::irecv(exec_space(), values, peer(), tag, MPI_COMM_WORLD);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!r.test())
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
  return r.stats();
}

}  // namespace

TEST_CASE("ndzip::mpi: a plain head with its values in message 0 is refused, nothing more taken") {
  // Forged plain transfers that carry values after the head in message 0, as a compressed
  // transfer carries segment 0: all of them, or segment 0 with segment 1 in message 1; received
  // into the View, or into one of other extents. The refusal must consume exactly the forged
  // messages, so that the compressed and the plain transfer sent after each arrive whole
  // (before: the refused receive took the next transfer's message 0 as a plain segment, and the
  // receive of that transfer waited for ever), and an end marker must be the one message left.
  const exec_space exec;
  constexpr int tag = 270;
  constexpr std::size_t count = 2048;  // floats: one segment, or two of 1024
  constexpr double seconds = 10;
  const auto values_of = [](std::size_t first, std::size_t n) {
    return float_value_bytes(first, n, tag);
  };
  // Message 0: a plain head of `segment_rows` rows per segment, then the values [0, in_head).
  const auto head_with_values = [&](std::uint64_t segment_rows, std::size_t in_head) {
    wire::transfer_head head;
    head.plain = true;
    head.extents = {count, 1, 1};
    head.segment_rows = segment_rows;
    std::vector<std::byte> message(wire::transfer_head_bytes);
    wire::write_transfer_head(head, message.data());
    const auto values = values_of(0, in_head);
    message.insert(message.end(), values.begin(), values.end());
    return message;
  };
  struct forgery {
    std::vector<std::vector<std::byte>> messages;
    bool into_other_extents;
  };
  const std::vector<forgery> forged = {
      {{head_with_values(count, count)}, false},
      {{head_with_values(count / 2, count)}, false},
      {{head_with_values(count / 2, count / 2), values_of(count / 2, count / 2)}, false},
      {{head_with_values(count / 2, count)}, true},
  };
  const std::byte end_marker{0x2a};
  Kokkos::View<float*> values("values", count);
  if (is_sender()) {
    fill(values, tag);
    ndzip::mpi::options plain;
    plain.compression = compression_choice::never;
    for (const auto& f : forged) {
      for (const auto& m : f.messages)
        MPI_Send(m.data(), static_cast<int>(m.size()), MPI_BYTE, peer(), tag, MPI_COMM_WORLD);
      ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD);  // compressed
      ndzip::mpi::send(exec, values, peer(), tag, MPI_COMM_WORLD, plain);
    }
    MPI_Send(&end_marker, 1, MPI_BYTE, peer(), tag, MPI_COMM_WORLD);
  } else {
    Kokkos::View<float*> other("other", count + 1);
    for (std::size_t f = 0; f < forged.size(); ++f) {
      CAPTURE(f);
      if (forged[f].into_other_extents)
        CHECK_THROWS_AS(received_within(other, tag, seconds), ndzip::mpi::mismatch_error);
      else
        CHECK_THROWS_WITH_AS(received_within(values, tag, seconds),
                             doctest::Contains("the head of the plain transfer holds"),
                             ndzip::stream_error);
      for (const bool plain : {false, true}) {
        CAPTURE(plain);
        Kokkos::deep_copy(values, 0.0f);
        std::optional<ndzip::mpi::transfer_stats> stats;
        CHECK_NOTHROW(stats = received_within(values, tag, seconds));
        CHECK(stats.has_value());
        CHECK((stats && stats->plain == plain));
        CHECK(differences(values, tag) == 0);
      }
    }
    // What is left on the tag: the end marker alone (anything before it was taken by no
    // receive), received with plain MPI.
    std::size_t left_before_marker = 0;
    bool marker = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!marker && std::chrono::steady_clock::now() < deadline) {
      int found = 0;
      MPI_Status status;
      MPI_Iprobe(peer(), tag, MPI_COMM_WORLD, &found, &status);
      if (!found) continue;
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      std::vector<std::byte> message(static_cast<std::size_t>(bytes));
      MPI_Recv(message.data(), bytes, MPI_BYTE, peer(), tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      marker = bytes == 1 && message[0] == end_marker;
      left_before_marker += !marker;
    }
    CHECK(marker);
    CHECK(left_before_marker == 0);
  }
}
