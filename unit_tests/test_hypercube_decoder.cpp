// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Decoding in users' kernels (ndzip/hypercube_decoder.hpp, ndzip/compressed_array.hpp): on every
// backend, and on the host with the emulated 32- and 64-lane groups, every hypercube of every
// type, rank and shape decoded in a kernel of the test's own (teams decoding several hypercubes
// in one scratch), with the border read element by element, gives every element of the grid
// exactly once and equal to decompress()'s, bit for bit; so do compressed_array's element-wise
// calls; its reductions equal the same reductions over the decompressed array: min and max
// exactly, a position-weighted checksum of the bits exactly (any wrong or misplaced value
// changes it), a sum of doubles within its rounding bound. Policies of another team size or too
// little scratch are refused by name; damaged streams are refused when the decoder is made, with
// decompress()'s message; the high-ratio mode and misaligned streams are refused.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <ndzip/compressed_array.hpp>
#include <ndzip/hypercube_decoder.hpp>

#include "backends/emulated/lane_ops.hpp"
#include "codec_support.hpp"

using namespace ndzip_test;

namespace {

template <class LaneOps>
struct lane_ops_tag {
  using type = LaneOps;
};

// Calls f(exec, lane_ops_tag<L>) for every backend with its own lane-ops, and on the default host
// space with the emulated 32-lane warps and 64-lane wavefronts.
template <class F>
void for_each_decoder_kind(F&& f) {
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    INFO("the backend's own lane-ops");
    f(exec, lane_ops_tag<ndzip::backend::lane_ops_for_t<Exec>>{});
  });
  const Kokkos::DefaultHostExecutionSpace host;
  {
    INFO("emulated 32-lane warps");
    f(host, lane_ops_tag<ndzip::backend::emulated_lane_ops<32>>{});
  }
  {
    INFO("emulated 64-lane wavefronts");
    f(host, lane_ops_tag<ndzip::backend::emulated_lane_ops<64>>{});
  }
}

// The C-order offset of grid coordinates `at`.
template <int D, class Index>
KOKKOS_INLINE_FUNCTION std::size_t offset_of(const ndzip::extent<D>& grid, const Index& at) {
  std::size_t offset = 0;
  for (int a = 0; a < D; ++a) offset = offset * grid[a] + at[a];
  return offset;
}

template <class Decoder>
using values_view = Kokkos::View<typename Decoder::value_type*, typename Decoder::memory_space>;
template <class Decoder>
using visits_view = Kokkos::View<int*, typename Decoder::memory_space>;

// A value stored at its place in `out`, and its visit counted.
template <class Decoder>
struct element_store {
  ndzip::extent<Decoder::dimensions> grid;
  values_view<Decoder> out;
  visits_view<Decoder> visits;

  KOKKOS_INLINE_FUNCTION void operator()(const typename Decoder::index_type& index,
                                         typename Decoder::value_type value) const {
    const std::size_t at = offset_of(grid, index);
    out(at) = value;
    Kokkos::atomic_add(&visits(at), 1);
  }
};

// The test's own decoding kernel: team t decodes hypercubes t, t + teams, ... one after another
// in the scratch it takes once, and stores each value at its place.
template <class Decoder>
struct decode_hypercubes_in_turn {
  Decoder decoder;
  element_store<Decoder> store;
  std::size_t teams;

  KOKKOS_INLINE_FUNCTION void operator()(const typename Decoder::member_type& member) const {
    const auto scratch = Decoder::scratch(member);
    for (auto h = static_cast<std::size_t>(member.league_rank()); h < decoder.hypercube_count();
         h += teams) {
      const auto cube = decoder.decode(member, scratch, h);
      Kokkos::parallel_for(Kokkos::TeamVectorRange(member, cube.size()),
                           [&](int p) { store(cube.index(p), cube[p]); });
    }
  }
};

// Border element i stored at its place; a visit counts twice more where its coordinates and its
// offset disagree.
template <class Decoder>
struct decode_border {
  Decoder decoder;
  element_store<Decoder> store;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    const auto index = decoder.border_coordinates(i);
    if (offset_of(store.grid, index) != decoder.border_offset(i))
      Kokkos::atomic_add(&store.visits(offset_of(store.grid, index)), 2);
    store(index, decoder.border_value(i));
  }
};

// for_each_hypercube's functor: the values of each hypercube stored at their places.
template <class Decoder>
struct hypercube_store {
  element_store<Decoder> store;

  template <class Cube>
  KOKKOS_INLINE_FUNCTION void operator()(const typename Decoder::member_type& member,
                                         std::size_t, const Cube& cube) const {
    Kokkos::parallel_for(Kokkos::TeamVectorRange(member, cube.size()),
                         [&](int p) { store(cube.index(p), cube[p]); });
  }
};

// The reductions' functors. Comparisons skip NaN (false either way), so min and max do not
// depend on the order.
struct minimum {
  template <class Index, class T>
  KOKKOS_INLINE_FUNCTION void operator()(const Index&, T value, T& partial) const {
    if (value < partial) partial = value;
  }
};
struct maximum {
  template <class Index, class T>
  KOKKOS_INLINE_FUNCTION void operator()(const Index&, T value, T& partial) const {
    if (value > partial) partial = value;
  }
};
// Sum over the elements of (bits + 1) * (2 * offset + 1) mod 2^64: exact in any order, and
// changed by any wrong value or any value at a wrong place.
template <int D>
struct placed_bits_checksum {
  ndzip::extent<D> grid;
  template <class Index, class T>
  KOKKOS_INLINE_FUNCTION void operator()(const Index& index, T value,
                                         std::uint64_t& partial) const {
    typename ndzip::profile<T, D>::bits_type bits;
    std::memcpy(&bits, &value, sizeof bits);
    partial += (std::uint64_t{bits} + 1) * (2 * offset_of(grid, index) + 1);
  }
};
// The sum of the finite values (x - x is 0 exactly for those) in double.
struct finite_sum {
  template <class Index, class T>
  KOKKOS_INLINE_FUNCTION void operator()(const Index&, T value, double& partial) const {
    if (value - value == 0) partial += static_cast<double>(value);
  }
};

// "" if every element was visited exactly once.
template <class Space>
std::string visited_once(const Kokkos::View<int*, Space>& visits) {
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, visits);
  for (std::size_t i = 0; i < host.size(); ++i)
    if (host(i) != 1)
      return "element " + std::to_string(i) + " visited " + std::to_string(host(i)) + " times";
  return "";
}

// The reductions of compressed_array `array` against the same over `expected` (its
// decompression's bits).
template <class C, class Array>
void check_reductions(const Array& array, const typename Array::execution_space& exec,
                      const std::vector<typename C::bits_type>& expected) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  T want_min = std::numeric_limits<T>::max(), want_max = std::numeric_limits<T>::lowest();
  std::uint64_t want_checksum = 0;
  double want_sum = 0, magnitude = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    T v;
    std::memcpy(&v, &expected[i], sizeof v);
    if (v < want_min) want_min = v;
    if (v > want_max) want_max = v;
    want_checksum += (std::uint64_t{expected[i]} + 1) * (2 * i + 1);
    if (std::isfinite(v)) {
      want_sum += static_cast<double>(v);
      magnitude += std::fabs(static_cast<double>(v));
    }
  }
  T got_min = 0, got_max = 0;
  std::uint64_t got_checksum = 0;
  double got_sum = 0;
  array.reduce(exec, minimum{}, Kokkos::Min<T>(got_min));
  array.reduce(exec, maximum{}, Kokkos::Max<T>(got_max));
  array.reduce(exec, placed_bits_checksum<D>{array.grid()},
               Kokkos::Sum<std::uint64_t>(got_checksum));
  array.reduce(exec, finite_sum{}, Kokkos::Sum<double>(got_sum));
  CHECK(got_min == want_min);
  CHECK(got_max == want_max);
  CHECK(got_checksum == want_checksum);
  // Each order of summation is within (n - 1) u sum |x| of the exact sum (u: double's unit
  // roundoff), so two orders are within twice that of each other; where no partial sum can
  // overflow (random double bits reach 1e308).
  const double bound = 2.0 * static_cast<double>(expected.size()) *
                       std::numeric_limits<double>::epsilon() / 2 * magnitude;
  if (magnitude < 1e300) CHECK(std::fabs(got_sum - want_sum) <= bound);
}

// Every way of decoding `input` (compressed on `exec`) in kernels, against decompress().
template <class C, class Exec, class LaneOps>
void check_decoding(const Exec& exec, const ndzip::extent<C::dims>& grid,
                    const std::vector<typename C::bits_type>& input) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  using decoder_type = ndzip::hypercube_decoder<T, D, Exec, LaneOps>;
  using array_type = ndzip::compressed_array<T, D, Exec, LaneOps>;
  using space = typename Exec::memory_space;
  static_assert(std::is_trivially_copyable_v<decoder_type>);

  const auto stream = compress_on<T, D>(exec, input, grid);
  const auto expected = decompress_on<T, D>(exec, stream, grid);
  const auto stream_view = device_bytes<space, std::byte>(stream, 8);  // longer than the stream
  const decoder_type decoder(exec, stream_view, grid);
  CHECK(decoder.stream_bytes() == stream.size());
  const std::size_t n = decoder.hypercube_count();
  const auto fresh_store = [&] {
    return element_store<decoder_type>{grid, values_view<decoder_type>("out", grid.size()),
                                       visits_view<decoder_type>("visits", grid.size())};
  };

  {
    INFO("the test's own kernel, three hypercubes a team, and the border by elements");
    const auto store = fresh_store();
    const std::size_t teams = n / 3 + 1;
    const auto policy = decoder.policy(exec, teams);
    decoder_type::check_policy(policy);
    Kokkos::parallel_for("test::decode_hypercubes_in_turn", policy,
                         decode_hypercubes_in_turn<decoder_type>{decoder, store, teams});
    Kokkos::parallel_for("test::decode_border",
                         Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::size_t>>(
                             exec, 0, decoder.border_count()),
                         decode_border<decoder_type>{decoder, store});
    exec.fence();
    CHECK(visited_once(store.visits) == "");
    CHECK(mismatch(bits_of<Bits>(store.out), expected) == "");
  }

  const array_type array(exec, stream_view, grid);
  CHECK(array.stream_bytes() == stream.size());
  {
    INFO("compressed_array::for_each_element");
    const auto store = fresh_store();
    array.for_each_element(exec, store);
    exec.fence();
    CHECK(visited_once(store.visits) == "");
    CHECK(mismatch(bits_of<Bits>(store.out), expected) == "");
  }
  {
    INFO("compressed_array::for_each_hypercube and for_each_border");
    const auto store = fresh_store();
    array.for_each_hypercube(exec, hypercube_store<decoder_type>{store});
    array.for_each_border(exec, store);
    exec.fence();
    CHECK(visited_once(store.visits) == "");
    CHECK(mismatch(bits_of<Bits>(store.out), expected) == "");
  }
  {
    INFO("compressed_array's reductions");
    check_reductions<C>(array, exec, expected);
  }
  {
    INFO("compressed_array made from the values: the same stream");
    const auto values =
        Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
    const array_type compressed(exec, values);
    CHECK(compressed.stream().size() == stream.size());
    CHECK(mismatch(host_bytes(compressed.stream(), compressed.stream().size()), stream) == "");
  }
}

// The message of the std::exception that f() throws, or "no error".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE_TEMPLATE("hypercube decoder: every hypercube and border element decoded in a kernel "
                   "equals decompress(), as do compressed_array's calls, on every backend and "
                   "lane group",
                   C, NDZIP_ALL_CONFIGS) {
  constexpr int D = C::dims;
  std::vector<ndzip::extent<D>> grids = {bordered_grid<D>()};
  for (const auto& grid : cross_backend_shapes<D>()) grids.push_back(grid);
  for (const auto& grid : grids) {
    for (const std::string family : {"smooth", "specials", "random"}) {
      INFO("grid " << ndzip::to_string(grid) << ", family " << family);
      const auto input = generate_for<C>(family, C::is_double ? 24 : 8, grid);
      for_each_decoder_kind([&](auto exec, auto lane_ops) {
        check_decoding<C, decltype(exec), typename decltype(lane_ops)::type>(exec, grid, input);
      });
    }
  }
}

TEST_CASE("hypercube decoder: a grid without hypercubes is all border, one without border all "
          "hypercubes") {
  for_each_decoder_kind([&](auto exec, auto lane_ops) {
    using Exec = decltype(exec);
    using L = typename decltype(lane_ops)::type;
    const ndzip::extent<3> border_only(15, 40, 3), cubes_only(32, 16, 48);
    const ndzip::extent<2> double_cubes_only(128, 64);
    check_decoding<f32_3d, Exec, L>(exec, border_only,
                                    generate_for<f32_3d>("smooth", 8, border_only));
    check_decoding<f32_3d, Exec, L>(exec, cubes_only,
                                    generate_for<f32_3d>("random", 8, cubes_only));
    check_decoding<f64_2d, Exec, L>(exec, double_cubes_only,
                                    generate_for<f64_2d>("smooth", 24, double_cubes_only));
  });
}

TEST_CASE("hypercube decoder: policies of another team size, or with too little scratch, are "
          "refused by name") {
  for_each_decoder_kind([&](auto exec, auto lane_ops) {
    using Exec = decltype(exec);
    using lane_ops_type = typename decltype(lane_ops)::type;
    using decoder_type = ndzip::hypercube_decoder<float, 2, Exec, lane_ops_type>;
    using policy_type = typename decoder_type::policy_type;
    const ndzip::extent<2> grid(130, 67);
    const auto stream = compress_on<float, 2>(exec, generate_for<f32_2d>("smooth", 8, grid), grid);
    const decoder_type decoder(exec, device_bytes<typename Exec::memory_space, std::byte>(stream),
                               grid);
    CHECK(error_of([&] { decoder_type::check_policy(decoder.policy(exec, 4)); }) == "no error");
    // More scratch than needed is the kernel's own.
    const int threads = decoder_type::team_size(), lanes = decoder_type::vector_length();
    const std::size_t bytes = decoder_type::team_scratch_bytes();
    // A policy of these teams with `scratch` bytes of level-0 scratch, checked.
    const auto check = [&](int team_size, std::size_t scratch) {
      return error_of([&] {
        decoder_type::check_policy(policy_type(exec, 4, team_size, lanes)
                                       .set_scratch_size(0, Kokkos::PerTeam(scratch)));
      });
    };
    // More scratch than the decoder's is the kernel's own.
    CHECK(check(threads, bytes + 64) == "no error");
    CHECK(check(threads, bytes - 8) ==
          "ndzip: hypercube_decoder needs a policy with level-0 team scratch of at least "
          "team_scratch_bytes() = " +
              std::to_string(bytes) + ", this one has " + std::to_string(bytes - 8));
    CHECK(check(threads, 0).find("team_scratch_bytes()") != std::string::npos);
    // A team of twice the threads, where the backend has threads for it.
    if (exec.concurrency() >= 2 * threads)
      CHECK(check(2 * threads, bytes) ==
            "ndzip: hypercube_decoder needs a policy with team_size() " +
                std::to_string(threads) + ", this one has " + std::to_string(2 * threads));
  });
}

TEST_CASE_TEMPLATE("hypercube decoder: a damaged stream is refused when the decoder is made, with "
                   "decompress()'s message",
                   C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = bordered_grid<D>();
  const auto stream = compress_on<T, D>(Kokkos::DefaultHostExecutionSpace{},
                                        generate_for<C>("smooth", C::is_double ? 24 : 8, grid),
                                        grid);
  const ndzip::stream_layout<T, D> layout(grid);
  REQUIRE(layout.hypercube_count >= 2);
  // Damaged copies of the stream: each case as errors.cpp forges it.
  std::vector<std::pair<std::string, std::vector<unsigned char>>> damaged;
  damaged.emplace_back("truncated by a word", stream);
  damaged.back().second.resize(stream.size() - sizeof(T));
  damaged.emplace_back("shorter than the smallest stream", stream);
  damaged.back().second.resize(layout.smallest_stream_bytes() - 1);
  damaged.emplace_back("entry 1 equal to entry 0", stream);
  store_u32(damaged.back().second, 4, load_u32(stream, 0));
  damaged.emplace_back("entry 0 beyond the last", stream);
  store_u32(damaged.back().second, 0, load_u32(stream, 4 * (layout.hypercube_count - 1)) + 1);
  damaged.emplace_back("entry 0 longer than any block", stream);
  store_u32(damaged.back().second, 0, ndzip::profile<T, D>::max_block_words + 1);
  damaged.emplace_back("a head of block 1 with one column more", stream);
  {
    auto& bytes = damaged.back().second;
    const std::size_t head = layout.header_bytes() + load_u32(stream, 0) * sizeof(Bits);
    Bits word;
    std::memcpy(&word, bytes.data() + head, sizeof word);
    word = word == static_cast<Bits>(~Bits{0}) ? static_cast<Bits>(word & (word - 1))
                                               : static_cast<Bits>(word | (word + 1));
    std::memcpy(bytes.data() + head, &word, sizeof word);
  }
  for (const auto& forged : damaged) {
    INFO(forged.first);
    const std::vector<unsigned char>& bytes = forged.second;
    for_each_decoder_kind([&](auto exec, auto lane_ops) {
      using Exec = decltype(exec);
      using space = typename Exec::memory_space;
      using decoder_type = ndzip::hypercube_decoder<T, D, Exec, typename decltype(lane_ops)::type>;
      const auto view = device_bytes<space, std::byte>(bytes);
      const auto values = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("values", grid);
      const std::string expected = error_of([&] { ndzip::decompress(exec, view, values); });
      REQUIRE(expected.rfind("ndzip: invalid stream", 0) == 0);
      using array_type = ndzip::compressed_array<T, D, Exec, typename decltype(lane_ops)::type>;
      CHECK_THROWS_WITH_AS((decoder_type(exec, view, grid)), expected.c_str(),
                           ndzip::stream_error);
      CHECK_THROWS_WITH_AS((array_type(exec, view, grid)), expected.c_str(), ndzip::stream_error);
    });
  }
}

TEST_CASE("hypercube decoder: the high-ratio mode and misaligned streams are refused by name") {
  using Exec = Kokkos::DefaultHostExecutionSpace;
  const ndzip::extent<2> grid(130, 67);
  const auto input = generate_for<f32_2d>("smooth", 8, grid);
  const auto stream = compress_on<float, 2>(Exec{}, input, grid);
  const auto view = device_bytes<Kokkos::HostSpace, std::byte>(stream, 4);
  CHECK_THROWS_WITH_AS(
      (ndzip::hypercube_decoder<float, 2, Exec>(Exec{}, view, grid, ndzip::codec_mode::high_ratio)),
      "ndzip: hypercube_decoder decodes the ndzip mode's stream only, not the high_ratio mode's "
      "(its blocks are not decodable one by one); decompress it with ndzip::decompress",
      std::invalid_argument);
  CHECK_THROWS_AS(
      (ndzip::compressed_array<float, 2, Exec>(Exec{}, view, grid, ndzip::codec_mode::high_ratio)),
      std::invalid_argument);
  const Kokkos::View<std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> shifted(
      view.data() + 2, stream.size());
  const auto values = host_view_of<float, 2>(input, grid);
  const std::string expected = error_of([&] { ndzip::decompress(Exec{}, shifted, values); });
  CHECK(expected == "ndzip: the stream buffer must be aligned to 4 bytes in the ndzip mode");
  CHECK_THROWS_WITH_AS((ndzip::hypercube_decoder<float, 2, Exec>(Exec{}, shifted, grid)),
                       expected.c_str(), std::invalid_argument);
}
