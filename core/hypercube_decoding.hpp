// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The internals of the device-callable decoder (ndzip/hypercube_decoder.hpp). A stream is
// validated once, by the stream decoder's own team bodies (decode_team) over validation_teams:
// every block's offset-table entries and heads checked as a decompression checks them, no block
// decoded. A user's team then decodes a hypercube into its team scratch, fully: the steps the
// stream decoder fuses into its store (host threads' last-axis prefix sums, lane groups' 1-D run
// carries, the sign bit rotated back) run in scratch, through the same store with the
// hypercube's own placement (own_placement), so that the scratch holds values, not residuals.

#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "backends/host_inline.hpp"
#include "backends/kernel_role.hpp"
#include "core/block_decoding.hpp"
#include "core/chunk_packing.hpp"
#include "core/decoder.hpp"
#include "core/encoder.hpp"
#include "core/hypercube_access.hpp"
#include "core/stream_status.hpp"
#include "ndzip/codec_mode.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/error.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/format.hpp"

namespace ndzip::core {

// The validation's teams: team t checks hypercube t's block and decodes nothing. The border is
// raw: what it takes of the stream is checked with the table's last entry, by every team.
struct validation_teams {
  static constexpr bool copies_border = false;
  static constexpr bool decodes_blocks = false;
  KOKKOS_INLINE_FUNCTION std::size_t hypercube_of(std::size_t team) const { return team; }
};

// Checks the stream of `grid` at `stream` (`stream_size` bytes in ExecSpace's memory) on `exec`
// as a decompression does: its alignment and length (std::invalid_argument, ndzip::stream_error),
// then in one kernel the offset table's last entry against the length and every block's entries
// and heads. Returns the bytes the stream takes (what a decompression consumes); throws
// ndzip::stream_error with decompress()'s message for the first problem. Synchronous. It reads
// the table and each block's heads, nothing else (docs/API.md, "Decoding in your own kernels",
// has its time against a decompression's).
template <class T, int Dims, class ExecSpace, class LaneOps>
std::size_t validate_stream(const ExecSpace& exec, const std::byte* stream,
                            std::size_t stream_size, const extent<Dims>& grid) {
  using memory_space = typename ExecSpace::memory_space;
  using kernels = kernel_types<T, Dims, ExecSpace, LaneOps>;
  check_grid_representable<T>(grid);
  check_stream_alignment<T>(stream, codec_mode::ndzip);
  check_stream_size<T>(grid, stream_size, codec_mode::ndzip);
  const stream_layout<T, Dims> layout(grid);
  const std::size_t teams = layout.hypercube_count > 0 ? layout.hypercube_count : 1;
  // The gatherer's three words, zeroed on `exec` ahead of the kernel.
  const Kokkos::View<std::uint64_t[3], memory_space> status(
      Kokkos::view_alloc(exec, "ndzip::validation_status"));
  const Kokkos::View<decompress_outcome, memory_space> outcome(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "ndzip::validation_outcome"));
  // decode_team over validation_teams, a team per hypercube (one at least): no values.
  const decode_hypercubes<T, Dims, ExecSpace, LaneOps, validation_teams> validate{
      layout, stream, stream_size, nullptr,
      outcome_gatherer{status.data(), status.data() + 1, status.data() + 2, outcome.data(),
                       teams}};
  kernels::template launch<backend::kernel_role::decode>("ndzip::validate_stream", exec, teams,
                                                         validate);
  const auto checked = Kokkos::create_mirror_view(outcome);
  Kokkos::deep_copy(exec, checked, outcome);
  exec.fence();
  if (checked().failure != decompress_outcome::no_failure)
    throw stream_error(describe_stream_failure(checked(), profile<T, Dims>::chunks_per_hypercube,
                                               profile<T, Dims>::max_block_words,
                                               to_string(grid)));
  return checked().stream_bytes;
}

// Decodes hypercube `index` (below the hypercube count) of a stream that validate_stream accepted
// into scratch.cube (kernel_types' team_scratch): its values' bits in hypercube-local C order,
// the last axis fastest. `block_area` is the stream's block area (behind the offset table
// `table`) and `area` its validated size in words. Over the whole team, which may read the
// values once it returns, until its next call on the same scratch: the call begins with a
// barrier, so that the team has read the previous hypercube's values before they are replaced.
// The checks of decode_team run again on what this team reads (a caller's buffer may have
// changed since it was validated); a block that fails them decodes to zeros, so that no read
// leaves the validated stream.
template <class Profile, class LaneOps, class Member, class Scratch, class Bits>
KOKKOS_INLINE_FUNCTION void decode_into_scratch(const Member& member, const Scratch& scratch,
                                                const std::uint32_t* table, const Bits* block_area,
                                                std::uint64_t area, std::size_t index) {
  // One clone of the whole team per host instruction set (backends/host/isa.hpp).
  LaneOps::run_team([&]() NDZIP_INLINE_LAMBDA {
    member.team_barrier();
    Kokkos::single(Kokkos::PerTeam(member), [&]() NDZIP_INLINE_LAMBDA {
      scratch.entries[1] = index == 0 ? 0 : table[index - 1];
      scratch.entries[2] = table[index];
    });
    member.team_barrier();
    const std::uint64_t begin = scratch.entries[1], end = scratch.entries[2];
    const Bits* block = block_area + begin;
    if (block_entries_failure<Profile>(index, begin, end, area) == no_stream_failure &&
        read_block_heads<Profile, LaneOps>(member, block, end - begin, scratch.heads,
                                           scratch.chunk_offsets)) {
      unpack_block<Profile, LaneOps>(member, block, scratch);
      store_decoded_block<Profile, LaneOps>(member, scratch, own_placement<Profile>(),
                                            scratch.cube);
    } else {
      // A local copy: Kokkos' range takes its bound by reference, which device code may not
      // bind to a static data member.
      const int size = Profile::hypercube_size;
      Kokkos::parallel_for(Kokkos::TeamVectorRange(member, size),
                           [&](int i) NDZIP_INLINE_LAMBDA { scratch.cube[i] = Bits{0}; });
    }
    member.team_barrier();
  });
}

}  // namespace ndzip::core
