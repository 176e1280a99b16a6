// The GPU lane-group algorithm (backends/lane_group_ops.hpp), run on the host so that every CI
// run tests the logic that CUDA and HIP execute: each lane is a thread, and the emulated
// intrinsics exchange the lanes' values at a barrier, in lockstep as on a GPU. Two wavefront
// widths: 32 (CUDA: one group per warp) and 64 (HIP: two 32-lane groups per wavefront, ballots
// cut to the group's half, shuffles of width 32). The results must equal the host lane-ops'
// (one lane holding the whole chunk) for random chunks of both word sizes.
//
// This tests the lane-group operations one by one; running whole kernels with emulated lanes
// needs the core to express lane-group operations on group values (a later step).

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "backends/hip/lane_ops.hpp"
#include "backends/host/lane_ops.hpp"
#include "backends/lane_group_ops.hpp"
#include "codec_support.hpp"

namespace {

using ndzip::backend::shuffle_kind;

// The lanes of one wavefront as threads that meet at every intrinsic.
class wavefront {
 public:
  explicit wavefront(int lanes) : m_lanes(lanes), m_values(lanes) {}

  int lanes() const { return m_lanes; }

  // Publishes this lane's value; returns every lane's, once all have published.
  std::vector<std::uint64_t> exchange(int lane, std::uint64_t value) {
    m_values[lane] = value;
    arrive();
    std::vector<std::uint64_t> all = m_values;
    arrive();  // nobody overwrites a value before every lane has read it
    return all;
  }

 private:
  void arrive() {
    std::unique_lock<std::mutex> lock(m_mutex);
    const long generation = m_generation;
    if (++m_arrived == m_lanes) {
      m_arrived = 0;
      ++m_generation;
      m_all_arrived.notify_all();
    } else {
      m_all_arrived.wait(lock, [&] { return m_generation != generation; });
    }
  }

  int m_lanes;
  std::vector<std::uint64_t> m_values;
  std::mutex m_mutex;
  std::condition_variable m_all_arrived;
  int m_arrived = 0;
  long m_generation = 0;
};

// Which wavefront and lane the calling thread is.
thread_local wavefront* t_wave = nullptr;
thread_local int t_lane = 0;

// What CUDA's and HIP's intrinsics do for a 32-lane group in a wavefront of WaveLanes lanes.
template <int WaveLanes>
struct emulated_intrinsics {
  static constexpr int group_width = 32;

  template <class Bits>
  static Bits shuffle(Bits v, shuffle_kind kind, int argument) {
    const auto all = t_wave->exchange(t_lane, v);
    const int base = t_lane / group_width * group_width, in_group = t_lane % group_width;
    int source = t_lane;
    switch (kind) {
      case shuffle_kind::xor_lane:
        source = base + (in_group ^ argument);
        break;
      case shuffle_kind::up:  // out of range: a lane keeps its own value
        source = in_group >= argument ? t_lane - argument : t_lane;
        break;
      case shuffle_kind::from_lane:
        source = base + argument % group_width;
        break;
    }
    return static_cast<Bits>(all[source]);
  }

  // The wavefront's ballot, cut to the calling group's half and bit-reversed by the HIP
  // backend's own code (a 32-lane wavefront has only the one half).
  static std::uint32_t ballot_reversed(bool predicate) {
    const auto all = t_wave->exchange(t_lane, predicate);
    std::uint64_t wave = 0;
    for (int l = 0; l < WaveLanes; ++l) wave |= std::uint64_t{all[l] != 0} << l;
    return ndzip::backend::hip_intrinsics::group_ballot_reversed(wave, t_lane);
  }
};

// Runs body(lane) on every lane of a WaveLanes-lane wavefront, in lockstep at each intrinsic.
template <int WaveLanes, class Body>
void on_wavefront(Body body) {
  wavefront wave(WaveLanes);
  std::vector<std::thread> lanes;
  for (int l = 0; l < WaveLanes; ++l)
    lanes.emplace_back([&, l] {
      t_wave = &wave;
      t_lane = l;
      body(l);
    });
  for (auto& lane : lanes) lane.join();
}

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

// Per group of a wavefront: the chunk it transposes, and what its lanes produced.
template <class Bits>
struct group_result {
  std::vector<Bits> rows, columns, packed, restored;
  Bits head = 0;
  bool heads_agree = true;
};

template <int WaveLanes, class Bits>
void check_chunk_operations(std::mt19937_64& rng) {
  using ops = ndzip::backend::lane_group_ops<emulated_intrinsics<WaveLanes>>;
  using host = ndzip::backend::host_lane_ops;
  constexpr int w = sizeof(Bits) * 8, lanes = ops::vector_length, per_lane = w / lanes;
  constexpr int groups = WaveLanes / lanes;

  std::vector<group_result<Bits>> results(groups);
  for (auto& g : results) {
    g.rows = random_chunk<Bits>(rng);
    g.columns.assign(w, 0);
    g.packed.assign(w, 0);
    g.restored.assign(w, 0);
  }
  std::mutex head_mutex;
  on_wavefront<WaveLanes>([&](int wave_lane) {
    auto& g = results[wave_lane / lanes];
    const int lane = wave_lane % lanes;
    Bits words[per_lane];
    for (int r = 0; r < per_lane; ++r) words[r] = g.rows[lane + r * lanes];
    ops::transpose(lane, words);
    for (int r = 0; r < per_lane; ++r) g.columns[lane + r * lanes] = words[r];
    const Bits head = ops::nonzero_columns(lane, words);
    const Bits lane0_head = ops::broadcast(head, 0);  // collective: outside the lock
    {
      const std::lock_guard<std::mutex> lock(head_mutex);
      if (lane == 0) g.head = head;
      if (head != lane0_head) g.heads_agree = false;
    }
    ops::compact(lane, words, head, g.packed.data());
    Bits back[per_lane];
    ops::expand(lane, head, g.packed.data(), back);
    ops::transpose(lane, back);
    for (int r = 0; r < per_lane; ++r) g.restored[lane + r * lanes] = back[r];
  });

  for (int group = 0; group < groups; ++group) {
    INFO("group " << group << " of a " << WaveLanes << "-lane wavefront, W = " << w);
    const auto& g = results[group];
    Bits expected[w];
    for (int i = 0; i < w; ++i) expected[i] = g.rows[i];
    host::transpose(0, expected);
    CHECK(ndzip_test::mismatch(g.columns, std::vector<Bits>(expected, expected + w)) == "");
    const Bits expected_head = host::nonzero_columns(0, expected);
    CHECK(g.head == expected_head);
    CHECK(g.heads_agree);
    std::vector<Bits> expected_packed(w, 0);
    host::compact(0, expected, expected_head, expected_packed.data());
    CHECK(ndzip_test::mismatch(g.packed, expected_packed) == "");
    CHECK(ndzip_test::mismatch(g.restored, g.rows) == "");
  }
}

template <int WaveLanes, int Segment>
void check_scan(std::mt19937_64& rng) {
  using ops = ndzip::backend::lane_group_ops<emulated_intrinsics<WaveLanes>>;
  std::vector<std::uint32_t> in(WaveLanes), scanned(WaveLanes), last(WaveLanes);
  for (auto& v : in) v = static_cast<std::uint32_t>(rng());
  on_wavefront<WaveLanes>([&](int wave_lane) {
    const int lane = wave_lane % ops::vector_length;
    scanned[wave_lane] = ops::template inclusive_scan<Segment>(lane, in[wave_lane]);
    last[wave_lane] = ops::broadcast(scanned[wave_lane], ops::vector_length - 1);
  });
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

TEST_CASE("emulation: 32-lane groups in 32-lane warps (CUDA) match the host lane-ops") {
  check_lane_group_operations<32>();
}

TEST_CASE("emulation: 32-lane groups in 64-lane wavefronts (HIP) match the host lane-ops") {
  check_lane_group_operations<64>();
}
