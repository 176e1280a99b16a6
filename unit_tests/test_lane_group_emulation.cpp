// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The GPU lane-group operations (backends/lane_group_ops.hpp) one by one, over the host
// emulation of their intrinsics (backends/emulated): warps of 32 lanes (CUDA) and wavefronts of
// 64 lanes holding two 32-lane groups (HIP). Each must give what the host lane-ops (one lane
// holding the whole chunk) give, for random chunks of both word sizes; a failure here names the
// operation, where the whole-kernel tests (test_kernel_emulation.cpp) only see a wrong stream.

#include <cstdint>
#include <random>
#include <vector>

#include "backends/byte_permute.hpp"
#include "backends/emulated/lane_ops.hpp"
#include "backends/host/lane_ops.hpp"
#include "codec_support.hpp"

namespace {

// A chunk's W rows with columns of every kind: zero, full, and random with few set bits.
template <class Bits>
std::vector<Bits> random_chunk(std::mt19937_64& rng) {
  constexpr int w = sizeof(Bits) * 8;
  std::vector<Bits> rows(w);
  const Bits zero_columns = static_cast<Bits>(rng()), sparse = static_cast<Bits>(rng());
  for (auto& row : rows) {
    Bits r = static_cast<Bits>(rng());
    if (rng() % 2) r &= static_cast<Bits>(rng()) & sparse;
    row = r & ~zero_columns;
  }
  return rows;
}

template <int WaveLanes, class Bits>
void check_chunk_operations(std::mt19937_64& rng) {
  using ops = ndzip::backend::emulated_lane_ops<WaveLanes>;
  using host = ndzip::backend::host_lane_ops;
  constexpr int w = sizeof(Bits) * 8, lanes = ops::group_lanes, per_lane = w / lanes;
  constexpr int groups = ops::groups_per_call;
  static_assert(ops::held_lanes == WaveLanes);
  const typename ops::lanes held{};

  // One chunk per group of the wavefront, its rows spread over the group's lanes.
  std::vector<std::vector<Bits>> rows(groups), packed(groups, std::vector<Bits>(w, 0));
  for (auto& chunk : rows) chunk = random_chunk<Bits>(rng);
  Bits words[WaveLanes][per_lane];
  for (int s = 0; s < WaveLanes; ++s)
    for (int r = 0; r < per_lane; ++r) words[s][r] = rows[held.group(s)][held.lane(s) + r * lanes];

  ops::transpose(held, words);
  Bits heads[WaveLanes];
  ops::nonzero_columns(held, words, heads);
  Bits* out[WaveLanes];
  const Bits* in[WaveLanes];
  for (int s = 0; s < WaveLanes; ++s) in[s] = out[s] = packed[held.group(s)].data();
  ops::compact(held, words, heads, out);
  Bits restored[WaveLanes][per_lane];
  ops::expand(held, heads, in, restored);
  ops::transpose(held, restored);

  for (int g = 0; g < groups; ++g) {
    INFO("group " << g << " of a " << WaveLanes << "-lane wavefront, W = " << w);
    Bits expected[1][w];
    for (int i = 0; i < w; ++i) expected[0][i] = rows[g][i];
    host::transpose(host::lanes{}, expected);
    Bits expected_head[1];
    host::nonzero_columns(host::lanes{}, expected, expected_head);
    std::vector<Bits> expected_packed(w, 0);
    Bits* const expected_out[1] = {expected_packed.data()};
    host::compact(host::lanes{}, expected, expected_head, expected_out);
    CHECK(ndzip_test::mismatch(packed[g], expected_packed) == "");
    for (int s = g * lanes; s < (g + 1) * lanes; ++s) {
      CAPTURE(s);
      CHECK(heads[s] == expected_head[0]);  // every lane of the group holds the head
      for (int r = 0; r < per_lane; ++r) {
        CHECK(words[s][r] == expected[0][held.lane(s) + r * lanes]);
        CHECK(restored[s][r] == rows[g][held.lane(s) + r * lanes]);
      }
    }
  }
}

template <int WaveLanes, int Segment>
void check_scan(std::mt19937_64& rng) {
  using ops = ndzip::backend::emulated_lane_ops<WaveLanes>;
  const typename ops::lanes held{};
  std::uint32_t in[WaveLanes], scanned[WaveLanes], last[WaveLanes];
  for (auto& v : in) v = static_cast<std::uint32_t>(rng());
  for (int s = 0; s < WaveLanes; ++s) scanned[s] = in[s];
  ops::template inclusive_scan<Segment>(held, scanned);
  ops::broadcast(held, scanned, ops::group_lanes - 1, last);
  for (int l = 0; l < WaveLanes; ++l) {
    INFO("lane " << l << " of a " << WaveLanes << "-lane wavefront, segment " << Segment);
    std::uint32_t sum = 0;
    for (int k = l / Segment * Segment; k <= l; ++k) sum += in[k];
    CHECK(scanned[l] == sum);
    const int group_last = l / 32 * 32 + 31;
    CHECK(last[l] == scanned[group_last]);
  }
}

template <int WaveLanes>
void check_lane_group_operations() {
  std::mt19937_64 rng(WaveLanes);
  for (int round = 0; round < 8; ++round) {
    check_chunk_operations<WaveLanes, std::uint32_t>(rng);
    check_chunk_operations<WaveLanes, std::uint64_t>(rng);
  }
  check_scan<WaveLanes, 16>(rng);
  check_scan<WaveLanes, 32>(rng);
}

}  // namespace

// The warp's emulated transposition takes its byte stages from this function, the CUDA warp's
// from __byte_perm: they must agree, or the GPU's stream would differ from the host's.
TEST_CASE("portable_byte_permute picks bytes of y:x as CUDA's __byte_perm does") {
  using ndzip::backend::portable_byte_permute;
  const std::uint32_t x = 0x33221100u, y = 0x77665544u;
  CHECK(portable_byte_permute(x, y, 0x3210u) == x);
  CHECK(portable_byte_permute(x, y, 0x7654u) == y);
  CHECK(portable_byte_permute(x, y, 0x5410u) == 0x55441100u);
  CHECK(portable_byte_permute(x, y, 0x3276u) == 0x33227766u);
  CHECK(portable_byte_permute(x, y, 0x6240u) == 0x66224400u);
  CHECK(portable_byte_permute(x, y, 0x3715u) == 0x33771155u);
  CHECK(portable_byte_permute(x, y, 0x4444u) == 0x44444444u);
}

TEST_CASE("emulation: 32-lane groups in 32-lane warps (CUDA) match the host lane-ops") {
  check_lane_group_operations<32>();
}

TEST_CASE("emulation: 32-lane groups in 64-lane wavefronts (HIP) match the host lane-ops") {
  check_lane_group_operations<64>();
}
