// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How decode kernels report the first problem they find in an untrusted stream: every failing
// hypercube proposes the key (index << 8 | failure), and the lowest key becomes the failure word
// of the decompress_outcome (ndzip/decompress_outcome.hpp), so the host sees the lowest-numbered
// failing hypercube whatever order the teams ran in.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <Kokkos_Core.hpp>

#include "ndzip/codec_mode.hpp"
#include "ndzip/decompress_outcome.hpp"
#include "ndzip/error.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/format.hpp"
#include "ndzip/stream_size.hpp"

namespace ndzip::core {

enum class stream_failure : std::uint8_t {
  block_shorter_than_heads = 1,  // offset-table entry < previous entry + H
  block_longer_than_possible,    // offset-table entry > previous entry + H + 4096
  heads_do_not_match_block,      // popcount of the heads != block length - H
  stream_truncated,              // the last offset-table entry needs more bytes than given
  entry_beyond_last,             // offset-table entry > the last entry
  shorter_than_smallest,         // fewer bytes than the smallest stream of the grid (batches:
                                 // a single compressor refuses those on the host)
};

// The message for a stream of `given` bytes where the smallest stream of `grid` in `mode` is
// `smallest`.
inline std::string shorter_than_smallest_message(std::uint64_t given, std::uint64_t smallest,
                                                 const std::string& grid,
                                                 codec_mode mode = codec_mode::ndzip) {
  const std::string in_mode =
      mode == codec_mode::ndzip ? "" : std::string(" in the ") + codec_mode_name(mode) + " mode";
  return "ndzip: invalid stream: " + std::to_string(given) +
         " bytes is shorter than the smallest stream of a " + grid + " grid" + in_mode + " (" +
         std::to_string(smallest) + " bytes); truncated, or decoded with the wrong extents, type " +
         "or mode";
}

// Throws ndzip::stream_error unless a stream of `mode` for `grid` can be `stream_bytes` long:
// the engines' check, and ndzip::check_stream_size without a compressor.
template <class T, int Dims>
void check_stream_size(const extent<Dims>& grid, std::size_t stream_bytes, codec_mode mode) {
  const std::size_t smallest = smallest_stream_bytes<T>(grid, mode);
  if (stream_bytes < smallest)
    throw stream_error(
        shorter_than_smallest_message(stream_bytes, smallest, to_string(grid), mode));
}

// Throws std::invalid_argument unless `stream` starts where a stream of `mode` may (the
// engines' check, and the device-callable decoder's).
template <class T>
void check_stream_alignment(const std::byte* stream, codec_mode mode) {
  const std::size_t alignment = stream_alignment_of<T>(mode);
  if (reinterpret_cast<std::uintptr_t>(stream) % alignment != 0)
    throw std::invalid_argument("ndzip: the stream buffer must be aligned to " +
                                std::to_string(alignment) + " bytes in the " +
                                codec_mode_name(mode) + " mode");
}

inline constexpr std::uint64_t no_stream_failure = decompress_outcome::no_failure;

KOKKOS_INLINE_FUNCTION constexpr std::uint64_t failure_key(std::size_t hypercube,
                                                           stream_failure failure) {
  return (static_cast<std::uint64_t>(hypercube) << 8) | static_cast<std::uint64_t>(failure);
}

// Gathers what the teams of one decompression found into its decompress_outcome, inside the
// decoding kernel (no kernel, reset or copy of its own). A failing team merges its key into
// `failure`, which holds the complement of the lowest key so far: zero-initialised memory then
// means "no failure", and an atomic maximum keeps the lowest key. Team 0, which alone reports a
// truncated stream, notes the stream size it checked in `stream_bytes`, so that the outcome
// always pairs the size with the check made on it (teams may read different table entries
// from a stream that changes while it is decoded). Every team then counts itself in
// `finished`; the last one writes the outcome with plain stores (so it may live in host-pinned
// memory, which need not support device atomics) and sets `failure` and `finished` back to
// zero for the next decompression on the same scratch. Those are ordered on one
// execution-space instance, so they never overlap.
struct outcome_gatherer {
  std::uint64_t* failure;
  std::uint64_t* finished;
  std::uint64_t* stream_bytes;
  decompress_outcome* outcome;
  std::uint64_t teams;

  // One caller per team, once the team is done; `checked_bytes` counts from team 0 only.
  KOKKOS_INLINE_FUNCTION void finish_team(std::size_t team, std::uint64_t key,
                                          std::uint64_t checked_bytes,
                                          std::uint64_t given_bytes) const {
    if (team == 0) Kokkos::atomic_exchange(stream_bytes, checked_bytes);
    if (key != no_stream_failure) Kokkos::atomic_fetch_max(failure, ~key);
    // Only what the last team reads (a failure key, team 0's size) must be visible before a
    // team counts itself. A team that wrote neither does not wait for its decoded values to
    // complete first: the kernel's end orders those for the caller (H200, the corpus decoded
    // back to back: 333 -> 341 GB/s).
    if (team == 0 || key != no_stream_failure) Kokkos::memory_fence();
    if (Kokkos::atomic_fetch_add(finished, std::uint64_t{1}) + 1 != teams) return;
    Kokkos::memory_fence();
    // Both read before anything is written, so that their round trips overlap.
    const std::uint64_t lowest = Kokkos::atomic_exchange(failure, std::uint64_t{0});
    const std::uint64_t checked = Kokkos::atomic_fetch_add(stream_bytes, std::uint64_t{0});
    Kokkos::atomic_exchange(finished, std::uint64_t{0});
    outcome->failure = ~lowest;
    outcome->stream_bytes = checked;
    outcome->given_bytes = given_bytes;
  }
};

// The message of a failed outcome of decoding a `grid` grid, as ndzip::stream_error carries it.
inline std::string describe_stream_failure(const decompress_outcome& outcome, int heads_per_block,
                                           int max_block_words, const std::string& grid) {
  const std::uint64_t status = outcome.failure;
  const std::string where = "ndzip: invalid stream: hypercube " + std::to_string(status >> 8);
  switch (static_cast<stream_failure>(status & 0xff)) {
    case stream_failure::block_shorter_than_heads:
      return where + ": its offset-table entry leaves less than the " +
             std::to_string(heads_per_block) + " head words of a block (table not increasing?)";
    case stream_failure::block_longer_than_possible:
      return where + ": its offset-table entry makes the block longer than the largest possible " +
             std::to_string(max_block_words) + " words";
    case stream_failure::heads_do_not_match_block:
      return where + ": the chunk heads announce a different number of column words than the "
                     "block holds";
    case stream_failure::entry_beyond_last:
      return where + ": its offset-table entry lies beyond the table's last entry (table not "
                     "increasing?)";
    case stream_failure::stream_truncated:
      return "ndzip: invalid stream: its offset table needs " +
             std::to_string(outcome.stream_bytes) + " bytes but only " +
             std::to_string(outcome.given_bytes) + " are given (truncated?)";
    case stream_failure::shorter_than_smallest:
      return shorter_than_smallest_message(outcome.given_bytes, outcome.stream_bytes, grid);
  }
  return where + ": unknown failure";
}

}  // namespace ndzip::core
