// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// What every link's collectives agree on (docs/FORMAT.md "Collectives"): the operations, the
// heads of a round, the unit bytes are counted in, and how a round's payloads lie in its
// buffers. Not part of the API.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ndzip/mpi/detail/core/wire_format.hpp"

namespace ndzip::mpi::detail {

enum class collective_kind { bcast, gather, scatter, allgather, alltoall };

constexpr const char* collective_name(collective_kind kind) {
  switch (kind) {
    case collective_kind::bcast:
      return "ndzip::mpi::bcast";
    case collective_kind::gather:
      return "ndzip::mpi::gather";
    case collective_kind::scatter:
      return "ndzip::mpi::scatter";
    case collective_kind::allgather:
      return "ndzip::mpi::allgather";
    default:
      return "ndzip::mpi::alltoall";
  }
}

// Whether the operation has a root (bcast, gather, scatter).
constexpr bool has_root(collective_kind kind) {
  return kind != collective_kind::allgather && kind != collective_kind::alltoall;
}

// The head bytes of one piece in round r: round 0 carries the transfer heads too.
constexpr std::size_t round_head_bytes(std::uint64_t r) {
  return r == 0 ? transfer_head_bytes + segment_head_bytes : segment_head_bytes;
}

// The agreement that opens every call: this many int64 per rank, all but the last reduced by
// MAX, the last summed modulo 2^64 (docs/FORMAT.md "Collectives").
inline constexpr int agreement_values = 7;

// Collectives count their bytes in units of this many: each payload starts at a multiple of it
// in a round's buffer, so that MPI's int counts and displacements reach 128 GiB.
inline constexpr std::size_t collective_unit = 64;

constexpr std::uint64_t round_up_to_unit(std::uint64_t bytes) {
  return (bytes + collective_unit - 1) / collective_unit * collective_unit;
}

// One round on one rank, in units: what it sends per head slot (a destination rank, or the
// one slot of an operation that sends one piece) and where each lies in its send region, what
// it receives per slot (a source rank, or the root's one) and where it goes in its inbox.
struct round_counts {
  std::vector<std::uint64_t> send_units, send_offsets;
  std::vector<std::uint64_t> recv_units, recv_offsets;
  std::uint64_t recv_total = 0;  // the units from the inbox's start to its last byte
};

// Memory of separate Views addressed as one buffer, as MPI's collectives address theirs: from
// the lowest of the pointers, each at a whole number of units from it.
struct unit_addressing {
  std::byte* base = nullptr;
  std::vector<std::uint64_t> offsets;  // in units, one per pointer (0 for a null one)
};

// The addressing of `at` (null pointers: nothing there), or nullopt where two lie a part of a
// unit apart.
inline std::optional<unit_addressing> address_together(const std::vector<std::byte*>& at) {
  unit_addressing a;
  for (std::byte* p : at)
    if (p && (!a.base || p < a.base)) a.base = p;
  a.offsets.assign(at.size(), 0);
  for (std::size_t i = 0; i < at.size(); ++i) {
    if (!at[i]) continue;
    // As integers: the pointers lie in different allocations.
    const std::uintptr_t distance = reinterpret_cast<std::uintptr_t>(at[i]) -
                                    reinterpret_cast<std::uintptr_t>(a.base);
    if (distance % collective_unit != 0) return std::nullopt;
    a.offsets[i] = distance / collective_unit;
  }
  return a;
}

}  // namespace ndzip::mpi::detail
