#pragma once
// Decompression kernels for an untrusted stream: copy the offset table out of the stream (V0),
// then decode every hypercube (D1), each team checking its own block against that copy before
// it reads the block. Kernels never read outside the stream, even if the stream memory changes
// while they run (a buffer shared with another process or thread): the table is read from the
// stream exactly once, and D1 uses only the copy; each block's heads are likewise read once into
// team scratch and checked there before any column is read. Nothing is read back to the host:
// the outcome (bytes consumed, or the first failure) is written into a decompress_outcome on the
// device, so that a decompression can be queued without waiting for it.

#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "core/border.hpp"
#include "core/chunk_packing.hpp"
#include "core/encoder.hpp"
#include "core/hypercube_access.hpp"
#include "core/lorenzo.hpp"
#include "core/stream_status.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// V0: the stream's offset table (`count` 32-bit entries at its start) into `offsets`, and the
// outcome reset: no failure yet, `given_bytes` the stream's size.
template <class ExecSpace>
void copy_offset_table(const ExecSpace& exec, std::size_t count, const std::byte* stream,
                       std::size_t stream_size, std::uint32_t* offsets,
                       decompress_outcome* outcome) {
  Kokkos::parallel_for(
      "ndzip::copy_offset_table",
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
          exec, 0, static_cast<std::int64_t>(count > 0 ? count : 1)),
      KOKKOS_LAMBDA(std::int64_t i) {
        if (i == 0) {
          outcome->failure = no_stream_failure;
          outcome->stream_bytes = 0;
          outcome->given_bytes = stream_size;
        }
        if (static_cast<std::size_t>(i) < count)
          offsets[i] = reinterpret_cast<const std::uint32_t*>(stream)[i];
      });
}

// D1: block -> hypercube in the grid; teams past the last hypercube copy the border. Every team
// first checks that the stream holds what the offset table's last entry announces; a hypercube's
// team then checks its own block's entries.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct decode_hypercubes {
  using base = kernel_types<T, Dims, ExecSpace, LaneOps>;
  using bits_type = typename base::bits_type;
  using lane_ops = typename base::lane_ops;
  using member_type = typename base::member_type;
  using profile_type = typename base::profile_type;

  stream_layout<T, Dims> layout;
  const std::byte* stream;
  std::size_t stream_size;
  const std::uint32_t* offsets;  // the offset table as V0 copied it
  bits_type* values;
  decompress_outcome* outcome;

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& member) const {
    const std::size_t index = member.league_rank();
    const std::size_t n = layout.hypercube_count;
    const std::uint64_t area = n == 0 ? 0 : offsets[n - 1];
    const std::uint64_t needed = layout.stream_bytes(area);
    if (needed > stream_size) {
      if (index == 0)
        Kokkos::single(Kokkos::PerTeam(member), [&] {
          outcome->stream_bytes = needed;
          report_stream_failure(&outcome->failure, 0, stream_failure::stream_truncated);
        });
      return;
    }
    if (index == 0)
      Kokkos::single(Kokkos::PerTeam(member), [&] { outcome->stream_bytes = needed; });
    const auto* block_area = reinterpret_cast<const bits_type*>(stream + layout.header_bytes());
    if (index >= n) {
      copy_border_slice<border_direction::stream_to_grid>(
          member, layout, values, const_cast<bits_type*>(block_area + area), index - n);
      return;
    }
    const std::uint64_t begin = index == 0 ? 0 : offsets[index - 1];
    const std::uint64_t end = offsets[index];
    const auto fail = [&](stream_failure failure) {
      Kokkos::single(Kokkos::PerTeam(member),
                     [&] { report_stream_failure(&outcome->failure, index, failure); });
    };
    if (end < begin + profile_type::chunks_per_hypercube)
      return fail(stream_failure::block_shorter_than_heads);
    if (end - begin > static_cast<std::uint64_t>(profile_type::max_block_words))
      return fail(stream_failure::block_longer_than_possible);
    if (end > area) return fail(stream_failure::entry_beyond_last);
    const auto scratch = base::scratch(member);
    constexpr bool scan_rows = rows_scanned_while_unpacking<profile_type, lane_ops>;
    if (!unpack_hypercube<profile_type, lane_ops, scan_rows>(member, block_area + begin,
                                                             end - begin, scratch.cube,
                                                             scratch.heads, scratch.chunk_offsets))
      return fail(stream_failure::heads_do_not_match_block);
    inverse_lorenzo<profile_type, lane_ops>(member, scratch.cube, scratch.row_carry);
    std::size_t origin[Dims];
    layout.hypercube_origin(index, origin);
    const grid_placement<profile_type> placement(layout.grid, origin);
    store_hypercube<profile_type, lane_ops>(member, scratch.cube, placement, values);
  }
};

}  // namespace ndzip::core
