// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Chunked frames (ndzip/chunked_frame_format.hpp; docs/FORMAT.md "The chunked frame, version
// 4") written and read a slab at a time, for arrays larger than memory and for pipes: the caller
// holds one slab's values and one slab's record, never the whole array or frame.
//
// Writing: the header, each slab's record (head, stream, zero padding) as it is compressed, in
// order, then the index and trailer; nothing is ever written back, so the bytes may go to a pipe.
//
//   ndzip::chunked_frame_writer<float, 3> writer(exec, ndzip::extent<3>(nz, ny, nx), rows);
//   out.write(writer.header());                        // 64 bytes
//   for (std::uint64_t s = 0; s < writer.slab_count(); ++s) {
//     // A View of slab s's rows (writer.slab_grid(s)): a subview of a field, or a buffer that
//     // was just read from a file.
//     const auto record = writer.encode_slab(slab_values);  // into the writer's own buffer
//     out.write(record.data(), record.size());
//   }
//   out.write(writer.finish());                        // the index and trailer
//
// Reading in order (a pipe: the reader needs no index, and learns from each slab's head how
// many bytes to read next):
//
//   ndzip::chunked_frame_reader<float, 3> reader(exec, header, 64);   // the first 64 bytes
//   for (std::uint64_t s = 0; s < reader.slab_count(); ++s) {
//     in.read(record, ndzip::slab_head_bytes);          // the slab's head
//     const ndzip::slab_info slab = reader.read_slab_head(record, ndzip::slab_head_bytes);
//     in.read(record + 32, slab.record_bytes() - 32);   // its stream and padding
//     reader.decode_slab(record_view, slab_values);     // a View of reader.slab_grid(s)
//   }
//   in.read(end, reader.end_bytes());
//   reader.finish(end, reader.end_bytes());             // the index holds the offsets seen
//
// The writer folds each slab as compress_chunked_frame does (folding::automatic, the rule of
// ndzip/folding.hpp applied to the slab's grid), so its bytes are compress_chunked_frame's byte
// for byte: compress_chunked_frame and decompress_chunked_frame (ndzip/chunked_frame.hpp) are
// a writer and a reader over one frame in memory.
//
// Memory: each object keeps the codecs of the slab grids it has met (the full slabs' and the
// last one's, folded or not) and their scratch, and, where the execution space cannot read the
// record's memory (a GPU and a host record), a stream buffer in its own memory; after the first
// slab of each grid, encoding and decoding allocate nothing (the writer's own record buffer is
// allocated once, at its first encode_slab without a buffer). Slabs must come in order, each a
// View of exactly its rows: another View, a slab too many, or finish() before the last slab is
// refused (std::invalid_argument for a View of other extents, std::logic_error for calls out of
// order) and changes nothing. Errors in the frame throw ndzip::frame_error naming the slab, a
// damaged stream ndzip::stream_error (the slab's values are then unspecified). Every call
// completes before it returns. Objects are movable, not copyable; one object serves one thread
// at a time.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ndzip/chunked_frame.hpp"
#include "ndzip/chunked_frame_format.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/detail/disjoint.hpp"
#include "ndzip/detail/frame_bytes.hpp"
#include "ndzip/detail/frame_views.hpp"
#include "ndzip/error.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/folding.hpp"
#include "ndzip/stream_size.hpp"
#include "ndzip/view_checks.hpp"

namespace ndzip {

namespace detail {

// The extents of slab s of `frame` as a grid of the array's rank.
template <int Dims>
extent<Dims> slab_grid_of(const chunked_frame_info& frame, std::uint64_t s) {
  const auto e = frame.slab_extents(s);
  extent<Dims> grid;
  for (int a = 0; a < Dims; ++a) grid[a] = static_cast<std::size_t>(e[a]);
  return grid;
}

// The longest stream a slab of `grid` can have in `mode`, coded as it is or folded.
template <class T, int Dims>
std::size_t slab_stream_bound(const extent<Dims>& grid, codec_mode mode) {
  const std::size_t folded = with_coded_grid<T>(
      grid, coded_rank<T>(grid, folding::automatic),
      [&](const auto& coded) { return compressed_size_bound<T>(coded, mode); });
  return std::max(compressed_size_bound<T>(grid, mode), folded);
}

// The stream buffer in the execution space's memory through which a writer or reader moves a
// slab's stream where that space cannot read the record's memory (or the record is misaligned
// for the codec), allocated once, at the first slab that needs it.
template <class ExecSpace>
class slab_stage {
 public:
  using bytes = Kokkos::View<std::byte*, typename ExecSpace::memory_space>;
  // At least `size` bytes (`hint`, the most any slab needs, where it must grow).
  bytes get(const ExecSpace& exec, std::size_t size, std::size_t hint) {
    if (m_bytes.size() < size)
      m_bytes = bytes(Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "ndzip::slab_stage"),
                      std::max(size, hint));
    return Kokkos::subview(m_bytes, std::make_pair(std::size_t{0}, size));
  }

 private:
  bytes m_bytes;
};

}  // namespace detail

// Compresses an array of T with Dims dimensions into a chunked frame, one slab after another.
template <class T, int Dims, class ExecSpace>
class chunked_frame_writer {
 public:
  using value_type = T;
  using execution_space = ExecSpace;
  static constexpr int dimensions = Dims;
  // What the View overload of encode_slab returns: the writer's own buffer, valid until the
  // next encode_slab.
  using record_view = Kokkos::View<const std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

  // A frame of an array of these extents (slowest first, none 0) in slabs of `slab_rows` rows
  // (0: default_slab_rows; else 1 to extents[0]) coded in `mode`, each slab folded as `fold`
  // says (folding::automatic: as compress_chunked_frame does; none: every slab as it is).
  // Throws std::invalid_argument for an empty array, rows out of range, or slabs the ndzip
  // format cannot hold (default_slab_rows never picks those).
  chunked_frame_writer(const ExecSpace& exec, const extent<Dims>& extents,
                       std::uint64_t slab_rows = 0, codec_mode mode = codec_mode::ndzip,
                       folding fold = folding::automatic)
      : m_exec(exec), m_grid(extents), m_mode(mode), m_fold(fold), m_codecs(exec) {
    if (extents.size() == 0)
      throw std::invalid_argument("ndzip: chunked_frame_writer: the array " + to_string(extents) +
                                  " is empty; a frame holds arrays of at least one element");
    const std::uint64_t rows = detail::slab_rows_for<T>(extents, slab_rows, mode);
    m_header = encode_chunked_header(element_type_of<T>(), Dims, detail::frame_extents(extents),
                                     rows);
    m_info = read_chunked_header(m_header.data(), m_header.size());
    // Slab 0 is the largest; the last one may be smaller. Throws for a grid the format cannot
    // hold.
    m_stream_bound = std::max(detail::slab_stream_bound<T>(slab_grid(0), mode),
                              detail::slab_stream_bound<T>(slab_grid(slab_count() - 1), mode));
  }

  // The frame's header (64 bytes), to be written first.
  const std::array<std::byte, chunked_header_bytes>& header() const { return m_header; }
  // What the header records: type, extents, rows per slab, slab count.
  const chunked_frame_info& info() const { return m_info; }
  const extent<Dims>& grid() const { return m_grid; }
  codec_mode mode() const { return m_mode; }
  std::uint64_t slab_count() const { return m_info.slab_count; }
  // The extents of slab s: the array's, with its rows in the slowest.
  extent<Dims> slab_grid(std::uint64_t s) const { return detail::slab_grid_of<Dims>(m_info, s); }
  // The slab encode_slab takes next (slab_count() once all are written).
  std::uint64_t next_slab() const { return m_next; }
  // The frame's bytes so far, the header and the records returned: the offset of the next
  // slab's head (and, once all slabs are written, of the index).
  std::uint64_t bytes_written() const { return m_at; }
  // The most bytes a slab's record takes: a record buffer of this size always suffices.
  std::size_t record_bound() const {
    return static_cast<std::size_t>((slab_head_bytes + m_stream_bound + 7) / 8 * 8);
  }
  // The bytes finish() returns: the index (8 per slab) and the trailer.
  std::size_t end_bytes() const {
    return static_cast<std::size_t>(8 * m_info.slab_count + chunked_trailer_bytes);
  }

  // Compresses slab next_slab() from `values` (a contiguous View of its rows, extents
  // slab_grid(next_slab()), in memory the execution space can access) into its record at the
  // start of `record` (a contiguous rank-1 View of bytes in host-accessible memory, disjoint
  // from the values): head, stream, zero padding. Returns the record's size, a multiple of 8.
  // Throws ndzip::capacity_error if `record` is too small (record_bound() suffices); the slab
  // is then still the next one.
  template <class ValuesView, class RecordView>
  std::size_t encode_slab(const ValuesView& values, const RecordView& record) {
    static_assert(!std::is_const_v<typename RecordView::value_type>,
                  "ndzip::chunked_frame_writer::encode_slab writes into the record View");
    detail::check_frame_view(record);
    const extent<Dims> slab_grid = expect_slab(values);
    std::byte* const out = reinterpret_cast<std::byte*>(record.data());
    detail::check_disjoint(values.data(), slab_grid.size() * sizeof(T), out, record.size(),
                           "slab record buffer");
    const std::uint64_t s = m_next;
    if (record.size() < slab_head_bytes)
      throw capacity_error("ndzip: slab " + std::to_string(s) + "'s record needs " +
                           std::to_string(slab_head_bytes) +
                           " bytes for its head alone, but the record buffer holds only " +
                           std::to_string(record.size()));
    const int coded_rank = detail::coded_rank<T>(slab_grid, m_fold);
    const std::size_t stream_bytes = detail::with_coded_view(
        values, slab_grid, coded_rank, [&](const auto& coded_values, const auto& coded_grid) {
          return stream_into<typename RecordView::memory_space>(
              m_codecs.get(coded_grid, m_mode), coded_values, out + slab_head_bytes,
              record.size() - slab_head_bytes);
        });
    m_exec.fence();  // the head's checksum reads the stream on the host
    slab_info written;
    written.stream_bytes = stream_bytes;
    const std::uint64_t padded = written.record_bytes();
    if (padded > record.size())
      throw capacity_error("ndzip: slab " + std::to_string(s) + "'s record takes " +
                           std::to_string(padded) + " bytes with its padding, but the record "
                           "buffer holds only " + std::to_string(record.size()) +
                           " (record_bound is " + std::to_string(record_bound()) + ")");
    const auto head =
        encode_slab_head(m_info, s, m_mode, coded_rank, out + slab_head_bytes, stream_bytes);
    std::copy(head.begin(), head.end(), out);
    std::memset(out + slab_head_bytes + stream_bytes, 0,
                static_cast<std::size_t>(padded - slab_head_bytes - stream_bytes));
    m_offsets.push_back(m_at);
    m_at += padded;
    ++m_next;
    return static_cast<std::size_t>(padded);
  }

  // The same into the writer's own record buffer (record_bound() bytes of host memory,
  // allocated at the first call); the View returned holds the record until the next call.
  template <class ValuesView>
  record_view encode_slab(const ValuesView& values) {
    if (m_record.size() == 0) {
      expect_slab(values);  // refused before the buffer is allocated
      m_record = Kokkos::View<std::byte*, Kokkos::HostSpace>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::chunked_frame_writer::record"),
          record_bound());
    }
    const std::size_t bytes = encode_slab(values, m_record);
    return record_view(m_record.data(), bytes);
  }

  // The frame's end, once every slab is written: the index of the slabs' offsets and the
  // trailer (end_bytes() bytes). std::logic_error if slabs are missing or it was called before.
  std::vector<std::byte> finish() {
    if (m_finished)
      throw std::logic_error("ndzip: chunked_frame_writer::finish: the frame is finished already");
    if (m_next != m_info.slab_count)
      throw std::logic_error("ndzip: chunked_frame_writer::finish: " +
                             std::to_string(m_info.slab_count - m_next) + " of the frame's " +
                             std::to_string(m_info.slab_count) + " slabs are missing (slab " +
                             std::to_string(m_next) + " is next)");
    m_finished = true;
    return encode_chunked_end(m_offsets, m_at);
  }

 private:
  // The grid of the next slab, which `values` must have.
  template <class ValuesView>
  extent<Dims> expect_slab(const ValuesView& values) const {
    static_assert(Kokkos::is_view<ValuesView>::value && ValuesView::rank == Dims &&
                      std::is_same_v<std::remove_const_t<typename ValuesView::value_type>, T>,
                  "ndzip::chunked_frame_writer: a slab is a View of T with the array's rank");
    if (m_finished)
      throw std::logic_error("ndzip: chunked_frame_writer: the frame is finished; no slab follows");
    if (m_next == m_info.slab_count)
      throw std::logic_error("ndzip: chunked_frame_writer: all " +
                             std::to_string(m_info.slab_count) +
                             " slabs are written; finish() gives the index and trailer");
    const extent<Dims> want = slab_grid(m_next);
    const extent<Dims> got = grid_of(values);
    if (got != want)
      throw std::invalid_argument(
          "ndzip: chunked_frame_writer: slab " + std::to_string(m_next) + " holds rows " +
          std::to_string(m_info.first_row(m_next)) + " to " +
          std::to_string(m_info.first_row(m_next) + want[0] - 1) + " (extents " +
          to_string(want) + "), but " + detail::view_label(values) + " has extents " +
          to_string(got) + " (slabs come in order, each a View of its own rows)");
    return want;
  }

  // Compresses the coded slab into the record's stream: in place where the execution space can
  // write there and it is aligned for the codec, else through the stage.
  template <class RecordSpace, class Codec, class CodedValues>
  std::size_t stream_into(Codec& codec, const CodedValues& values, std::byte* stream,
                          std::size_t capacity) {
    if constexpr (Kokkos::SpaceAccessibility<ExecSpace, RecordSpace>::accessible) {
      if (reinterpret_cast<std::uintptr_t>(stream) % codec.alignment() == 0)
        return codec.compress(values,
                              detail::unmanaged_bytes<std::byte, RecordSpace>(stream, capacity));
    }
    const auto stage = m_stage.get(m_exec, codec.size_bound(), m_stream_bound);
    const std::size_t bytes = codec.compress(values, stage);
    if (bytes > capacity)
      throw capacity_error("ndzip: slab " + std::to_string(m_next) + "'s stream takes " +
                           std::to_string(bytes) + " bytes, but the record buffer holds only " +
                           std::to_string(capacity) + " after the head (record_bound is " +
                           std::to_string(record_bound()) + ")");
    Kokkos::deep_copy(m_exec, detail::unmanaged_bytes<std::byte, RecordSpace>(stream, bytes),
                      Kokkos::subview(stage, std::make_pair(std::size_t{0}, bytes)));
    return bytes;
  }

  ExecSpace m_exec;
  extent<Dims> m_grid;
  codec_mode m_mode;
  folding m_fold;
  std::array<std::byte, chunked_header_bytes> m_header{};
  chunked_frame_info m_info;
  std::size_t m_stream_bound = 0;
  detail::slab_codecs<T, ExecSpace> m_codecs;
  detail::slab_stage<ExecSpace> m_stage;
  Kokkos::View<std::byte*, Kokkos::HostSpace> m_record;
  std::vector<std::uint64_t> m_offsets;  // of each record written
  std::uint64_t m_at = chunked_header_bytes;
  std::uint64_t m_next = 0;
  bool m_finished = false;
};

// Decompresses a chunked frame of an array of T with Dims dimensions, one slab after another in
// the order they lie in the frame: from its header, each slab's record, then its end.
template <class T, int Dims, class ExecSpace>
class chunked_frame_reader {
 public:
  using value_type = T;
  using execution_space = ExecSpace;
  static constexpr int dimensions = Dims;

  // From the frame's header at the start of the `size` bytes at `header` (checks 1-6 of
  // docs/FORMAT.md). Throws ndzip::frame_error if it is damaged or holds an array of another
  // element type or rank (read_chunked_header tells those first, for a caller that picks T and
  // Dims at run time).
  chunked_frame_reader(const ExecSpace& exec, const std::byte* header, std::size_t size)
      : m_exec(exec), m_info(read_chunked_header(header, size)), m_codecs(exec) {
    if (m_info.type != element_type_of<T>() || m_info.dimensions != Dims) {
      std::array<std::uint64_t, 3> ours{};
      for (int a = 0; a < Dims; ++a) ours[a] = m_info.extents[a];
      throw frame_error("ndzip: the chunked frame holds a " +
                        detail::describe_elements(m_info.type, m_info.dimensions,
                                                  m_info.extents) +
                        " array, but the reader reads a " +
                        detail::describe_elements(element_type_of<T>(), Dims, ours) +
                        " array");
    }
    for (int a = 0; a < Dims; ++a) m_grid[a] = static_cast<std::size_t>(m_info.extents[a]);
  }

  const chunked_frame_info& info() const { return m_info; }
  const extent<Dims>& grid() const { return m_grid; }
  std::uint64_t slab_count() const { return m_info.slab_count; }
  extent<Dims> slab_grid(std::uint64_t s) const { return detail::slab_grid_of<Dims>(m_info, s); }
  // The slab decode_slab takes next (slab_count() once all are read).
  std::uint64_t next_slab() const { return m_next; }
  // The frame's bytes read so far (the header and the records decoded): where the next slab's
  // head, or the index, lies.
  std::uint64_t bytes_read() const { return m_at; }
  // The bytes of the frame's end, which finish() takes: the index (8 per slab) and the trailer.
  std::size_t end_bytes() const {
    return static_cast<std::size_t>(8 * m_info.slab_count + chunked_trailer_bytes);
  }

  // Check 7 on the head of slab next_slab() at the start of the `size` bytes at `head` (32 will
  // do): its stream length is one its grid can have in its mode, so slab.record_bytes() bounds
  // what to read for it. Changes nothing.
  slab_info read_slab_head(const std::byte* head, std::size_t size) const {
    expect_more();
    return ndzip::read_slab_head(m_info, m_next, head, size);
  }

  // Checks 7-9 on the record of slab next_slab() at the start of `record` (a contiguous rank-1
  // View of bytes in host-accessible memory holding at least the record: its head, stream and
  // padding), its checksum before its stream, and decodes it into `values` (a contiguous View
  // of extents slab_grid(next_slab()), disjoint from the record). ndzip::frame_error naming
  // the slab for a damaged or truncated record (nothing decoded), ndzip::stream_error for a
  // stream inconsistent with its slab (the values then unspecified); std::invalid_argument for
  // a View of other extents.
  template <class RecordView, class ValuesView>
  void decode_slab(const RecordView& record, const ValuesView& values) {
    static_assert(Kokkos::is_view<ValuesView>::value && ValuesView::rank == Dims &&
                      std::is_same_v<typename ValuesView::value_type, T>,
                  "ndzip::chunked_frame_reader: a slab is a writable View of T with the "
                  "array's rank");
    detail::check_frame_view(record);
    expect_more();
    const std::uint64_t s = m_next;
    const extent<Dims> want = slab_grid(s);
    const extent<Dims> got = grid_of(values);
    if (got != want)
      throw std::invalid_argument("ndzip: chunked_frame_reader: slab " + std::to_string(s) +
                                  " has extents " + to_string(want) + ", but " +
                                  detail::view_label(values) + " has extents " + to_string(got));
    const std::byte* const data = reinterpret_cast<const std::byte*>(record.data());
    const slab_info head = ndzip::read_slab_head(m_info, s, data, record.size());
    verify_slab(head, data, record.size());
    detail::check_disjoint(values.data(), want.size() * sizeof(T), data, record.size(),
                           "slab record");
    const auto length = static_cast<std::size_t>(head.stream_bytes);
    const std::size_t consumed = detail::with_coded_view(
        values, want, head.coded_dimensions,
        [&](const auto& coded_values, const auto& coded_grid) {
          return stream_from<typename RecordView::memory_space>(
              m_codecs.get(coded_grid, head.mode), data + slab_head_bytes, length, coded_values,
              compressed_size_bound<T>(coded_grid, head.mode));
        });
    if (consumed != head.stream_bytes)
      throw frame_error("ndzip: chunked frame, slab " + std::to_string(s) + ": its stream ends " +
                        "after " + std::to_string(consumed) + " of its " +
                        std::to_string(head.stream_bytes) + " bytes");
    m_offsets.push_back(m_at);
    m_at += head.record_bytes();
    ++m_next;
  }

  // Checks 10-11 once every slab is decoded, on the frame's end (the `size` bytes at `end`,
  // end_bytes() of them): the trailer, and an index that holds the offsets the slabs were found
  // at (ndzip::frame_error otherwise, "the index disagrees with the slabs"). Whether anything
  // follows the trailer is for the caller to check. std::logic_error if slabs are missing.
  void finish(const std::byte* end, std::size_t size) {
    if (m_finished)
      throw std::logic_error("ndzip: chunked_frame_reader::finish: the frame is finished already");
    if (m_next != m_info.slab_count)
      throw std::logic_error("ndzip: chunked_frame_reader::finish: " +
                             std::to_string(m_info.slab_count - m_next) + " of the frame's " +
                             std::to_string(m_info.slab_count) + " slabs are not read (slab " +
                             std::to_string(m_next) + " is next)");
    const std::vector<std::uint64_t> offsets = read_chunked_end(m_info, end, size, m_at);
    for (std::size_t s = 0; s < offsets.size(); ++s)
      if (offsets[s] != m_offsets[s])
        throw frame_error("ndzip: chunked frame: the index puts slab " + std::to_string(s) +
                          " at " + std::to_string(offsets[s]) + ", but it lies at " +
                          std::to_string(m_offsets[s]) + " (the index disagrees with the slabs)");
    m_finished = true;
  }

 private:
  void expect_more() const {
    if (m_finished || m_next == m_info.slab_count)
      throw std::logic_error("ndzip: chunked_frame_reader: all " +
                             std::to_string(m_info.slab_count) +
                             " slabs are read; finish() checks the index and trailer");
  }

  // Decodes a slab's stream where it lies if the execution space can read it there and it is
  // aligned for the codec, else through the stage; returns the bytes consumed.
  template <class RecordSpace, class Codec, class CodedValues>
  std::size_t stream_from(Codec& codec, const std::byte* stream, std::size_t length,
                          const CodedValues& values, std::size_t hint) {
    using host_stream = detail::unmanaged_bytes<const std::byte, RecordSpace>;
    if constexpr (Kokkos::SpaceAccessibility<ExecSpace, RecordSpace>::accessible) {
      if (reinterpret_cast<std::uintptr_t>(stream) % codec.alignment() == 0)
        return codec.decompress(host_stream(stream, length), values);
    }
    const auto stage = m_stage.get(m_exec, length, hint);
    Kokkos::deep_copy(m_exec, stage, host_stream(stream, length));
    return codec.decompress(stage, values);
  }

  ExecSpace m_exec;
  chunked_frame_info m_info;
  extent<Dims> m_grid;
  detail::slab_codecs<T, ExecSpace> m_codecs;
  detail::slab_stage<ExecSpace> m_stage;
  std::vector<std::uint64_t> m_offsets;  // where each slab decoded lies
  std::uint64_t m_at = chunked_header_bytes;
  std::uint64_t m_next = 0;
  bool m_finished = false;
};

}  // namespace ndzip
