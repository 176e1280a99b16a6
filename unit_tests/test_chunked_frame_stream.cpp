// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Chunked frames a slab at a time (ndzip/chunked_frame_stream.hpp): the writer's bytes are
// compress_chunked_frame's on every backend, type and rank at several slab sizes; the reader in
// order restores the array from records read one by one; slabs out of order, of the wrong rows,
// missing or too many are refused without changing the writer or reader; an index that
// disagrees with the slabs and truncated parts are refused by name.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "codec_support.hpp"
#include "frame_support.hpp"

using namespace ndzip_test;

namespace {

// Rows first to last - 1 of `v` (the slowest dimension), all of the others.
template <class View>
auto rows_of(const View& v, std::uint64_t first, std::uint64_t last) {
  const auto r = std::make_pair(static_cast<std::size_t>(first), static_cast<std::size_t>(last));
  if constexpr (View::rank == 1)
    return Kokkos::subview(v, r);
  else if constexpr (View::rank == 2)
    return Kokkos::subview(v, r, Kokkos::ALL);
  else
    return Kokkos::subview(v, r, Kokkos::ALL, Kokkos::ALL);
}

template <class Writer, class View>
auto slab_of(const Writer& w, const View& v, std::uint64_t s) {
  const std::uint64_t first = w.info().first_row(s);
  return rows_of(v, first, first + w.slab_grid(s)[0]);
}

// The frame a writer gives, slab by slab: into its own buffer for even slabs, into the
// caller's for odd ones.
template <class T, int D, class Exec, class View>
frame_bytes streamed_frame_of(const Exec& exec, const View& values, std::uint64_t rows,
                              ndzip::codec_mode mode = ndzip::codec_mode::ndzip) {
  ndzip::chunked_frame_writer<T, D, Exec> writer(exec, ndzip::grid_of(values), rows, mode);
  frame_bytes out(writer.header().begin(), writer.header().end());
  host_frame_view record("record", writer.record_bound());
  for (std::uint64_t s = 0; s < writer.slab_count(); ++s) {
    REQUIRE(writer.next_slab() == s);
    REQUIRE(writer.bytes_written() == out.size());
    if (s % 2 == 0) {
      const auto bytes = writer.encode_slab(slab_of(writer, values, s));
      out.insert(out.end(), bytes.data(), bytes.data() + bytes.size());
    } else {
      const std::size_t n = writer.encode_slab(slab_of(writer, values, s), record);
      out.insert(out.end(), record.data(), record.data() + n);
    }
  }
  const auto end = writer.finish();
  CHECK(end.size() == writer.end_bytes());
  out.insert(out.end(), end.begin(), end.end());
  return out;
}

// Reads `frame` as from a pipe: each part copied out of it as it is reached, the reader told
// only what it has read; decodes into slabs of `out`.
template <class T, int D, class Exec, class View>
void read_in_order(const Exec& exec, const frame_bytes& frame, const View& out) {
  std::size_t at = 0;
  const auto take = [&](std::size_t n) {
    REQUIRE(at + n <= frame.size());
    frame_bytes part(frame.begin() + at, frame.begin() + at + n);
    at += n;
    return part;
  };
  const frame_bytes header = take(ndzip::chunked_header_bytes);
  ndzip::chunked_frame_reader<T, D, Exec> reader(exec, header.data(), header.size());
  for (std::uint64_t s = 0; s < reader.slab_count(); ++s) {
    REQUIRE(reader.bytes_read() == at);
    frame_bytes record = take(ndzip::slab_head_bytes);
    const ndzip::slab_info slab = reader.read_slab_head(record.data(), record.size());
    const frame_bytes rest = take(slab.record_bytes() - ndzip::slab_head_bytes);
    record.insert(record.end(), rest.begin(), rest.end());
    const std::uint64_t first = reader.info().first_row(s);
    reader.decode_slab(const_frame_view(record.data(), record.size()),
                       rows_of(out, first, first + reader.slab_grid(s)[0]));
  }
  const frame_bytes end = take(reader.end_bytes());
  reader.finish(end.data(), end.size());
  CHECK(at == frame.size());
}

// A frame of 130x67 floats in slabs of 64, 64 and 2 rows, with its offsets.
struct three_slabs {
  ndzip::extent<2> grid{130, 67};
  std::vector<std::uint32_t> input = generate_for<f32_2d>("smooth", 8, grid);
  grid_view<float, 2> values = host_view_of<float, 2>(input, grid);
  Kokkos::DefaultHostExecutionSpace exec;
  frame_bytes frame = chunked_frame_of(exec, values, 64);
  ndzip::chunked_frame_info info = ndzip::read_chunked_header(frame.data(), frame.size());
  std::vector<std::uint64_t> offsets = ndzip::read_chunked_index(info, frame.data(), frame.size());
  std::size_t index = frame.size() - 8 * 3 - ndzip::chunked_trailer_bytes;

  frame_bytes record(std::uint64_t s) const {
    const std::uint64_t last = s + 1 < offsets.size() ? offsets[s + 1] : index;
    return frame_bytes(frame.begin() + offsets[s], frame.begin() + last);
  }
};

}  // namespace

TEST_CASE_TEMPLATE("chunked frame stream: the writer's bytes are compress_chunked_frame's, and "
                   "the reader in order restores the array, on every backend",
                   C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = bordered_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const std::uint64_t n0 = grid[0];
  const std::uint64_t side = ndzip::hypercube_side(D);
  // One row (not in 1-D: thousands of slabs of one value), a layer of hypercubes, a layer and a
  // row, most of the array, all of it, the default.
  std::vector<std::uint64_t> slab_rows = {side, side + 1, n0 - 1, n0, 0};
  if (D > 1) slab_rows.push_back(1);
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    const auto values =
        Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
    for (const std::uint64_t rows : slab_rows) {
      if (rows > n0) continue;
      CAPTURE(rows);
      const frame_bytes expected = chunked_frame_of(exec, values, rows);
      const frame_bytes streamed = streamed_frame_of<T, D>(exec, values, rows);
      CHECK(streamed == expected);
      auto out = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("out", grid);
      read_in_order<T, D>(exec, streamed, out);
      CHECK(mismatch(bits_of<Bits>(out), input) == "");
    }
  });
}

TEST_CASE_TEMPLATE("chunked frame stream: high-ratio slabs, and a thin array folded per slab", C,
                   ndzip_test::f32_3d, ndzip_test::f64_2d) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const Kokkos::DefaultHostExecutionSpace exec;
  const auto grid = bordered_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto values = host_view_of<T, D>(input, grid);
  const auto mode = ndzip::codec_mode::high_ratio;
  const std::uint64_t rows = ndzip::hypercube_side(D);
  const frame_bytes streamed = streamed_frame_of<T, D>(exec, values, rows, mode);
  CHECK(streamed == chunked_frame_of(exec, values, rows, mode));
  auto out = make_view<grid_view<T, D>>("out", grid);
  read_in_order<T, D>(exec, streamed, out);
  CHECK(mismatch(bits_of<Bits>(out), input) == "");
  // Slabs of 2 rows of 8x64x64 hold no whole hypercube of 16^3, but 64x64 squares folded to
  // 2-D: each is coded folded, as a frame of its rows would be.
  if constexpr (D == 3) {
    const ndzip::extent<3> thin_grid(8, 64, 64);
    const auto thin_input = generate_for<C>("smooth", C::is_double ? 24 : 8, thin_grid);
    const auto thin_values = host_view_of<T, D>(thin_input, thin_grid);
    const frame_bytes thin = streamed_frame_of<T, D>(exec, thin_values, 2);
    CHECK(thin == chunked_frame_of(exec, thin_values, 2));
    const auto info = ndzip::read_chunked_header(thin.data(), thin.size());
    const auto head = ndzip::read_slab_head(info, 0, thin.data() + 64, thin.size() - 64);
    CHECK(head.coded_dimensions == 2);
    auto thin_out = make_view<grid_view<T, D>>("thin_out", thin_grid);
    read_in_order<T, D>(exec, thin, thin_out);
    CHECK(mismatch(bits_of<Bits>(thin_out), thin_input) == "");
  }
}

TEST_CASE("chunked frame stream: slabs out of order, of other rows, missing or too many are "
          "refused, and change nothing") {
  const three_slabs f;
  using writer_type = ndzip::chunked_frame_writer<float, 2, Kokkos::DefaultHostExecutionSpace>;
  writer_type writer(f.exec, f.grid, 64);
  CHECK(writer.slab_count() == 3);
  CHECK(writer.slab_grid(2) == ndzip::extent<2>(2, 67));
  // The last slab (2 rows) first; a View of the whole array; finish() before the slabs.
  CHECK_THROWS_AS(writer.encode_slab(rows_of(f.values, 128, 130)), std::invalid_argument);
  CHECK_THROWS_AS(writer.encode_slab(f.values), std::invalid_argument);
  CHECK_THROWS_AS(writer.finish(), std::logic_error);
  // A record buffer too small for slab 0: refused, and slab 0 is still next.
  host_frame_view tiny("tiny", 100);
  CHECK_THROWS_AS(writer.encode_slab(rows_of(f.values, 0, 64), tiny), ndzip::capacity_error);
  host_frame_view headless("headless", 16);
  CHECK_THROWS_AS(writer.encode_slab(rows_of(f.values, 0, 64), headless), ndzip::capacity_error);
  CHECK(writer.next_slab() == 0);
  CHECK(writer.bytes_written() == ndzip::chunked_header_bytes);
  // Values overlapping the record buffer.
  {
    host_frame_view shared("shared", writer.record_bound() + 64 * 67 * sizeof(float));
    const auto inside = grid_at<float, 2, Kokkos::HostSpace>(shared.data() + 8, ndzip::extent<2>(64, 67));
    CHECK_THROWS_AS(writer.encode_slab(inside, shared), std::invalid_argument);
  }
  // Then the slabs in order: the same frame as in one call.
  frame_bytes out(writer.header().begin(), writer.header().end());
  for (std::uint64_t s = 0; s < 3; ++s) {
    const auto r = writer.encode_slab(rows_of(f.values, 64 * s, std::min<std::uint64_t>(64 * s + 64, 130)));
    out.insert(out.end(), r.data(), r.data() + r.size());
  }
  CHECK_THROWS_AS(writer.encode_slab(rows_of(f.values, 128, 130)), std::logic_error);
  const auto end = writer.finish();
  out.insert(out.end(), end.begin(), end.end());
  CHECK(out == f.frame);
  CHECK_THROWS_AS(writer.finish(), std::logic_error);
  CHECK_THROWS_AS(writer.encode_slab(rows_of(f.values, 128, 130)), std::logic_error);
  CHECK_THROWS_AS(writer_type(f.exec, f.grid, 131), std::invalid_argument);
  CHECK_THROWS_AS(writer_type(f.exec, ndzip::extent<2>(0, 67)), std::invalid_argument);

  // The reader: slab 1's record where slab 0's belongs, a View of other rows, finish() early.
  using reader_type = ndzip::chunked_frame_reader<float, 2, Kokkos::DefaultHostExecutionSpace>;
  reader_type reader(f.exec, f.frame.data(), ndzip::chunked_header_bytes);
  auto out_values = make_view<grid_view<float, 2>>("out", f.grid);
  const frame_bytes r0 = f.record(0), r1 = f.record(1), r2 = f.record(2);
  const auto view = [](const frame_bytes& b) { return const_frame_view(b.data(), b.size()); };
  CHECK(frame_error_of([&] { reader.read_slab_head(r1.data(), r1.size()); })
            .find("slab 0: its head says it is slab 1") != std::string::npos);
  CHECK(frame_error_of([&] { reader.decode_slab(view(r1), rows_of(out_values, 0, 64)); })
            .find("slab 0: its head says it is slab 1") != std::string::npos);
  CHECK_THROWS_AS(reader.decode_slab(view(r0), rows_of(out_values, 0, 63)), std::invalid_argument);
  CHECK_THROWS_AS(reader.finish(f.frame.data() + f.index, reader.end_bytes()), std::logic_error);
  CHECK(reader.next_slab() == 0);
  reader.decode_slab(view(r0), rows_of(out_values, 0, 64));
  reader.decode_slab(view(r1), rows_of(out_values, 64, 128));
  reader.decode_slab(view(r2), rows_of(out_values, 128, 130));
  CHECK_THROWS_AS(reader.decode_slab(view(r2), rows_of(out_values, 128, 130)), std::logic_error);
  reader.finish(f.frame.data() + f.index, reader.end_bytes());
  CHECK(mismatch(bits_of<std::uint32_t>(out_values), f.input) == "");
  CHECK_THROWS_AS(reader.finish(f.frame.data() + f.index, reader.end_bytes()), std::logic_error);
  // A frame of another element type or rank.
  CHECK(frame_error_of([&] {
          ndzip::chunked_frame_reader<double, 2, Kokkos::DefaultHostExecutionSpace>(
              f.exec, f.frame.data(), f.frame.size());
        }).find("holds a float 130x67 array, but the reader reads a double") != std::string::npos);
  CHECK(frame_error_of([&] {
          ndzip::chunked_frame_reader<float, 3, Kokkos::DefaultHostExecutionSpace>(
              f.exec, f.frame.data(), f.frame.size());
        }).find("but the reader reads a float") != std::string::npos);
}

TEST_CASE("chunked frame stream: an index that disagrees with the slabs, damage and truncation "
          "are refused by name") {
  const three_slabs f;
  using reader_type = ndzip::chunked_frame_reader<float, 2, Kokkos::DefaultHostExecutionSpace>;
  auto out = make_view<grid_view<float, 2>>("out", f.grid);
  // Reads every slab, then returns the message of finish() on `end`.
  const auto finish_with = [&](const frame_bytes& end) {
    reader_type reader(f.exec, f.frame.data(), ndzip::chunked_header_bytes);
    for (std::uint64_t s = 0; s < 3; ++s) {
      const frame_bytes r = f.record(s);
      reader.decode_slab(const_frame_view(r.data(), r.size()),
                         rows_of(out, 64 * s, std::min<std::uint64_t>(64 * s + 64, 130)));
    }
    return frame_error_of([&] { reader.finish(end.data(), end.size()); });
  };
  const frame_bytes good_end(f.frame.begin() + f.index, f.frame.end());
  CHECK(finish_with(good_end) == "");
  // The end read alone gives what the whole frame's index gives.
  CHECK(ndzip::read_chunked_end(f.info, good_end.data(), good_end.size(), f.index) == f.offsets);
  // An index well formed and sealed, but with slab 1 elsewhere than the reader found it.
  std::vector<std::uint64_t> moved = f.offsets;
  moved[1] += 8;
  const auto other = ndzip::encode_chunked_end(moved, f.index);
  CHECK(finish_with(other).find("the index puts slab 1 at " + std::to_string(moved[1]) +
                                ", but it lies at " + std::to_string(f.offsets[1]) +
                                " (the index disagrees with the slabs)") != std::string::npos);
  // Its trailer putting the index elsewhere; a damaged index; the end cut short.
  CHECK(finish_with(ndzip::encode_chunked_end(f.offsets, f.index + 8))
            .find("the trailer puts the index at") != std::string::npos);
  frame_bytes damaged = good_end;
  damaged[3] ^= std::byte{1};
  CHECK(finish_with(damaged).find("index checksum mismatch") != std::string::npos);
  CHECK(finish_with(frame_bytes(good_end.begin(), good_end.end() - 1))
            .find("truncated: the index and trailer of 3 slabs take 56 bytes, 55 are there") !=
        std::string::npos);

  // A record cut short, or damaged: refused before decoding, naming the slab.
  reader_type reader(f.exec, f.frame.data(), ndzip::chunked_header_bytes);
  const frame_bytes r0 = f.record(0);
  const frame_bytes cut(r0.begin(), r0.end() - 8);
  CHECK(frame_error_of([&] {
          reader.decode_slab(const_frame_view(cut.data(), cut.size()), rows_of(out, 0, 64));
        }).find("slab 0: truncated") != std::string::npos);
  frame_bytes bad = r0;
  bad[100] ^= std::byte{4};
  CHECK(frame_error_of([&] {
          reader.decode_slab(const_frame_view(bad.data(), bad.size()), rows_of(out, 0, 64));
        }).find("slab 0: checksum mismatch") != std::string::npos);
  CHECK(frame_error_of([&] { reader.read_slab_head(r0.data(), 20); })
            .find("slab 0: truncated head (20 of 32 bytes)") != std::string::npos);
  CHECK(reader.next_slab() == 0);
  // A header cut short.
  CHECK(frame_error_of([&] { reader_type(f.exec, f.frame.data(), 40); })
            .find("truncated header (40 of 64 bytes)") != std::string::npos);
}
