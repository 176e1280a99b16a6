// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host lane-ops' bit-plane transposition, compaction and expansion of a chunk, against plain
// references, in whichever implementation the active clone uses (vector block swap or GFNI:
// backends/host/gfni_transpose.hpp; scalar or AVX-512 compress/expand:
// backends/host/avx512_columns.hpp; the CTest entries host-isa-* run this under each cap). Heads
// of every shape: none or all columns, one, the low ones only (the copy fast path), and random
// gaps; neither direction may touch a word past the packed columns.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/host/lane_ops.hpp"
#include "codec_support.hpp"

namespace {

template <class Bits>
std::vector<Bits> heads_to_try(std::mt19937_64& rng) {
  constexpr int w = sizeof(Bits) * 8;
  std::vector<Bits> heads = {0, static_cast<Bits>(~Bits{0}), Bits{1},
                             static_cast<Bits>(Bits{1} << (w - 1))};
  for (int low = 1; low < w; low += 7) heads.push_back(static_cast<Bits>((Bits{1} << low) - 1));
  for (int i = 0; i < 64; ++i) {
    Bits head = static_cast<Bits>(rng());
    if (i % 2) head &= static_cast<Bits>(rng());  // sparser
    heads.push_back(head);
  }
  return heads;
}

template <class Bits>
void check_compact_and_expand() {
  using ops = ndzip::backend::host_lane_ops;
  constexpr int w = sizeof(Bits) * 8;
  constexpr Bits sentinel = static_cast<Bits>(0x5a5a5a5a5a5a5a5au);
  std::mt19937_64 rng(w);
  for (const Bits head : heads_to_try<Bits>(rng)) {
    CAPTURE(head);
    Bits columns[1][w];
    std::vector<Bits> expected;
    for (int i = 0; i < w; ++i) {
      const bool set = (head >> (w - 1 - i)) & 1;
      columns[0][i] = set ? static_cast<Bits>(rng() | 1) : Bits{0};
      if (set) expected.push_back(columns[0][i]);
    }
    const std::size_t count = expected.size();

    std::vector<Bits> packed(w + 1, sentinel);
    Bits* const out[1] = {packed.data()};
    const Bits held_head[1] = {head};
    ops::compact(ops::lanes{}, columns, held_head, out);
    CHECK(ndzip_test::mismatch(std::vector<Bits>(packed.begin(), packed.begin() + count),
                               expected) == "");
    for (std::size_t k = count; k < packed.size(); ++k) CHECK(packed[k] == sentinel);

    Bits restored[1][w];
    for (auto& word : restored[0]) word = sentinel;
    // The packed words alone, so that a read past them is one past the allocation (sanitizers).
    const std::vector<Bits> in_words(expected);
    const Bits* const in[1] = {in_words.data()};
    ops::expand(ops::lanes{}, held_head, in, restored);
    for (int i = 0; i < w; ++i) {
      CAPTURE(i);
      CHECK(restored[0][i] == columns[0][i]);
    }
  }
}

// Bit W-1-i of row j becomes bit W-1-j of row i, on every kind of matrix: one bit set (each
// place, so that every block of the GFNI path is checked to land where it belongs), all zeros,
// all ones, random and sparse; twice gives the matrix back.
template <class Bits>
void check_transpose() {
  using ops = ndzip::backend::host_lane_ops;
  constexpr int w = sizeof(Bits) * 8;
  std::mt19937_64 rng(w + 1);
  std::vector<std::vector<Bits>> matrices;
  for (int row = 0; row < w; ++row)
    for (int bit = 0; bit < w; bit += 3) {
      std::vector<Bits> m(w, 0);
      m[row] = static_cast<Bits>(Bits{1} << bit);
      matrices.push_back(m);
    }
  matrices.emplace_back(w, Bits{0});
  matrices.emplace_back(w, static_cast<Bits>(~Bits{0}));
  for (int i = 0; i < 32; ++i) {
    std::vector<Bits> m(w);
    for (auto& word : m) word = static_cast<Bits>(i % 2 ? rng() : rng() & rng() & rng());
    matrices.push_back(m);
  }
  for (const auto& m : matrices) {
    Bits words[1][w];
    std::vector<Bits> expected(w, 0);
    for (int j = 0; j < w; ++j) {
      words[0][j] = m[j];
      for (int i = 0; i < w; ++i)
        if ((m[j] >> (w - 1 - i)) & 1) expected[i] |= static_cast<Bits>(Bits{1} << (w - 1 - j));
    }
    ops::transpose(ops::lanes{}, words);
    CHECK(ndzip_test::mismatch(std::vector<Bits>(words[0], words[0] + w), expected) == "");
    ops::transpose(ops::lanes{}, words);
    CHECK(ndzip_test::mismatch(std::vector<Bits>(words[0], words[0] + w), m) == "");
  }
}

}  // namespace

TEST_CASE("host lane-ops: the transposition of every kind of chunk, in the active clone") {
  MESSAGE("host kernels: "
          << std::string(ndzip::backend::to_string(ndzip::backend::active_host_isa())));
  check_transpose<std::uint32_t>();
  check_transpose<std::uint64_t>();
}

TEST_CASE("host lane-ops: compaction and expansion of every head shape, in the active clone") {
  MESSAGE("host kernels: " << std::string(ndzip::backend::to_string(ndzip::backend::active_host_isa())));
  check_compact_and_expand<std::uint32_t>();
  check_compact_and_expand<std::uint64_t>();
}
