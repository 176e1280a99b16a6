// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How a View is cut into segments for any link (docs/FORMAT.md "MPI messages"): the transfer
// head that says it, and the segment size a link moving device memory as it is takes by
// default. Where segment k lies is the head's (transfer_head::slab_offset, slab_bytes). Not
// part of the API.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "ndzip/mpi/detail/core/wire_format.hpp"

namespace ndzip::mpi::detail {

// The transfer head of a View of `extents` cut into segments of about `segment_bytes` of values:
// whole rows, smallest_segment_bytes at least (receivers refuse fewer), one message at most.
template <class T, int Dims>
transfer_head plan_transfer(const std::array<std::uint64_t, 3>& extents, std::size_t segment_bytes,
                            bool checksum, bool plain) {
  transfer_head head;
  head.type = element_code_of<T>();
  head.dims = Dims;
  head.checksummed = checksum;
  head.plain = plain;
  head.extents = extents;
  const std::uint64_t row_bytes = std::max<std::uint64_t>(head.row_bytes(), 1);
  const std::uint64_t fitting = std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(std::max<std::uint64_t>(segment_bytes, smallest_segment_bytes),
                                 largest_message) /
             row_bytes);
  head.segment_rows = std::max<std::uint64_t>(
      1, std::min(std::max(fitting, head.fewest_segment_rows()), extents[0]));
  if (head.segments() > 0 && row_bytes > largest_message)
    throw std::invalid_argument("ndzip::mpi: a row of the slowest dimension of " + head.describe() +
                                " holds " + std::to_string(row_bytes) +
                                " bytes, more than one message carries (" +
                                std::to_string(largest_message) + ")");
  return head;
}

// The segment size of a View of `bytes` in device memory handed to the link as it is (a
// GPU-aware MPI, NCCL): a quarter of the View, 16 to 64 MiB. On two H200s over NVLink, segments
// of 16 MiB left 256 MiB to 1 GiB messages at 0.8-0.95x the raw transfer in ping-pong, 64 MiB
// ones at 1.0-1.3x, while 64 MiB messages did best in segments of 16
// (docs/PERFORMANCE-HISTORY.md).
inline std::size_t device_segment_bytes(std::uint64_t bytes) {
  constexpr std::uint64_t mib = std::uint64_t{1} << 20;
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(bytes / 4, 16 * mib, 64 * mib));
}

}  // namespace ndzip::mpi::detail
