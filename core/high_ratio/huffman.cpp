// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "core/high_ratio/huffman.hpp"

#include <algorithm>
#include <queue>
#include <vector>

namespace ndzip::core::high_ratio {

namespace {

// Huffman code lengths of the used symbols; ties are broken by node number (symbols first, in
// order, then merged nodes in the order they were made), so the result depends on the counts
// alone.
int huffman_lengths(const std::array<std::uint64_t, alphabet>& counts,
                    std::array<std::uint8_t, alphabet>& length) {
  struct node {
    std::uint64_t weight;
    int id;
    bool operator>(const node& o) const {
      return weight != o.weight ? weight > o.weight : id > o.id;
    }
  };
  std::priority_queue<node, std::vector<node>, std::greater<node>> queue;
  std::vector<int> parent(2 * alphabet, -1);
  int next = alphabet;
  for (int s = 0; s < alphabet; ++s)
    if (counts[s] > 0) queue.push({counts[s], s});
  length.fill(0);
  if (queue.size() == 1) {
    length[queue.top().id] = 1;
    return 1;
  }
  while (queue.size() > 1) {
    const node a = queue.top();
    queue.pop();
    const node b = queue.top();
    queue.pop();
    parent[a.id] = parent[b.id] = next;
    queue.push({a.weight + b.weight, next++});
  }
  int longest = 0;
  for (int s = 0; s < alphabet; ++s) {
    if (counts[s] == 0) continue;
    int depth = 0;
    for (int n = s; parent[n] >= 0; n = parent[n]) ++depth;
    length[s] = static_cast<std::uint8_t>(depth);
    longest = std::max(longest, depth);
  }
  return longest;
}

// Canonical codes (not reversed) of a code.
std::array<std::uint16_t, alphabet> canonical_codes(const code_lengths& code) {
  std::array<int, max_code_length + 2> count{};
  for (int s = 0; s < alphabet; ++s) ++count[code.length[s]];
  count[0] = 0;
  std::array<int, max_code_length + 2> next{};
  int value = 0;
  for (int len = 1; len <= max_code_length; ++len) {
    value = (value + count[len - 1]) << 1;
    next[len] = value;
  }
  std::array<std::uint16_t, alphabet> codes{};
  for (int s = 0; s < alphabet; ++s)
    if (code.length[s] > 0) codes[s] = static_cast<std::uint16_t>(next[code.length[s]]++);
  return codes;
}

std::uint32_t reversed(std::uint32_t value, int bits) {
  std::uint32_t r = 0;
  for (int i = 0; i < bits; ++i) r |= ((value >> i) & 1u) << (bits - 1 - i);
  return r;
}

}  // namespace

code_lengths build_code(const std::uint64_t* counts) {
  std::array<std::uint64_t, alphabet> c{};
  bool used = false;
  for (int s = 0; s < alphabet; ++s) {
    c[s] = counts[s];
    used = used || c[s] > 0;
  }
  code_lengths code;
  if (!used) return code;
  for (;;) {
    const int longest = huffman_lengths(c, code.length);
    if (longest <= max_code_length) {
      code.longest = static_cast<std::uint8_t>(longest);
      return code;
    }
    for (auto& n : c)
      if (n > 0) n = (n + 1) / 2;
  }
}

void encoder_entries(const code_lengths& code, std::uint32_t* entries) {
  const auto codes = canonical_codes(code);
  for (int s = 0; s < alphabet; ++s) {
    const int len = code.length[s];
    entries[s] = len == 0 ? 0 : reversed(codes[s], len) | static_cast<std::uint32_t>(len) << 16;
  }
}

void decoder_entries(const code_lengths& code, std::uint16_t* entries) {
  std::fill(entries, entries + decoder_table_size, std::uint16_t{0});
  if (code.longest == 0) return;
  const auto codes = canonical_codes(code);
  for (int s = 0; s < alphabet; ++s) {
    const int len = code.length[s];
    if (len == 0) continue;
    for (std::uint32_t i = reversed(codes[s], len); i < decoder_table_size; i += 1u << len)
      entries[i] = static_cast<std::uint16_t>(s | len << 8);
  }
}

std::size_t serialized_bytes(const code_lengths& code) {
  return code.longest == 0 ? 1 : 1 + alphabet / 2;
}

void serialize(const code_lengths& code, std::byte* out) {
  out[0] = static_cast<std::byte>(code.longest);
  if (code.longest == 0) return;
  for (int k = 0; k < alphabet / 2; ++k)
    out[1 + k] = static_cast<std::byte>(code.length[2 * k] | code.length[2 * k + 1] << 4);
}

std::size_t parse(const std::byte* in, std::size_t available, code_lengths& code,
                  const char*& error) {
  code = {};
  if (available < 1) {
    error = "truncated code table";
    return 0;
  }
  const int longest = static_cast<int>(in[0]);
  if (longest > max_code_length) {
    error = "code table with codes longer than 12 bits";
    return 0;
  }
  if (longest == 0) return 1;
  if (available < 1 + alphabet / 2) {
    error = "truncated code table";
    return 0;
  }
  int seen_longest = 0;
  std::uint64_t kraft = 0;  // in units of 2^-max_code_length
  for (int k = 0; k < alphabet / 2; ++k) {
    const auto b = static_cast<unsigned>(in[1 + k]);
    code.length[2 * k] = static_cast<std::uint8_t>(b & 15u);
    code.length[2 * k + 1] = static_cast<std::uint8_t>(b >> 4);
  }
  for (int s = 0; s < alphabet; ++s) {
    const int len = code.length[s];
    if (len == 0) continue;
    if (len > longest) {
      error = "code table with a code longer than its stated longest";
      return 0;
    }
    seen_longest = std::max(seen_longest, len);
    kraft += std::uint64_t{1} << (max_code_length - len);
  }
  if (seen_longest != longest) {
    error = "code table whose longest code is not the stated one";
    return 0;
  }
  if (kraft > (std::uint64_t{1} << max_code_length)) {
    error = "code table with more codes than its lengths allow (Kraft's inequality)";
    return 0;
  }
  code.longest = static_cast<std::uint8_t>(longest);
  return 1 + alphabet / 2;
}

}  // namespace ndzip::core::high_ratio
