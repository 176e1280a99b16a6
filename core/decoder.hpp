#pragma once
// Decompression kernels for an untrusted stream: copy the offset table out of the stream (V0),
// validate the copy (V1), then decode every hypercube whose heads account for exactly its block
// (D1). Kernels never read outside the stream, even if the stream memory changes while they run
// (a buffer shared with another process or thread): the table is read from the stream exactly
// once, and everything after V0 uses only the validated copy; D1 likewise reads each block's
// heads once into team scratch and checks that copy before it reads any column.

#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "core/border.hpp"
#include "core/chunk_packing.hpp"
#include "core/encoder.hpp"
#include "core/hypercube_access.hpp"
#include "core/lorenzo.hpp"
#include "core/stream_status.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// V0: the stream's offset table (`count` 32-bit entries at its start) into `offsets`.
template <class ExecSpace>
void copy_offset_table(const ExecSpace& exec, std::size_t count, const std::byte* stream,
                       std::uint32_t* offsets) {
  Kokkos::parallel_for(
      "ndzip::copy_offset_table",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, count),
      KOKKOS_LAMBDA(std::int64_t i) {
        offsets[i] = reinterpret_cast<const std::uint32_t*>(stream)[i];
      });
}

// V1: every block holds at least its heads and at most a full block. status[1] receives the
// last entry (the block area size); the caller checks it against the stream size.
template <class T, int Dims, class ExecSpace>
void validate_offset_table(const ExecSpace& exec, const stream_layout<T, Dims>& layout,
                           const std::uint32_t* offsets, std::uint64_t* status) {
  using profile_type = profile<T, Dims>;
  const std::size_t count = layout.hypercube_count;
  Kokkos::parallel_for(
      "ndzip::validate_offset_table",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(exec, 0, count),
      KOKKOS_LAMBDA(std::int64_t i) {
        const std::uint64_t begin = i == 0 ? 0 : offsets[i - 1];
        const std::uint64_t end = offsets[i];
        if (end < begin + profile_type::chunks_per_hypercube)
          report_stream_failure(status, i, stream_failure::block_shorter_than_heads);
        else if (end - begin > static_cast<std::uint64_t>(profile_type::max_block_words))
          report_stream_failure(status, i, stream_failure::block_longer_than_possible);
        if (i + 1 == static_cast<std::int64_t>(count)) status[1] = end;
      });
}

// D1: block -> hypercube in the grid; teams past the last hypercube copy the border.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct decode_hypercubes {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  using lane_ops = typename base::lane_ops;
  using member_type = typename base::member_type;
  using profile_type = typename base::profile_type;

  stream_layout<T, Dims> layout;
  const std::byte* stream;
  const std::uint32_t* offsets;  // the offset table as V0 copied and V1 validated it
  bits_type* values;
  std::uint64_t* status;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const std::size_t index = member.league_rank();
    const std::size_t n = layout.hypercube_count;
    if (index >= n) {
      // Teams past the last hypercube copy the border (after the validated block area).
      const auto* border = reinterpret_cast<const bits_type*>(stream + layout.header_bytes()) +
                           (n == 0 ? 0 : offsets[n - 1]);
      copy_border_slice<border_direction::stream_to_grid>(
          member, layout, values, const_cast<bits_type*>(border), index - n);
      return;
    }
    const std::uint64_t begin = index == 0 ? 0 : offsets[index - 1];
    const std::uint64_t end = offsets[index];
    const auto* block = reinterpret_cast<const bits_type*>(stream + layout.header_bytes()) + begin;
    const auto scratch = base::scratch(member);
    constexpr bool scan_rows = rows_scanned_while_unpacking<profile_type, lane_ops>;
    if (!unpack_hypercube<profile_type, lane_ops, scan_rows>(member, block, end - begin,
                                                             scratch.cube, scratch.heads,
                                                             scratch.chunk_offsets)) {
      Kokkos::single(Kokkos::PerTeam(member), [&] {
        report_stream_failure(status, index, stream_failure::heads_do_not_match_block);
      });
      return;
    }
    inverse_lorenzo<profile_type, lane_ops>(member, scratch.cube, scratch.row_carry);
    std::size_t origin[Dims];
    layout.hypercube_origin(index, origin);
    store_hypercube<profile_type, lane_ops>(member, scratch.cube,
                                            grid_placement<profile_type>(layout.grid, origin), values);
  }
};

}  // namespace ndzip::core
