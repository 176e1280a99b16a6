// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The code tables built and read where the blocks are, so that neither direction waits for the
// host: build_codes turns the byte counts into each table's code, encoder entries and serialised
// form (a team per table); read_codes checks a stream's serialised tables and fills the decoder
// entries (a team per table), noting a damaged one in the stream's header failure.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include "core/high_ratio/huffman.hpp"
#include "core/high_ratio/stream_kernels.hpp"

namespace ndzip::core::high_ratio {

// A team per table: a thread per symbol's share on a device, one thread on the host.
template <class ExecSpace>
inline constexpr int code_team_size =
    Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible ? 1 : 128;

// A team per table (of every grid), each with `Scratch` in team scratch.
template <class ExecSpace, class Scratch>
Kokkos::TeamPolicy<ExecSpace> table_policy(const ExecSpace& exec, int tables) {
  static_assert(code_team_size<ExecSpace> <= max_parts && alphabet % code_team_size<ExecSpace> == 0,
                "a team's threads take equal slices of the symbols (huffman.hpp, length_census)");
  return Kokkos::TeamPolicy<ExecSpace>(exec, tables, code_team_size<ExecSpace>)
      .set_scratch_size(0, Kokkos::PerTeam(sizeof(Scratch)));
}

template <class ExecSpace>
struct build_codes {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  struct scratch {
    code_workspace ws;
    code_lengths code;
    length_census census;
    std::uint16_t codes[alphabet];
  };
  // Per grid and table (league rank t), from grid 0's first table on.
  std::uint64_t* counts;   // alphabet each, zero between calls
  std::uint32_t* encoder;  // alphabet each
  std::byte* serialized;   // serialized_code_bytes each
  std::uint64_t* serialized_sizes;

  static policy make_policy(const ExecSpace& exec, int tables) {
    return table_policy<ExecSpace, scratch>(exec, tables);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename policy::member_type& member) const {
    const int t = member.league_rank();
    const int part = member.team_rank(), parts = member.team_size();
    const bool first = part == 0;
    auto& s = *static_cast<scratch*>(member.team_scratch(0).get_shmem(sizeof(scratch)));
    // The counts are taken: left zero for the next call (no fill of its own to queue).
    for (int k = part; k < alphabet; k += parts) {
      s.ws.counts[k] = counts[static_cast<std::size_t>(t) * alphabet + k];
      counts[static_cast<std::size_t>(t) * alphabet + k] = 0;
    }
    for (int k = part; k < alphabet; k += parts) s.code.length[k] = 0;
    if (first) s.ws.used = 0;
    member.team_barrier();
    if (parts == 1)
      sort_symbols(s.ws);
    else
      rank_symbols(s.ws, part, parts);
    member.team_barrier();
    // Optimal lengths, limited to max_code_length where one exceeds it.
    if (first) {
      merge_symbols(s.ws, s.code);
      limit_lengths(s.ws, s.code);
      s.code.longest = static_cast<std::uint8_t>(s.ws.longest);
      serialized_sizes[t] = serialized_bytes(s.code);
    }
    member.team_barrier();
    count_lengths(s.code, s.census, part, parts);
    member.team_barrier();
    sum_lengths(s.census, part, parts);
    member.team_barrier();
    canonical_codes(s.code, s.census, s.codes, nullptr, part, parts);
    member.team_barrier();
    encoder_entries(s.code, s.codes, encoder + static_cast<std::size_t>(t) * alphabet, part, parts);
    serialize(s.code, serialized + static_cast<std::size_t>(t) * serialized_code_bytes, part,
              parts);
  }
};

// The code tables of every grid's stream, behind its header, checked, and their decoder entries
// (a team per grid and table); a refused table (or the bytes after the tables) becomes the
// stream's header failure. Runs after read_header, which found the coding; does nothing for a
// stored stream or a damaged header.
template <class T, int Dims, class ExecSpace>
struct read_codes {
  using policy = Kokkos::TeamPolicy<ExecSpace>;
  struct scratch {
    code_lengths code;
    length_census census;
    std::uint8_t by_code[alphabet];
    std::uint64_t at;  // where the table starts in the stream
    int longest;       // its stated longest length; -1: nothing to read (or refused already)
  };
  pipeline<T, Dims> p;
  int tables;
  std::uint16_t* decoder;  // per grid and table, decoder_table_size each

  static policy make_policy(const ExecSpace& exec, std::size_t grids, int tables) {
    return table_policy<ExecSpace, scratch>(exec, static_cast<int>(grids) * tables);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const typename policy::member_type& member) const {
    const std::size_t g = static_cast<std::size_t>(member.league_rank()) / tables;
    const int t = member.league_rank() % tables;
    const int part = member.team_rank(), parts = member.team_size();
    auto& s = *static_cast<scratch*>(member.team_scratch(0).get_shmem(sizeof(scratch)));
    std::uint16_t* entries =
        decoder + static_cast<std::size_t>(member.league_rank()) * decoder_table_size;
    pipeline_state* const state = &p.states[g];
    const std::byte* const stream = p.items[g].stream;
    const std::uint64_t size = p.items[g].stream_bytes;
    clear_decoder_entries(entries, part, parts);
    if (part == 0) {
      s.longest = -1;
      // Every table is checked unless the header before them failed (a truncated stream
      // reports its first refused table rather than its length).
      const bool header_read =
          state->header_failure == no_failure ||
          state->header_failure >= header_key(header_failure::code_table, 0, code_failure::none);
      if (header_read && state->coding == stream_coding::coded) {
        // Where table t starts: behind the tables before it, whose sizes their first bytes give.
        std::uint64_t at = high_ratio_header_bytes;
        bool found = true;
        for (int k = 0; k < t && found; ++k) {
          const std::size_t bytes = code_bytes(stream + at, size - at);
          found = bytes != 0 && bytes <= size - at;
          at += bytes;
        }
        code_failure why = code_failure::truncated;
        const int longest = found ? read_longest(stream + at, size - at, why) : -1;
        if (longest < 0)
          refuse(state, t, why);
        else
          s.at = at;
        s.longest = longest;
      }
    }
    member.team_barrier();
    const int longest = s.longest;
    if (longest < 0) return;  // the whole team
    unpack_lengths(stream + s.at, longest, s.code, part, parts);
    member.team_barrier();
    count_lengths(s.code, s.census, part, parts);
    member.team_barrier();
    sum_lengths(s.census, part, parts);
    member.team_barrier();
    const code_failure why = check_lengths(s.census, longest);
    if (why != code_failure::none) {
      if (part == 0) refuse(state, t, why);
      return;
    }
    if (part == 0 && t + 1 == tables) {
      // The last team checks what follows the tables: zero padding to a multiple of 8.
      const std::uint64_t at = s.at + (longest == 0 ? 1 : serialized_code_bytes);
      const std::uint64_t padded = (at + 7) / 8 * 8;
      for (std::uint64_t k = at; k < padded; ++k)
        if (k >= size || stream[k] != std::byte{0}) {
          Kokkos::atomic_fetch_min(&state->header_failure,
                                   header_key(header_failure::padding, 0, code_failure::none));
          break;
        }
    }
    if (longest == 0) return;  // an unused code: no entries
    canonical_codes(s.code, s.census, nullptr, s.by_code, part, parts);
    member.team_barrier();
    decoder_entries(s.census, longest, s.by_code, entries, part, parts);
  }

 private:
  KOKKOS_INLINE_FUNCTION static void refuse(pipeline_state* state, int t, code_failure why) {
    Kokkos::atomic_fetch_min(&state->header_failure,
                             header_key(header_failure::code_table, t, why));
  }
};

}  // namespace ndzip::core::high_ratio
