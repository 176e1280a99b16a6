// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The code tables of the high-ratio stream (docs/FORMAT.md, "The high-ratio stream"): canonical
// Huffman codes over byte values, at most max_code_length bits long, built from symbol counts
// (deterministically, so that every backend writes the same stream), written as one byte plus
// 128 bytes of 4-bit lengths, and read back with every property checked.
//
// Everything here runs in kernels (core/high_ratio/code_kernels.hpp: a team per table), on the
// host and on devices alike. Steps that a team shares take `part` and `parts`: the caller does
// its share (the items part, part + parts, ...), parts = 1 doing all of it.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

namespace ndzip::core::high_ratio {

inline constexpr int max_code_length = 12;
inline constexpr int alphabet = 256;
inline constexpr std::size_t serialized_code_bytes = 1 + alphabet / 2;

// A code: each symbol's length in bits (0: no code) and the longest (0: the code is unused).
struct code_lengths {
  std::uint8_t longest;
  std::uint8_t length[alphabet];
};

// What building a code needs besides its lengths (team scratch in the kernel).
struct code_workspace {
  std::uint64_t counts[alphabet];       // the counts, halved until the code fits
  std::uint64_t order[alphabet];        // the used symbols' (count << 8 | symbol), ascending
  std::uint64_t weight[alphabet];       // merged nodes' weights, in the order they were made
  std::uint16_t leaf_parent[alphabet];  // the merged node above order[k]
  std::uint16_t node_parent[alphabet];  // the merged node above merged node k
  std::uint8_t node_depth[alphabet];
  std::uint16_t at_length[alphabet];  // how many symbols have each length
  int used;                           // symbols with a count
  int longest;
};

// The key that orders symbols for merging: by count, then by value (counts stay below 2^56: they
// count bytes of one stream).
KOKKOS_INLINE_FUNCTION std::uint64_t symbol_key(std::uint64_t count, int symbol) {
  return count << 8 | static_cast<std::uint64_t>(symbol);
}

// Step 1 (shared): every used symbol's key placed at its rank among the used symbols' keys,
// and ws.used (which must be 0 before) set. A rank is a count of smaller keys, so parts may
// place theirs in any order; the part with the largest key sets ws.used.
KOKKOS_INLINE_FUNCTION void rank_symbols(code_workspace& ws, int part, int parts) {
  for (int s = part; s < alphabet; s += parts) {
    if (ws.counts[s] == 0) continue;
    const std::uint64_t key = symbol_key(ws.counts[s], s);
    int rank = 0;
    bool largest = true;
    for (int q = 0; q < alphabet; ++q) {
      if (ws.counts[q] == 0) continue;
      const std::uint64_t other = symbol_key(ws.counts[q], q);
      rank += other < key;
      largest = largest && other <= key;
    }
    ws.order[rank] = key;
    if (largest) ws.used = rank + 1;
  }
}

// Step 1 on one thread: the used symbols' keys sorted by a heap sort (O(n log n), where the
// ranks cost O(n^2) on one thread); the same order and ws.used as rank_symbols, keys being
// distinct.
KOKKOS_INLINE_FUNCTION void sort_symbols(code_workspace& ws) {
  int n = 0;
  for (int s = 0; s < alphabet; ++s)
    if (ws.counts[s] != 0) ws.order[n++] = symbol_key(ws.counts[s], s);
  ws.used = n;
  std::uint64_t* a = ws.order;
  const auto sift = [a](int root, int end) {
    for (;;) {
      int child = 2 * root + 1;
      if (child >= end) return;
      if (child + 1 < end && a[child + 1] > a[child]) ++child;
      if (a[root] >= a[child]) return;
      const std::uint64_t t = a[root];
      a[root] = a[child];
      a[child] = t;
      root = child;
    }
  };
  for (int k = n / 2 - 1; k >= 0; --k) sift(k, n);
  for (int end = n - 1; end > 0; --end) {
    const std::uint64_t t = a[0];
    a[0] = a[end];
    a[end] = t;
    sift(0, end);
  }
}

// Step 2 (one thread): Huffman code lengths of the ordered symbols into code.length (zeroed
// before) and ws.longest. Two queues, the symbols and the merged nodes, each ascending; the
// smaller front is merged first, a symbol before a node of the same weight: the result depends
// on the counts alone. A single used symbol gets one bit.
KOKKOS_INLINE_FUNCTION void merge_symbols(code_workspace& ws, code_lengths& code) {
  const int n = ws.used < alphabet ? ws.used : alphabet;
  ws.longest = 0;
  if (n == 0) return;
  if (n == 1) {
    code.length[ws.order[0] & 0xffu] = 1;
    ws.longest = 1;
    return;
  }
  int leaf = 0, node = 0;
  for (int made = 0; made < n - 1; ++made) {
    std::uint64_t sum = 0;
    for (int pick = 0; pick < 2; ++pick) {
      if (leaf < n && (node >= made || (ws.order[leaf] >> 8) <= ws.weight[node])) {
        sum += ws.order[leaf] >> 8;
        ws.leaf_parent[leaf++] = static_cast<std::uint16_t>(made);
      } else {
        sum += ws.weight[node];
        ws.node_parent[node++] = static_cast<std::uint16_t>(made);
      }
    }
    ws.weight[made] = sum;
  }
  // The last node made is the root; every other node lies one below its parent.
  for (int k = n - 2; k >= 0; --k)
    ws.node_depth[k] =
        k == n - 2 ? 0 : static_cast<std::uint8_t>(ws.node_depth[ws.node_parent[k]] + 1);
  for (int k = 0; k < n; ++k) {
    const int depth = ws.node_depth[ws.leaf_parent[k]] + 1;
    code.length[ws.order[k] & 0xffu] = static_cast<std::uint8_t>(depth > 255 ? 255 : depth);
    ws.longest = depth > ws.longest ? depth : ws.longest;
  }
}

// Step 3 (one thread), where a length exceeds max_code_length: the lengths limited to it. The
// number of symbols of each length is adjusted as JPEG's encoder does (ITU T.81, K.3): two
// symbols of the deepest level give way to one there and two one level below the deepest level
// that still has room, which keeps the code complete; then the lengths go to the symbols again
// in their order, the longest to the least frequent.
KOKKOS_INLINE_FUNCTION void limit_lengths(code_workspace& ws, code_lengths& code) {
  if (ws.longest <= max_code_length) return;
  const int n = ws.used < alphabet ? ws.used : alphabet;
  for (int len = 0; len <= ws.longest; ++len) ws.at_length[len] = 0;
  for (int k = 0; k < n; ++k) ++ws.at_length[code.length[ws.order[k] & 0xffu]];
  for (int len = ws.longest; len > max_code_length; --len) {
    while (ws.at_length[len] > 0) {
      int room = len - 2;
      while (room > 1 && ws.at_length[room] == 0) --room;
      // While the room is level len - 2, the next search finds it again as long as it has
      // symbols: those turns at once (a turn at a time took a GPU thread 0.1 ms per table on
      // deep codes). Below it, the next search finds room + 1: one turn.
      int turns = 1;
      if (room == len - 2) {
        turns =
            ws.at_length[len] / 2 < ws.at_length[room] ? ws.at_length[len] / 2 : ws.at_length[room];
        if (turns < 1) turns = 1;
      }
      ws.at_length[len] -= static_cast<std::uint16_t>(2 * turns);
      ws.at_length[len - 1] += static_cast<std::uint16_t>(turns);
      ws.at_length[room + 1] += static_cast<std::uint16_t>(2 * turns);
      ws.at_length[room] -= static_cast<std::uint16_t>(turns);
    }
  }
  int len = max_code_length;
  for (int k = 0; k < n; ++k) {
    while (ws.at_length[len] == 0) --len;
    --ws.at_length[len];
    code.length[ws.order[k] & 0xffu] = static_cast<std::uint8_t>(len);
  }
  ws.longest = max_code_length;
}

// A code's lengths counted by a team (code_kernels.hpp): the symbols fall into `parts` slices of
// alphabet / parts, and each step below is called by every part, with a barrier between steps
// (parts = 1: one thread does each in turn). From the census come a read code's checks and the
// canonical codes, which one thread took 256 steps at a time for (0.1 ms per table on a GPU).
inline constexpr int max_parts = 128;
inline constexpr int length_values = 16;  // a serialised length has 4 bits
struct length_census {
  // Step 1: each slice's symbols per length; step 2: those of the slices before it.
  std::uint16_t slice[max_parts][length_values];
  std::uint16_t total[length_values];  // step 2: all symbols per length
};

// Step 1.
KOKKOS_INLINE_FUNCTION void count_lengths(const code_lengths& code, length_census& census, int part,
                                          int parts) {
  const int per = alphabet / parts;
  std::uint16_t* count = census.slice[part];
  for (int len = 0; len < length_values; ++len) count[len] = 0;
  for (int s = part * per; s < (part + 1) * per; ++s) ++count[code.length[s]];
}

// Step 2.
KOKKOS_INLINE_FUNCTION void sum_lengths(length_census& census, int part, int parts) {
  for (int len = part; len < length_values; len += parts) {
    std::uint16_t before = 0;
    for (int q = 0; q < parts; ++q) {
      const std::uint16_t n = census.slice[q][len];
      census.slice[q][len] = before;
      before = static_cast<std::uint16_t>(before + n);
    }
    census.total[len] = before;
  }
}

// Step 3: the canonical codes (not reversed) of a code whose lengths are at most
// max_code_length, into codes[]: each code is the previous one plus one, shifted left where the
// length grows, in (length, symbol) order; if by_code is not null, the used symbols in that
// order into it (decoder_entries). Either may be null.
KOKKOS_INLINE_FUNCTION void canonical_codes(const code_lengths& code, const length_census& census,
                                            std::uint16_t* codes /* [alphabet] */,
                                            std::uint8_t* by_code /* [alphabet] */, int part,
                                            int parts) {
  int next[max_code_length + 1] = {};
  int place[max_code_length + 1] = {};  // where the slice's first symbol of each length goes
  int first = 0, before = 0;
  for (int len = 1; len <= max_code_length; ++len) {
    first = (first + (len == 1 ? 0 : census.total[len - 1])) << 1;
    next[len] = first + census.slice[part][len];
    place[len] = before + census.slice[part][len];
    before += census.total[len];
  }
  const int per = alphabet / parts;
  for (int s = part * per; s < (part + 1) * per; ++s) {
    const int len = code.length[s];
    if (codes) codes[s] = len > 0 ? static_cast<std::uint16_t>(next[len]++) : 0;
    if (by_code && len > 0) by_code[place[len]++] = static_cast<std::uint8_t>(s);
  }
}

KOKKOS_INLINE_FUNCTION std::uint32_t reversed(std::uint32_t value, int bits) {
  std::uint32_t r = 0;
  for (int i = 0; i < bits; ++i) r |= ((value >> i) & 1u) << (bits - 1 - i);
  return r;
}

// The encoder entries of a code (shared): symbol s -> its code bit-reversed (the stream fills
// bytes from their least significant bit, and a code goes most significant bit first) in the
// low 16 bits and its length above them (0 for a symbol without a code).
KOKKOS_INLINE_FUNCTION void encoder_entries(const code_lengths& code, const std::uint16_t* codes,
                                            std::uint32_t* entries, int part, int parts) {
  for (int s = part; s < alphabet; s += parts) {
    const int len = code.length[s];
    entries[s] = len == 0 ? 0 : reversed(codes[s], len) | static_cast<std::uint32_t>(len) << 16;
  }
}

// The decoding table of a code: decoder_table_size entries indexed by the next max_code_length
// bits of the stream (first bit least significant; a code's entry repeats for every value of
// the bits behind it, so that every table is read alike); each is the symbol in the low byte
// and its length above it, or 0 where no code starts with those bits (everywhere for an unused
// code). Shared: every part fills decoder_table_size / parts entries, those of consecutive
// codes (entry i is that of the code whose bits, first bit most significant, are i reversed),
// from the census and the symbols in code order (canonical_codes' by_code). Giving each part
// its symbols instead left one thread 2048 stores for a 1-bit code.
inline constexpr std::size_t decoder_table_size = std::size_t{1} << max_code_length;
KOKKOS_INLINE_FUNCTION void clear_decoder_entries(std::uint16_t* entries, int part, int parts) {
  for (std::size_t i = part; i < decoder_table_size; i += parts) entries[i] = 0;
}
KOKKOS_INLINE_FUNCTION void decoder_entries(const length_census& census, int longest,
                                            const std::uint8_t* by_code, std::uint16_t* entries,
                                            int part, int parts) {
  const auto per =
      static_cast<std::uint32_t>(decoder_table_size) / static_cast<std::uint32_t>(parts);
  // Codes of length `len` start at `first` (its first code) and cover the values below `limit`
  // of the max_code_length bits; `done` symbols have shorter codes.
  int len = 1;
  std::uint32_t first = 0, done = 0;
  const auto limit = [&]() { return (first + census.total[len]) << (max_code_length - len); };
  for (std::uint32_t bits = part * per; bits < (part + 1) * per; ++bits) {
    while (len <= longest && bits >= limit()) {
      done += census.total[len];
      first = (first + census.total[len]) << 1;
      ++len;
    }
    std::uint16_t entry = 0;
    if (len <= longest)
      entry = static_cast<std::uint16_t>(by_code[done + (bits >> (max_code_length - len)) - first] |
                                         len << 8);
    entries[reversed(bits, max_code_length)] = entry;
  }
}

// Serialised form (shared): the longest length, then (if the code is used) the lengths two to
// a byte. serialized_bytes gives its size: 1 byte for an unused code, 1 + 128 otherwise.
KOKKOS_INLINE_FUNCTION std::size_t serialized_bytes(const code_lengths& code) {
  return code.longest == 0 ? 1 : serialized_code_bytes;
}
KOKKOS_INLINE_FUNCTION void serialize(const code_lengths& code, std::byte* out, int part,
                                      int parts) {
  if (part == 0) out[0] = static_cast<std::byte>(code.longest);
  if (code.longest == 0) return;
  for (int k = part; k < alphabet / 2; k += parts)
    out[1 + k] = static_cast<std::byte>(code.length[2 * k] | code.length[2 * k + 1] << 4);
}

// Why a serialised code was refused.
enum class code_failure : std::uint8_t {
  none = 0,
  truncated,         // fewer bytes than the table needs
  too_long,          // a longest length above max_code_length
  above_longest,     // a length above the stated longest
  longest_not_seen,  // no length equals the stated longest (or none is non-zero)
  kraft              // more codes than the lengths allow
};
inline const char* describe(code_failure why) {
  switch (why) {
    case code_failure::none:
      break;
    case code_failure::truncated:
      return "truncated code table";
    case code_failure::too_long:
      return "code table with codes longer than 12 bits";
    case code_failure::above_longest:
      return "code table with a code longer than its stated longest";
    case code_failure::longest_not_seen:
      return "code table whose longest code is not the stated one";
    case code_failure::kraft:
      return "code table with more codes than its lengths allow (Kraft's inequality)";
  }
  return "";
}

// The bytes a serialised code takes, from its first byte: 0 if `available` is 0.
KOKKOS_INLINE_FUNCTION std::size_t code_bytes(const std::byte* in, std::size_t available) {
  return available == 0 ? 0 : static_cast<unsigned>(in[0]) == 0 ? 1 : serialized_code_bytes;
}

// Reading a code (a team: a thread's part of each step, as above): read_longest checks its first
// byte and that the table is all there, unpack_lengths takes the lengths, and after
// count_lengths and sum_lengths, check_lengths checks that the longest length is the stated
// one, that some symbol has a code where the code is used, and Kraft's inequality.

// The stated longest length (0: the code is unused, and all of it is that byte), or -1 and the
// reason in `why`.
KOKKOS_INLINE_FUNCTION int read_longest(const std::byte* in, std::size_t available,
                                        code_failure& why) {
  why = code_failure::none;
  if (available < 1) {
    why = code_failure::truncated;
    return -1;
  }
  const int longest = static_cast<int>(in[0]);
  if (longest > max_code_length) {
    why = code_failure::too_long;
    return -1;
  }
  if (longest > 0 && available < serialized_code_bytes) {
    why = code_failure::truncated;
    return -1;
  }
  return longest;
}

// The lengths of a code whose longest is `longest` (all zero for an unused code).
KOKKOS_INLINE_FUNCTION void unpack_lengths(const std::byte* in, int longest, code_lengths& code,
                                           int part, int parts) {
  for (int k = part; k < alphabet / 2; k += parts) {
    const auto b = longest == 0 ? 0u : static_cast<unsigned>(in[1 + k]);
    code.length[2 * k] = static_cast<std::uint8_t>(b & 15u);
    code.length[2 * k + 1] = static_cast<std::uint8_t>(b >> 4);
  }
}

// After sum_lengths: why lengths counted in `census` cannot be a code whose longest length is
// `longest` (none if they can).
KOKKOS_INLINE_FUNCTION code_failure check_lengths(const length_census& census, int longest) {
  int seen = 0;
  for (int len = 1; len < length_values; ++len)
    if (census.total[len] != 0) seen = len;
  if (seen > longest) return code_failure::above_longest;
  if (seen != longest) return code_failure::longest_not_seen;
  std::uint64_t kraft = 0;  // in units of 2^-max_code_length
  for (int len = 1; len <= longest; ++len)
    kraft += static_cast<std::uint64_t>(census.total[len]) << (max_code_length - len);
  if (kraft > (std::uint64_t{1} << max_code_length)) return code_failure::kraft;
  return code_failure::none;
}

}  // namespace ndzip::core::high_ratio
