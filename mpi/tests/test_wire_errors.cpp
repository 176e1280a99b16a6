// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Damaged and truncated messages, made byte by byte with the wire format's own writers and sent
// with plain MPI: every one must give ndzip::stream_error on the receiving rank, and leave no
// message behind (a correct message on the same tag is received correctly afterwards).
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <ndzip/mpi.hpp>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"

// The checksum's definition, written out here independently of the library's.
#define XXH_INLINE_ALL
#include <xxhash.h>

using namespace mpi_test;
namespace wire = ndzip::mpi::detail;

namespace {

constexpr int tag = 90;
constexpr std::size_t elements = 2048;  // float values per message
constexpr std::size_t fewest = elements / 2;  // floats of the smallest segment (4096 bytes)
constexpr std::uint64_t seed = 90;

wire::transfer_head head_for(std::uint64_t rows, bool checksummed) {
  wire::transfer_head head;
  head.type = wire::element_code::float32;
  head.dims = 1;
  head.checksummed = checksummed;
  head.extents = {elements, 1, 1};
  head.segment_rows = rows;
  return head;
}

// A segment of raw values: elements [first, first + count) of the test field.
std::vector<std::byte> raw_segment(std::uint64_t index, std::size_t first, std::size_t count,
                                   bool checksum) {
  std::vector<std::byte> bytes(wire::segment_head_bytes + count * sizeof(float));
  for (std::size_t i = 0; i < count; ++i) {
    const float v = value_at<float>(first + i, seed, false);
    std::memcpy(bytes.data() + wire::segment_head_bytes + i * sizeof(float), &v, sizeof v);
  }
  wire::write_segment_head({wire::segment_kind::raw, index, count * sizeof(float)}, checksum,
                           bytes.data());
  return bytes;
}

// A segment holding the ndzip stream of elements [first, first + count) of the test field,
// followed by `trailing` zero bytes that the payload size counts.
std::vector<std::byte> stream_segment(std::uint64_t index, std::size_t first, std::size_t count,
                                      std::size_t trailing) {
  using host = Kokkos::DefaultHostExecutionSpace;
  Kokkos::View<float*, host::memory_space> values("values", count);
  for (std::size_t i = 0; i < count; ++i) values(i) = value_at<float>(first + i, seed, false);
  ndzip::compressor<float, 1, host> codec(host(), ndzip::extent<1>{count});
  Kokkos::View<std::byte*, host::memory_space> stream("stream", codec.size_bound());
  const std::size_t size = codec.compress(values, stream) + trailing;
  std::vector<std::byte> bytes(wire::segment_head_bytes + size);
  std::memcpy(bytes.data() + wire::segment_head_bytes, stream.data(), size - trailing);
  wire::write_segment_head({wire::segment_kind::stream, index, size}, false, bytes.data());
  return bytes;
}

std::vector<std::byte> with_head(const wire::transfer_head& head, std::vector<std::byte> segment) {
  std::vector<std::byte> message(wire::transfer_head_bytes);
  wire::write_transfer_head(head, message.data());
  message.insert(message.end(), segment.begin(), segment.end());
  return message;
}

void send_bytes(const std::vector<std::byte>& message) {
  MPI_Send(message.data(), static_cast<int>(message.size()), MPI_BYTE, peer(), tag, MPI_COMM_WORLD);
}

// The damaged transfers, each as the list of its messages.
std::vector<std::vector<std::vector<std::byte>>> damaged_transfers() {
  std::vector<std::vector<std::vector<std::byte>>> all;
  // Truncated: the segment's head announces 400 payload bytes, 300 arrive.
  {
    auto message = with_head(head_for(elements, true), raw_segment(0, 0, elements, true));
    message.resize(message.size() - 100);
    all.push_back({message});
  }
  // One bit flipped in the values of a checksummed segment.
  {
    auto message = with_head(head_for(elements, true), raw_segment(0, 0, elements, true));
    message[wire::transfer_head_bytes + wire::segment_head_bytes + 17] ^= std::byte{0x04};
    all.push_back({message});
  }
  // One bit flipped in the transfer head (its own checksum catches it).
  {
    auto message = with_head(head_for(elements, true), raw_segment(0, 0, elements, true));
    message[30] ^= std::byte{0x01};
    all.push_back({message});
  }
  // Two segments, the second one claiming to be segment 5: the error comes after both are
  // consumed.
  {
    auto first = with_head(head_for(fewest, false), raw_segment(0, 0, fewest, false));
    auto second = raw_segment(5, fewest, fewest, false);
    all.push_back({first, second});
  }
  // The second of two segments has the right size but a damaged magic; received into device
  // memory (mpi_device), its head is checked only once both are decoded.
  {
    auto first = with_head(head_for(fewest, false), raw_segment(0, 0, fewest, false));
    auto second = raw_segment(1, fewest, fewest, false);
    second[0] ^= std::byte{0x10};
    all.push_back({first, second});
  }
  // The second of two segments says it holds raw values in fewer bytes than its slab's: into
  // device memory its kind is taken from its size (a stream), which its head contradicts.
  {
    auto first = with_head(head_for(fewest, false), raw_segment(0, 0, fewest, false));
    auto second = raw_segment(1, fewest, fewest, false);
    second.resize(second.size() - 8);
    wire::write_segment_head({wire::segment_kind::raw, 1, second.size() - wire::segment_head_bytes},
                             false, second.data());
    all.push_back({first, second});
  }
  // A segment that says it holds an ndzip stream, but holds bytes no stream of 100 floats is
  // made of (no checksum, so the decoder itself must refuse them).
  {
    std::vector<std::byte> segment(wire::segment_head_bytes + 40, std::byte{0xff});
    wire::write_segment_head({wire::segment_kind::stream, 0, 40}, false, segment.data());
    all.push_back({with_head(head_for(elements, false), segment)});
  }
  // Two segments, the first a stream the decoder refuses, the second whole: on a device the
  // first is decoded while the second arrives, so the error comes after both are consumed.
  {
    std::vector<std::byte> segment(wire::segment_head_bytes + 40, std::byte{0xff});
    wire::write_segment_head({wire::segment_kind::stream, 0, 40}, false, segment.data());
    all.push_back(
        {with_head(head_for(fewest, false), segment), raw_segment(1, fewest, fewest, false)});
  }
  // A message 0 shorter than the transfer head.
  all.push_back({std::vector<std::byte>(20, std::byte{0x6e})});
  return all;
}

}  // namespace

TEST_CASE("ndzip::mpi: damaged or truncated messages throw ndzip::stream_error") {
  const Kokkos::DefaultExecutionSpace exec;
  Kokkos::View<float*> values("values", elements);
  const auto transfers = damaged_transfers();
  // Received through host staging and, where it can run here, into device buffers directly.
  using path = ndzip::mpi::transport_kind;
  std::vector<path> paths = {path::staged};
  if (mpi_device_testable()) paths.push_back(path::mpi_device);
  for (const path receive_path : paths) {
    CAPTURE(static_cast<int>(receive_path));
    ndzip::mpi::options opts;
    opts.transport = receive_path;
    if (is_sender()) {
      for (const auto& transfer : transfers) {
        for (const auto& message : transfer) send_bytes(message);
        // A correct transfer after each damaged one.
        send_bytes(with_head(head_for(elements, true), raw_segment(0, 0, elements, true)));
      }
    } else {
      for (std::size_t t = 0; t < transfers.size(); ++t) {
        CAPTURE(t);
        Kokkos::deep_copy(values, 0.0f);
        CHECK_THROWS_AS(ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD, opts),
                        ndzip::stream_error);
        Kokkos::deep_copy(values, 0.0f);
        ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD, opts);
        CHECK(differences(values, seed) == 0);
      }
    }
  }
}

TEST_CASE("ndzip::mpi: a stream with bytes its decoder does not consume throws, in any segment") {
  // Two segments of one hypercube each; segment `damaged` carries 8 bytes after its stream.
  constexpr std::size_t cube = 4096;
  const Kokkos::DefaultExecutionSpace exec;
  Kokkos::View<float*> values("values", 2 * cube);
  wire::transfer_head head = head_for(cube, false);
  head.extents = {2 * cube, 1, 1};
  for (std::uint64_t damaged = 0; damaged < 2; ++damaged) {
    CAPTURE(damaged);
    if (is_sender()) {
      send_bytes(with_head(head, stream_segment(0, 0, cube, damaged == 0 ? 8 : 0)));
      send_bytes(stream_segment(1, cube, cube, damaged == 1 ? 8 : 0));
      send_bytes(with_head(head, stream_segment(0, 0, cube, 0)));
      send_bytes(stream_segment(1, cube, cube, 0));
    } else {
      CHECK_THROWS_WITH_AS(ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD),
                           doctest::Contains("its stream ends after"), ndzip::stream_error);
      Kokkos::deep_copy(values, 0.0f);
      ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD);
      CHECK(differences(values, seed) == 0);
    }
  }
}

TEST_CASE("ndzip::mpi: a one-segment message takes the larger of stream and values, not both") {
  // neighbor_exchange refused pieces of more than about fewest a message (0.5 GiB) by adding the
  // values to a room that already held them.
  constexpr std::uint64_t raw = 600ull << 20;
  CHECK(wire::one_segment_message_bytes(raw, raw + 4096) == 96 + raw + 4096);
  CHECK(wire::one_segment_message_bytes(raw, 1000) == 96 + raw);
  CHECK(wire::one_segment_message_bytes(raw, raw + 4096) <= wire::largest_message);
  CHECK(wire::one_segment_message_bytes(wire::largest_message, 0) > wire::largest_message);
}

TEST_CASE("ndzip::mpi: the segment checksum hashes the head and each 1 MiB piece's XXH3-64") {
  // docs/FORMAT.md: XXH3-64 of head bytes 0-23, then the little-endian XXH3-64 of each 1 MiB
  // piece of the payload (the last one shorter). 2.5 MiB of payload: three pieces.
  constexpr std::size_t payload = (5u << 20) / 2, piece = 1u << 20;
  std::vector<std::byte> segment(wire::segment_head_bytes + payload);
  for (std::size_t i = 0; i < payload; ++i)
    segment[wire::segment_head_bytes + i] = static_cast<std::byte>((i * 2654435761u) >> 13);
  wire::write_segment_head({wire::segment_kind::raw, 3, payload}, true, segment.data());
  std::vector<unsigned char> digest(24);
  std::memcpy(digest.data(), segment.data(), 24);
  for (std::size_t first = 0; first < payload; first += piece) {
    const std::uint64_t h = XXH3_64bits(segment.data() + wire::segment_head_bytes + first,
                                        std::min(piece, payload - first));
    for (int b = 0; b < 8; ++b) digest.push_back(static_cast<unsigned char>(h >> (8 * b)));
  }
  std::uint64_t stored = 0;
  std::memcpy(&stored, segment.data() + 24, 8);  // little-endian host (x86, ARM)
  CHECK(digest.size() == 24 + 3 * 8);
  CHECK(stored == XXH3_64bits(digest.data(), digest.size()));
  CHECK(wire::read_segment_head(segment.data(), segment.size(), 3, payload, true).payload_bytes ==
        payload);
  // A flipped bit in the last, shorter piece.
  segment[segment.size() - 5] ^= std::byte{0x10};
  CHECK_THROWS_WITH_AS(wire::read_segment_head(segment.data(), segment.size(), 3, payload, true),
                       doctest::Contains("checksum mismatch"), ndzip::stream_error);
}

TEST_CASE("ndzip::mpi: a head whose segments are empty or too small is refused, not divided by") {
  // Rows per segment 0 divided by zero (SIGFPE) before the rows were checked; a head of many
  // one-row segments made the receiver hold a buffer and a request per row.
  std::vector<std::byte> bytes(wire::transfer_head_bytes);
  for (const std::uint64_t rows : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{fewest - 1}}) {
    CAPTURE(rows);
    wire::write_transfer_head(head_for(rows, false), bytes.data());
    CHECK_THROWS_WITH_AS(wire::read_transfer_head(bytes.data(), bytes.size()),
                         doctest::Contains("rows per segment"), ndzip::stream_error);
  }
  // The smallest segment there is: 4096 bytes of values, or every row of a smaller View.
  wire::write_transfer_head(head_for(fewest, false), bytes.data());
  CHECK(wire::read_transfer_head(bytes.data(), bytes.size()).segments() == 2);
  wire::transfer_head small = head_for(10, false);
  small.extents = {10, 1, 1};
  wire::write_transfer_head(small, bytes.data());
  CHECK(wire::read_transfer_head(bytes.data(), bytes.size()).segments() == 1);
  // Rows of 3 doubles: 171 rows hold 4104 bytes, 170 hold 4080.
  wire::transfer_head rows = head_for(171, false);
  rows.type = wire::element_code::float64;
  rows.dims = 2;
  rows.extents = {1000, 3, 1};
  wire::write_transfer_head(rows, bytes.data());
  CHECK(wire::read_transfer_head(bytes.data(), bytes.size()).segments() == 6);
  rows.segment_rows = 170;
  wire::write_transfer_head(rows, bytes.data());
  CHECK_THROWS_AS(wire::read_transfer_head(bytes.data(), bytes.size()), ndzip::stream_error);
}

TEST_CASE("ndzip::mpi: forged heads and oversized segments over MPI give stream_error, no abort") {
  // Each forged transfer is followed by a correct one on the same tag, which must arrive
  // intact. A head announcing a million one-row segments is refused at once (before, the
  // receiver posted a million receives and waited forever); a segment longer than its slab
  // took MPI_ERR_TRUNCATE, which aborts the job under MPI's default error handler.
  const Kokkos::DefaultExecutionSpace exec;
  Kokkos::View<float*> values("values", elements);
  const auto good = with_head(head_for(elements, false), raw_segment(0, 0, elements, false));
  std::vector<std::vector<std::vector<std::byte>>> forged;
  forged.push_back({with_head(head_for(0, false), raw_segment(0, 0, elements, false))});
  forged.push_back({with_head(head_for(1, false), raw_segment(0, 0, 1, false))});
  {
    // Two segments, the second 64 bytes longer than a raw slab.
    auto second = raw_segment(1, fewest, fewest, false);
    second.resize(second.size() + 64);
    forged.push_back(
        {with_head(head_for(fewest, false), raw_segment(0, 0, fewest, false)), second});
  }
  if (is_sender()) {
    for (const auto& transfer : forged) {
      for (const auto& message : transfer) send_bytes(message);
      send_bytes(good);
    }
  } else {
    const char* expected[] = {"rows per segment", "rows per segment", "more than the 4128"};
    for (std::size_t t = 0; t < forged.size(); ++t) {
      CAPTURE(t);
      CHECK_THROWS_WITH_AS(ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD),
                           doctest::Contains(expected[t]), ndzip::stream_error);
      Kokkos::deep_copy(values, 0.0f);
      ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD);
      CHECK(differences(values, seed) == 0);
    }
  }
}

TEST_CASE("ndzip::mpi: a decoder's error names the segment, the sending rank, the tag and View") {
  // Segment 1 of 2 holds bytes no stream of its slab is made of.
  const Kokkos::DefaultExecutionSpace exec;
  Kokkos::View<float*> values("named values", elements);
  std::vector<std::byte> damaged(wire::segment_head_bytes + 40, std::byte{0xff});
  wire::write_segment_head({wire::segment_kind::stream, 1, 40}, false, damaged.data());
  if (is_sender()) {
    send_bytes(with_head(head_for(fewest, false), raw_segment(0, 0, fewest, false)));
    send_bytes(damaged);
  } else {
    std::string message;
    try {
      ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD);
    } catch (const ndzip::stream_error& e) {
      message = e.what();
    }
    CAPTURE(message);
    CHECK(message.find("from rank " + std::to_string(peer())) != std::string::npos);
    CHECK(message.find("(tag " + std::to_string(tag) + ")") != std::string::npos);
    CHECK(message.find("named values") != std::string::npos);
    CHECK(message.find("segment 1") != std::string::npos);
  }
}

TEST_CASE("ndzip::mpi: a receive with options::checksum refuses a message without checksums") {
  const Kokkos::DefaultExecutionSpace exec;
  Kokkos::View<float*> values("values", elements);
  ndzip::mpi::options demanding;
  demanding.checksum = true;
  if (is_sender()) {
    // Two segments without checksums (both consumed by the refusal), then a checksummed one.
    send_bytes(with_head(head_for(fewest, false), raw_segment(0, 0, fewest, false)));
    send_bytes(raw_segment(1, fewest, fewest, false));
    send_bytes(with_head(head_for(elements, true), raw_segment(0, 0, elements, true)));
  } else {
    CHECK_THROWS_WITH_AS(
        ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD, demanding),
        doctest::Contains("carries no segment checksums"), ndzip::mpi::mismatch_error);
    Kokkos::deep_copy(values, 0.0f);
    ndzip::mpi::recv(exec, values, peer(), tag, MPI_COMM_WORLD, demanding);
    CHECK(differences(values, seed) == 0);
  }
}

TEST_CASE("ndzip::mpi: test() does not block on a refused message whose segments are late") {
  // A message of other extents is consumed whole before mismatch_error; test() waited inside
  // MPI_Mprobe for each further segment (5 s until the sender's next one, forever if it
  // stopped). Here segment 1 is sent only once the receiver has called test() for a while.
  constexpr int go = tag + 1;
  const Kokkos::DefaultExecutionSpace exec;
  Kokkos::View<float*> other("other extents", fewest);
  if (is_sender()) {
    send_bytes(with_head(head_for(fewest, false), raw_segment(0, 0, fewest, false)));
    int token = 0;
    MPI_Recv(&token, 1, MPI_INT, peer(), go, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    send_bytes(raw_segment(1, fewest, fewest, false));
  } else {
    auto pending = ndzip::mpi::irecv(exec, other, peer(), tag, MPI_COMM_WORLD);
    const auto started = std::chrono::steady_clock::now();
    double longest = 0;
    while (std::chrono::steady_clock::now() - started < std::chrono::milliseconds(300)) {
      const auto before = std::chrono::steady_clock::now();
      CHECK_FALSE(pending.test());
      longest = std::max(
          longest,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count());
    }
    CHECK(longest < 0.1);
    int token = 1;
    MPI_Send(&token, 1, MPI_INT, peer(), go, MPI_COMM_WORLD);
    CHECK_THROWS_AS(pending.wait(), ndzip::mpi::mismatch_error);
  }
}
