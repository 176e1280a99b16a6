#pragma once
// How decode kernels report the first problem they find in an untrusted stream: every failing
// hypercube proposes (index << 8 | failure) with an atomic minimum, so the host sees the
// lowest-numbered failing hypercube whatever order the kernels ran in.

#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

namespace ndzip::core {

enum class stream_failure : std::uint8_t {
  block_shorter_than_heads = 1,  // offset-table entry < previous entry + H
  block_longer_than_possible,    // offset-table entry > previous entry + H + 4096
  heads_do_not_match_block,      // popcount of the heads != block length - H
};

inline constexpr std::uint64_t no_stream_failure = ~std::uint64_t{0};

KOKKOS_INLINE_FUNCTION void report_stream_failure(std::uint64_t* status, std::size_t hypercube,
                                                  stream_failure failure) {
  Kokkos::atomic_fetch_min(status, (static_cast<std::uint64_t>(hypercube) << 8) |
                                       static_cast<std::uint64_t>(failure));
}

// status[0] = no failure, status[1] = 0, on `exec`.
template <class ExecSpace>
void reset_stream_status(const ExecSpace& exec, std::uint64_t* status) {
  Kokkos::parallel_for(
      "ndzip::reset_stream_status", Kokkos::RangePolicy<ExecSpace>(exec, 0, 1), KOKKOS_LAMBDA(int) {
        status[0] = no_stream_failure;
        status[1] = 0;
      });
}

inline std::string describe_stream_failure(std::uint64_t status, int heads_per_block,
                                           int max_block_words) {
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
  }
  return where + ": unknown failure";
}

}  // namespace ndzip::core
