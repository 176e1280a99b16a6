#pragma once
// How decode kernels report the first problem they find in an untrusted stream: every failing
// hypercube proposes (index << 8 | failure) with an atomic minimum into the failure word of a
// decompress_outcome (ndzip/decompress_outcome.hpp), so the host sees the lowest-numbered
// failing hypercube whatever order the teams ran in.

#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

#include "ndzip/decompress_outcome.hpp"

namespace ndzip::core {

enum class stream_failure : std::uint8_t {
  block_shorter_than_heads = 1,  // offset-table entry < previous entry + H
  block_longer_than_possible,    // offset-table entry > previous entry + H + 4096
  heads_do_not_match_block,      // popcount of the heads != block length - H
  stream_truncated,              // the last offset-table entry needs more bytes than given
  entry_beyond_last,             // offset-table entry > the last entry
};

inline constexpr std::uint64_t no_stream_failure = decompress_outcome::no_failure;

KOKKOS_INLINE_FUNCTION void report_stream_failure(std::uint64_t* status, std::size_t hypercube,
                                                  stream_failure failure) {
  Kokkos::atomic_fetch_min(status, (static_cast<std::uint64_t>(hypercube) << 8) |
                                       static_cast<std::uint64_t>(failure));
}

// The message of a failed outcome, as ndzip::stream_error carries it.
inline std::string describe_stream_failure(const decompress_outcome& outcome, int heads_per_block,
                                           int max_block_words) {
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
  }
  return where + ": unknown failure";
}

}  // namespace ndzip::core
