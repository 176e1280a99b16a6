// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The high-ratio mode (ndzip::compressor made with ndzip::codec_mode::high_ratio, docs/FORMAT.md
// "The high-ratio stream"):
// round trips of every family and shape on every backend with one stream for all of them, the
// size bound, where it beats the default mode, and hostile streams.

#include <algorithm>
#include <cmath>
#include <random>

#include "backends/emulated/lane_ops.hpp"
#include "codec_support.hpp"
#include "core/high_ratio/engine.hpp"
#include "core/high_ratio/huffman.hpp"

using namespace ndzip_test;

namespace {

template <class T, int D, class Exec, class Bits>
std::vector<unsigned char> hr_compress(ndzip::compressor<T, D, Exec>& codec,
                                       const std::vector<Bits>& input) {
  using space = typename Exec::memory_space;
  const auto values =
      Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, codec.grid()));
  auto stream = device_bytes<space>({}, codec.size_bound(), 0xa5);
  const std::size_t size = codec.compress(values, stream);
  REQUIRE(size <= stream.size());
  return host_bytes(stream, size);
}

template <class T, int D, class Exec>
std::vector<typename ndzip::profile<T, D>::bits_type> hr_decompress(
    ndzip::compressor<T, D, Exec>& codec, const std::vector<unsigned char>& stream,
    std::size_t* consumed = nullptr) {
  using space = typename Exec::memory_space;
  const auto stream_view = device_bytes<space>(stream, 0);
  auto values = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("decoded", codec.grid());
  const std::size_t used = codec.decompress(stream_view, values);
  if (consumed) *consumed = used;
  return bits_of<typename ndzip::profile<T, D>::bits_type>(values);
}

// Every backend: the same stream, within the bound, decoded back bit for bit; returns it.
template <class C>
std::vector<unsigned char> check_high_ratio(const std::vector<typename C::bits_type>& input,
                                            const ndzip::extent<C::dims>& grid) {
  using T = typename C::value_type;
  std::vector<unsigned char> first;
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    ndzip::compressor<T, C::dims, Exec> codec(exec, grid, ndzip::codec_mode::high_ratio);
    CHECK(codec.size_bound() == ndzip::compressed_size_bound<T>(grid) + 16);
    const auto stream = hr_compress(codec, input);
    CHECK(stream.size() <= codec.size_bound());
    if (first.empty())
      first = stream;
    else
      CHECK(mismatch(stream, first) == "");
    std::size_t consumed = 0;
    CHECK(mismatch(hr_decompress(codec, stream, &consumed), input) == "");
    CHECK(consumed == stream.size());
  });
  return first;
}

// Integer-valued floats (an elevation model's kind of data): residual bit patterns with runs of
// ones, which the gray step removes.
template <class C>
std::vector<typename C::bits_type> integer_valued(const ndzip::extent<C::dims>& grid) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  std::vector<Bits> bits(grid.size());
  std::mt19937_64 rng(7);
  double level = 0;
  for (std::size_t i = 0; i < bits.size(); ++i) {
    level += static_cast<double>(static_cast<int>(rng() % 21) - 10);
    const T v = static_cast<T>(std::round(level + 100 * std::sin(0.001 * static_cast<double>(i))));
    std::memcpy(&bits[i], &v, sizeof(T));
  }
  return bits;
}

}  // namespace

TEST_CASE_TEMPLATE("high-ratio: round trips, one stream on every backend", C, NDZIP_ALL_CONFIGS) {
  for (const auto& grid : cross_backend_shapes<C::dims>())
    for (const auto& family : cross_backend_families()) {
      INFO(family << " " << ndzip::to_string(grid));
      check_high_ratio<C>(generate_for<C>(family, 8, grid), grid);
    }
  // Border only, hypercubes only, a border of its own in the border stream, one element.
  std::vector<ndzip::extent<C::dims>> more;
  constexpr std::size_t s = ndzip::profile<float, C::dims>::side_length;
  ndzip::extent<C::dims> one, below, exact;
  for (int a = 0; a < C::dims; ++a) one[a] = 1, below[a] = s - 1, exact[a] = s;
  for (const auto& grid : {one, below, exact}) {
    INFO("smooth " << ndzip::to_string(grid));
    check_high_ratio<C>(generate_for<C>("smooth", 8, grid), grid);
  }
}

TEST_CASE_TEMPLATE("high-ratio: smaller than the default mode where planes repeat", C,
                   ndzip_test::f32_2d, ndzip_test::f32_3d, ndzip_test::f64_1d) {
  const auto grid = cross_backend_shapes<C::dims>()[1];
  const auto input = integer_valued<C>(grid);
  const auto stream = check_high_ratio<C>(input, grid);
  const auto plain = model_stream<C>(input, grid);
  INFO("high-ratio " << stream.size() << " bytes, default " << plain.size());
  CHECK(stream.size() * 10 < plain.size() * 9);
  CHECK(stream[5] == 0);  // coded
}

TEST_CASE_TEMPLATE("high-ratio: incompressible data stays within the bound", C, ndzip_test::f32_1d,
                   ndzip_test::f64_3d) {
  for (const auto& grid : cross_backend_shapes<C::dims>()) {
    const auto input = generate_for<C>("random", 0, grid);
    const auto stream = check_high_ratio<C>(input, grid);
    CHECK(stream.size() <= model_stream<C>(input, grid).size() + 16);
  }
}

namespace {
namespace hr = ndzip::core::high_ratio;

// A code built from counts as the build_codes kernel does, by one thread (sorted) or by a team
// of `parts` (ranked).
hr::code_lengths build_code(const std::uint64_t* counts, int parts) {
  hr::code_workspace ws{};
  hr::code_lengths code{};
  for (int s = 0; s < hr::alphabet; ++s) ws.counts[s] = counts[s];
  ws.used = 0;
  if (parts == 1)
    hr::sort_symbols(ws);
  else
    for (int part = 0; part < parts; ++part) hr::rank_symbols(ws, part, parts);
  const int used = static_cast<int>(
      std::count_if(counts, counts + hr::alphabet, [](std::uint64_t c) { return c != 0; }));
  CHECK(ws.used == used);
  hr::merge_symbols(ws, code);
  hr::limit_lengths(ws, code);
  code.longest = static_cast<std::uint8_t>(ws.longest);
  return code;
}

// The canonical codes of a code, its census taken by one thread.
void canonical_codes(const hr::code_lengths& code, std::uint16_t* codes) {
  hr::length_census census{};
  hr::count_lengths(code, census, 0, 1);
  hr::sum_lengths(census, 0, 1);
  hr::canonical_codes(code, census, codes, nullptr, 0, 1);
}

// A serialised code read and checked as read_codes does it, by one thread: the bytes it takes,
// or 0 and the reason in `why`.
std::size_t parse(const std::byte* in, std::size_t available, hr::code_lengths& code,
                  hr::code_failure& why) {
  code = hr::code_lengths{};
  const int longest = hr::read_longest(in, available, why);
  if (longest < 0) return 0;
  if (longest == 0) return 1;
  hr::unpack_lengths(in, longest, code, 0, 1);
  hr::length_census census{};
  hr::count_lengths(code, census, 0, 1);
  hr::sum_lengths(census, 0, 1);
  why = hr::check_lengths(census, longest);
  if (why != hr::code_failure::none) return 0;
  code.longest = static_cast<std::uint8_t>(longest);
  return hr::serialized_code_bytes;
}

// The decoder entries of a code as read_codes fills them, by a team of `parts`.
std::vector<std::uint16_t> decoder_table(const hr::code_lengths& code, int parts = 1) {
  hr::length_census census{};
  std::uint8_t by_code[hr::alphabet];
  for (int part = 0; part < parts; ++part) hr::count_lengths(code, census, part, parts);
  for (int part = 0; part < parts; ++part) hr::sum_lengths(census, part, parts);
  for (int part = 0; part < parts; ++part)
    hr::canonical_codes(code, census, nullptr, by_code, part, parts);
  std::vector<std::uint16_t> entries(hr::decoder_table_size, 0xffff);
  for (int part = 0; part < parts; ++part) hr::clear_decoder_entries(entries.data(), part, parts);
  if (code.longest > 0)
    for (int part = 0; part < parts; ++part)
      hr::decoder_entries(census, code.longest, by_code, entries.data(), part, parts);
  return entries;
}

bool same_lengths(const hr::code_lengths& a, const hr::code_lengths& b) {
  return a.longest == b.longest && std::equal(a.length, a.length + hr::alphabet, b.length);
}

}  // namespace

TEST_CASE("high-ratio: code tables are canonical, limited to 12 bits and checked on reading") {
  // Fibonacci counts would need codes far longer than 12 bits.
  std::uint64_t counts[hr::alphabet] = {};
  std::uint64_t a = 1, b = 1;
  for (int s = 0; s < 40; ++s) {
    counts[s] = a;
    const std::uint64_t c = a + b;
    a = b;
    b = c;
  }
  const auto code = build_code(counts, 1);
  CHECK(code.longest == hr::max_code_length);
  std::uint64_t kraft = 0;
  for (int s = 0; s < hr::alphabet; ++s) {
    CHECK(code.length[s] <= code.longest);
    CHECK((code.length[s] > 0) == (s < 40));
    if (code.length[s]) kraft += std::uint64_t{1} << (hr::max_code_length - code.length[s]);
  }
  CHECK(kraft <= (std::uint64_t{1} << hr::max_code_length));
  std::vector<std::byte> bytes(hr::serialized_bytes(code));
  hr::serialize(code, bytes.data(), 0, 1);
  hr::code_lengths back{};
  hr::code_failure why{};
  CHECK(parse(bytes.data(), bytes.size(), back, why) == bytes.size());
  CHECK(same_lengths(back, code));
  // Every decoder entry of a complete code decodes to the symbol whose code starts there.
  std::vector<std::uint16_t> entries = decoder_table(code);
  CHECK(std::count(entries.begin(), entries.end(), 0) == 0);
  std::uint16_t codes[hr::alphabet];
  std::uint32_t encoder[hr::alphabet];
  canonical_codes(code, codes);
  hr::encoder_entries(code, codes, encoder, 0, 1);
  for (int s = 0; s < 40; ++s) {
    const std::uint32_t e = encoder[s];
    CHECK(entries[e & 0xffffu] == (s | (e >> 16) << 8));
  }
  // A short code's entries repeat over all max_code_length bits (every table is read with the
  // same mask); an unused code has none.
  std::uint64_t few[hr::alphabet] = {};
  few[1] = 5, few[2] = 3, few[3] = 1;
  const hr::code_lengths short_code = build_code(few, 1);
  REQUIRE(short_code.longest == 2);
  entries = decoder_table(short_code);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const unsigned length = entries[i] >> 8;
    REQUIRE(length >= 1);
    CHECK(entries[i] == entries[i & ((1u << length) - 1)]);
  }
  entries = decoder_table(hr::code_lengths{});
  CHECK(std::count(entries.begin(), entries.end(), 0) == static_cast<long>(entries.size()));
  // Too many short codes, a length above the stated longest, a truncated table.
  auto broken = bytes;
  broken[1] = std::byte{0x11};
  broken[2] = std::byte{0x11};
  broken[3] = std::byte{0x11};
  CHECK(parse(broken.data(), broken.size(), back, why) == 0);
  CHECK(why == hr::code_failure::kraft);
  broken = bytes;
  broken[0] = std::byte{3};
  CHECK(parse(broken.data(), broken.size(), back, why) == 0);
  CHECK(why == hr::code_failure::above_longest);
  CHECK(parse(bytes.data(), 100, back, why) == 0);
  CHECK(why == hr::code_failure::truncated);
  broken[0] = std::byte{13};
  CHECK(parse(broken.data(), broken.size(), back, why) == 0);
  CHECK(why == hr::code_failure::too_long);
}

// limit_lengths takes the turns of ITU T.81's K.3 that keep the same room together: the same
// number of codes of each length as one turn at a time (K.3 as written, below), on codes whose
// unlimited lengths reach 20 to 40 bits.
TEST_CASE("high-ratio: limiting code lengths in batches of turns is ITU T.81 K.3") {
  std::mt19937_64 rng(13);
  for (int round = 0; round < 100; ++round) {
    INFO("round " << round);
    std::uint64_t counts[hr::alphabet] = {};
    const int used = 20 + static_cast<int>(rng() % (hr::alphabet - 20));
    for (int k = 0; k < used; ++k) counts[rng() % hr::alphabet] = std::uint64_t{1} << (rng() % 40);
    hr::code_workspace ws{};
    hr::code_lengths code{};
    for (int s = 0; s < hr::alphabet; ++s) ws.counts[s] = counts[s];
    hr::sort_symbols(ws);
    hr::merge_symbols(ws, code);
    if (ws.longest <= hr::max_code_length) continue;
    std::vector<int> at_length(hr::alphabet, 0);
    for (int s = 0; s < hr::alphabet; ++s)
      if (code.length[s]) ++at_length[code.length[s]];
    for (int len = ws.longest; len > hr::max_code_length; --len)
      while (at_length[len] > 0) {
        int room = len - 2;
        while (room > 1 && at_length[room] == 0) --room;
        at_length[len] -= 2;
        at_length[len - 1] += 1;
        at_length[room + 1] += 2;
        at_length[room] -= 1;
      }
    hr::limit_lengths(ws, code);
    std::vector<int> limited(hr::alphabet, 0);
    for (int s = 0; s < hr::alphabet; ++s)
      if (code.length[s]) ++limited[code.length[s]];
    CHECK(limited == at_length);
  }
}

TEST_CASE("high-ratio: a team's ranks and one thread's sort give the same codes") {
  // Random counts with ties, many unused symbols, a single symbol, counts that need halving.
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::uint64_t counts[hr::alphabet] = {};
    const int used = round == 0 ? 1 : 1 + static_cast<int>(rng() % hr::alphabet);
    for (int k = 0; k < used; ++k) {
      const int s = static_cast<int>(rng() % hr::alphabet);
      counts[s] = round % 3 == 0   ? 1 + rng() % 4
                  : round % 3 == 1 ? rng() % 100000 + 1
                                   : std::uint64_t{1} << (rng() % 40);
    }
    INFO("round " << round);
    const auto sorted = build_code(counts, 1);
    for (int parts : {2, 7, 128}) CHECK(same_lengths(build_code(counts, parts), sorted));
    std::uint64_t kraft = 0;
    for (int s = 0; s < hr::alphabet; ++s) {
      CHECK((sorted.length[s] != 0) == (counts[s] != 0));
      if (sorted.length[s]) kraft += std::uint64_t{1} << (hr::max_code_length - sorted.length[s]);
    }
    // Complete (a single symbol aside), and no symbol longer than a rarer one.
    const auto distinct = std::count_if(counts, counts + hr::alphabet, [](auto c) { return c; });
    if (distinct > 1) CHECK(kraft == (std::uint64_t{1} << hr::max_code_length));
    bool monotone = true;
    for (int a = 0; a < hr::alphabet; ++a)
      for (int b = 0; b < hr::alphabet; ++b)
        if (counts[a] != 0 && counts[b] != 0 && counts[a] > counts[b])
          monotone = monotone && sorted.length[a] <= sorted.length[b];
    CHECK(monotone);
  }
}

// A team's census of a code's lengths (every step called for every part in turn, as the table
// kernels' barriers order them) gives one thread's canonical codes, decoder entries and checks:
// built codes, and serialised ones with random damage.
TEST_CASE("high-ratio: a team's length census gives one thread's codes and checks") {
  const auto census_of = [](const hr::code_lengths& code, int parts) {
    hr::length_census census{};
    for (int part = 0; part < parts; ++part) hr::count_lengths(code, census, part, parts);
    for (int part = 0; part < parts; ++part) hr::sum_lengths(census, part, parts);
    return census;
  };
  std::mt19937_64 rng(12);
  int refused = 0;
  for (int round = 0; round < 100; ++round) {
    INFO("round " << round);
    std::uint64_t counts[hr::alphabet] = {};
    const int used = 1 + static_cast<int>(rng() % hr::alphabet);
    for (int k = 0; k < used; ++k) counts[rng() % hr::alphabet] = std::uint64_t{1} << (rng() % 30);
    const auto code = build_code(counts, 1);
    std::uint16_t one[hr::alphabet];
    canonical_codes(code, one);
    std::vector<std::byte> bytes(hr::serialized_bytes(code));
    hr::serialize(code, bytes.data(), 0, 1);
    bytes[1 + rng() % (bytes.size() - 1)] ^= static_cast<std::byte>(1u << (rng() % 8));
    hr::code_lengths damaged{};
    hr::code_failure by_one{};
    const bool read = parse(bytes.data(), bytes.size(), damaged, by_one) != 0;
    hr::unpack_lengths(bytes.data(), code.longest, damaged, 0, 1);
    for (int parts : {2, 16, 128}) {
      INFO(parts << " parts");
      const auto census = census_of(code, parts);
      std::uint16_t team[hr::alphabet];
      for (int part = 0; part < parts; ++part)
        hr::canonical_codes(code, census, team, nullptr, part, parts);
      CHECK(std::equal(one, one + hr::alphabet, team));
      CHECK(decoder_table(code, parts) == decoder_table(code));
      CHECK(hr::check_lengths(census, code.longest) == hr::code_failure::none);
      CHECK(hr::check_lengths(census_of(damaged, parts), code.longest) == by_one);
    }
    CHECK(read == (by_one == hr::code_failure::none));
    refused += !read;
  }
  CHECK(refused > 20);  // the damaged tables' checks were compared on failures too
}

TEST_CASE("high-ratio: damaged streams are refused, never read past their end") {
  using C = ndzip_test::f32_2d;
  const ndzip::extent<2> grid(130, 200);
  const auto input = integer_valued<C>(grid);
  Kokkos::DefaultHostExecutionSpace exec;
  ndzip::compressor<float, 2, Kokkos::DefaultHostExecutionSpace> codec(
      exec, grid, ndzip::codec_mode::high_ratio);
  const auto stream = hr_compress(codec, input);
  REQUIRE(stream[5] == 0);
  const auto refused = [&](std::vector<unsigned char> bad, const char* what) {
    INFO(what);
    CHECK_THROWS_AS(hr_decompress(codec, bad), ndzip::stream_error);
  };
  refused({stream.begin(), stream.begin() + 10}, "shorter than the header");
  for (std::size_t cut : {stream.size() - 1, stream.size() / 2, std::size_t{200}}) {
    INFO("cut at " << cut);
    refused({stream.begin(), stream.begin() + static_cast<std::ptrdiff_t>(cut)}, "truncated");
  }
  auto bad = stream;
  bad[0] = 'X';
  refused(bad, "magic");
  bad = stream;
  bad[4] = 2;
  refused(bad, "version");
  bad = stream;
  bad[5] = 7;
  refused(bad, "coding");
  bad = stream;
  bad[6] = 1;
  refused(bad, "reserved");
  bad = stream;
  bad[16] = 13;
  refused(bad, "code length limit");
  // The block table: 6 hypercubes (130x200 float, no border blocks) after the code tables.
  std::size_t table_at = 16;
  for (int t = 0; t < 8; ++t) table_at += stream[table_at] == 0 ? 1 : 129;
  table_at = (table_at + 7) / 8 * 8;
  const std::size_t last_entry = table_at + 8 * 5;
  bad = stream;
  bad[last_entry] = static_cast<unsigned char>(bad[last_entry] - 1);  // ends short of the area
  REQUIRE(bad[last_entry + 7] == stream[last_entry + 7]);
  try {
    hr_decompress(codec, bad);
    FAIL("a last block ending short of the coded area was accepted");
  } catch (const ndzip::stream_error& e) {
    CHECK(std::string(e.what()).find("block 5 of 6") != std::string::npos);
  }
  bad = stream;
  bad[table_at] =
      static_cast<unsigned char>(bad[table_at] + 200);  // block 0 ends past block 1's end
  refused(bad, "a block table out of order");
  // Every single-byte change anywhere decodes or throws ndzip::stream_error (no other
  // exception, no crash; the sanitizer builds catch reads outside the stream).
  std::mt19937 rng(1);
  for (int trial = 0; trial < 300; ++trial) {
    bad = stream;
    bad[rng() % bad.size()] ^= static_cast<unsigned char>(1 + rng() % 255);
    try {
      hr_decompress(codec, bad);
    } catch (const ndzip::stream_error&) {
    }
  }
}

namespace {

// What a decode gives: the values' bits, or the error message.
template <class Bits, class Decode>
std::string decode_outcome(const Decode& decode, std::size_t n) {
  std::vector<Bits> values(n);
  try {
    decode(values.data());
  } catch (const ndzip::stream_error& e) {
    return e.what();
  }
  return "decoded " +
         std::to_string(std::hash<std::string>{}(std::string(
             reinterpret_cast<const char*>(values.data()), values.size() * sizeof(Bits))));
}

// Compresses `input` with the device schedule on Serial, its lane groups emulated by LaneOps,
// and decodes `stream` (the host schedule's) and 300 damaged copies of it with both schedules.
template <class LaneOps, class C, class Grid, class Input, class Host>
void check_device_schedule(const Grid& grid, const Input& input, Host& host,
                           const std::vector<unsigned char>& stream) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  hr::engine<T, C::dims, Kokkos::Serial, true, LaneOps> device(Kokkos::Serial(), grid);
  std::mt19937_64 rng(6);
  REQUIRE(stream[5] == 0);  // coded
  std::vector<std::uint64_t> buffer((host.size_bound() + 7) / 8);
  auto* device_stream = reinterpret_cast<std::byte*>(buffer.data());
  const std::size_t size =
      device.compress(reinterpret_cast<const T*>(input.data()), device_stream, 8 * buffer.size());
  REQUIRE(size == stream.size());
  CHECK(std::memcmp(device_stream, stream.data(), size) == 0);

  int refused = 0;
  for (int trial = 0; trial <= 300; ++trial) {
    auto bad = stream;
    if (trial > 0)
      bad[16 + rng() % (bad.size() - 16)] ^= static_cast<unsigned char>(1 + rng() % 255);
    std::memcpy(device_stream, bad.data(), bad.size());
    const auto by_host = decode_outcome<Bits>(
        [&](Bits* values) {
          const auto in = device_bytes<Kokkos::HostSpace>(bad, 0);
          host.decompress_raw(reinterpret_cast<const std::byte*>(in.data()), in.size(),
                              reinterpret_cast<T*>(values));
        },
        input.size());
    const auto by_device = decode_outcome<Bits>(
        [&](Bits* values) {
          device.decompress(device_stream, bad.size(), reinterpret_cast<T*>(values));
        },
        input.size());
    INFO("trial " << trial);
    CHECK(by_host == by_device);
    if (trial == 0)
      CHECK(by_host ==
            decode_outcome<Bits>(
                [&](Bits* v) { std::memcpy(v, input.data(), input.size() * sizeof(Bits)); },
                input.size()));
    refused += by_host.rfind("decoded", 0) != 0;
  }
  // The comparison covered failures (about a fifth of the changes), not only valid streams.
  CHECK(refused > 30);
}

}  // namespace

// The device schedule (a thread per chunk and per code stream, core/high_ratio/*_kernels.hpp)
// runs in production on a GPU only: here it runs on the host beside the host's schedule, and
// both must write the same stream and give the same values or the same error for valid and
// damaged streams. A grid with a border block, and a block of noise that is stored.
TEST_CASE_TEMPLATE("high-ratio: the host's and the device's schedules agree", C, ndzip_test::f32_2d,
                   ndzip_test::f32_3d, ndzip_test::f64_1d) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  ndzip::extent<C::dims> grid;
  if constexpr (C::dims == 1) grid = ndzip::extent<1>(3 * 4096 + 100);
  if constexpr (C::dims == 2) grid = ndzip::extent<2>(130, 200);
  if constexpr (C::dims == 3) grid = ndzip::extent<3>(33, 34, 35);
  auto input = integer_valued<C>(grid);
  std::mt19937_64 rng(5);
  for (std::size_t k = 0; k < 4096; ++k) input[k] = static_cast<Bits>(rng());
  Kokkos::Serial exec;
  ndzip::compressor<T, C::dims, Kokkos::Serial> host(exec, grid, ndzip::codec_mode::high_ratio);
  const auto stream = hr_compress(host, input);
  // The device schedule's lane groups emulated, as CUDA's warps and as HIP's wavefronts.
  SUBCASE("32-lane warps") {
    check_device_schedule<ndzip::backend::emulated_lane_ops<32>, C>(grid, input, host, stream);
  }
  SUBCASE("64-lane wavefronts") {
    check_device_schedule<ndzip::backend::emulated_lane_ops<64>, C>(grid, input, host, stream);
  }
}

// The device schedule over a batch of grids, on the host (emulated 32-lane groups): the kernels
// find each block's grid, tables and place among the others'. Grids of 3, 40 and 1 blocks (and
// a border); every stream equals a high-ratio compressor's for its grid and decodes back.
TEST_CASE("high-ratio: the device schedule codes a batch as a compressor per grid") {
  using C = ndzip_test::f32_3d;
  using Bits = C::bits_type;
  const std::vector<ndzip::extent<3>> grids{
      ndzip::extent<3>(16, 16, 48), ndzip::extent<3>(32, 64, 80), ndzip::extent<3>(20, 20, 21)};
  Kokkos::Serial exec;
  hr::engine<float, 3, Kokkos::Serial, true, ndzip::backend::emulated_lane_ops<32>> device(exec,
                                                                                           grids);
  std::vector<std::vector<Bits>> inputs;
  std::vector<std::vector<unsigned char>> expected;
  std::vector<std::vector<std::uint64_t>> streams;
  std::vector<std::vector<Bits>> decoded;
  std::vector<ndzip::batch_item<float>> items;
  for (const auto& grid : grids) {
    inputs.push_back(integer_valued<C>(grid));
    ndzip::compressor<float, 3, Kokkos::Serial> single(exec, grid, ndzip::codec_mode::high_ratio);
    expected.push_back(hr_compress(single, inputs.back()));
    streams.emplace_back((single.size_bound() + 7) / 8);
    decoded.emplace_back(grid.size());
  }
  for (std::size_t g = 0; g < grids.size(); ++g)
    items.push_back({reinterpret_cast<float*>(inputs[g].data()),
                     reinterpret_cast<std::byte*>(streams[g].data()), 0});
  device.compress_batch(items.data(), nullptr);
  exec.fence();
  for (std::size_t g = 0; g < grids.size(); ++g) {
    INFO("grid " << g);
    REQUIRE(items[g].stream_bytes == expected[g].size());
    CHECK(std::memcmp(streams[g].data(), expected[g].data(), expected[g].size()) == 0);
    items[g].values = reinterpret_cast<float*>(decoded[g].data());
  }
  std::vector<ndzip::decompress_outcome> outcomes(grids.size());
  device.decompress_batch(items.data(), outcomes.data());
  exec.fence();
  for (std::size_t g = 0; g < grids.size(); ++g) {
    INFO("grid " << g);
    CHECK(outcomes[g].failure == ndzip::decompress_outcome::no_failure);
    CHECK(decoded[g] == inputs[g]);
  }
}

// The mode as an option of ndzip::compressor and of the View API; the asynchronous calls, which
// complete before they return in this mode.
TEST_CASE("high-ratio: a mode of ndzip::compressor, the View API and the asynchronous calls") {
  using C = ndzip_test::f32_3d;
  const ndzip::extent<3> grid(20, 33, 40);
  const auto input = integer_valued<C>(grid);
  Kokkos::DefaultHostExecutionSpace exec;
  const auto values = host_view_of<float, 3>(input, grid);
  ndzip::compressor<float, 3, Kokkos::DefaultHostExecutionSpace> plain(exec, grid);
  ndzip::compressor<float, 3, Kokkos::DefaultHostExecutionSpace> codec(
      exec, grid, ndzip::codec_mode::high_ratio);
  CHECK(plain.mode() == ndzip::codec_mode::ndzip);
  CHECK(codec.mode() == ndzip::codec_mode::high_ratio);
  CHECK(plain.alignment() == 4);
  CHECK(codec.alignment() == 8);
  CHECK(codec.size_bound() == plain.size_bound() + ndzip::high_ratio_header_bytes);
  CHECK(ndzip::compressed_size_bound(values, ndzip::codec_mode::high_ratio) == codec.size_bound());
  CHECK_THROWS_AS(codec.check_stream_size(20), ndzip::stream_error);
  using host_codec = ndzip::compressor<float, 3, Kokkos::DefaultHostExecutionSpace>;
  CHECK_THROWS_AS(host_codec(exec, grid, static_cast<ndzip::codec_mode>(7)), std::invalid_argument);

  // The View API: the same stream as the compressor's, decoded back.
  const auto stream = hr_compress(codec, input);
  CHECK(std::string(stream.begin(), stream.begin() + 4) == "NDZH");
  Kokkos::View<std::byte*, Kokkos::HostSpace> buffer("stream", codec.size_bound());
  const std::size_t size = ndzip::compress(exec, values, buffer, ndzip::codec_mode::high_ratio);
  CHECK(mismatch(host_bytes(buffer, size), stream) == "");
  auto decoded =
      make_view<grid_view<float, 3, Kokkos::LayoutRight, Kokkos::HostSpace>>("out", grid);
  CHECK(ndzip::decompress(exec, buffer, decoded, ndzip::codec_mode::high_ratio) == size);
  CHECK(mismatch(bits_of<std::uint32_t>(decoded), input) == "");

  // Asynchronous calls on every backend: the size and the outcome are written on the instance,
  // into the backend's memory.
  for_each_backend([&](const std::string& backend, auto space) {
    using Exec = decltype(space);
    using memory = typename Exec::memory_space;
    INFO(backend);
    ndzip::compressor<float, 3, Exec> async_codec(space, grid, ndzip::codec_mode::high_ratio);
    const auto device_values = Kokkos::create_mirror_view_and_copy(memory{}, values);
    Kokkos::View<std::uint64_t, memory> stream_bytes("stream_bytes");
    Kokkos::View<std::byte*, memory> async_stream("async", async_codec.size_bound());
    async_codec.compress_async(device_values, async_stream, stream_bytes);
    space.fence();
    CHECK(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, stream_bytes)() == size);
    CHECK(mismatch(host_bytes(async_stream, size), stream) == "");
    Kokkos::View<ndzip::decompress_outcome, memory> outcome("outcome");
    auto async_decoded = make_view<grid_view<float, 3, Kokkos::LayoutRight, memory>>("out", grid);
    async_codec.decompress_async(async_stream, async_decoded, outcome);
    space.fence();
    CHECK(async_codec.check_outcome(
              Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcome)()) == size);
    CHECK(mismatch(bits_of<std::uint32_t>(async_decoded), input) == "");
    // Calls queued back to back on one compressor, fenced once: each reuses the scratch of the
    // one before, in queue order. Two arrays (the input and its negation, another stream) each
    // compressed into a buffer of its own, then both decoded.
    auto negated = input;
    for (auto& v : negated) v ^= 0x80000000u;
    const auto negated_values =
        Kokkos::create_mirror_view_and_copy(memory{}, host_view_of<float, 3>(negated, grid));
    Kokkos::View<std::uint64_t, memory> second_bytes("second_bytes");
    Kokkos::View<std::byte*, memory> second_stream("second", async_codec.size_bound());
    Kokkos::View<ndzip::decompress_outcome, memory> second_outcome("second_outcome");
    auto second_decoded = make_view<grid_view<float, 3, Kokkos::LayoutRight, memory>>("2", grid);
    Kokkos::deep_copy(async_decoded, 0.f);
    async_codec.compress_async(device_values, async_stream, stream_bytes);
    async_codec.compress_async(negated_values, second_stream, second_bytes);
    async_codec.decompress_async(async_stream, async_decoded, outcome);
    async_codec.decompress_async(second_stream, second_decoded, second_outcome);
    space.fence();
    CHECK(async_codec.check_outcome(
              Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcome)()) == size);
    const std::size_t second_size =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, second_bytes)();
    CHECK(async_codec.check_outcome(Kokkos::create_mirror_view_and_copy(
              Kokkos::HostSpace{}, second_outcome)()) == second_size);
    CHECK(mismatch(bits_of<std::uint32_t>(async_decoded), input) == "");
    CHECK(mismatch(bits_of<std::uint32_t>(second_decoded), negated) == "");
    // A damaged stream is reported in the outcome; a stream shorter than the header and a short
    // output buffer are refused before any work.
    Kokkos::deep_copy(Kokkos::subview(async_stream, 0), std::byte{'X'});  // not "NDZH"
    async_codec.decompress_async(async_stream, async_decoded, outcome);
    space.fence();
    CHECK_THROWS_WITH_AS(async_codec.check_outcome(
                             Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcome)()),
                         doctest::Contains("not a high-ratio stream"), ndzip::stream_error);
    CHECK_THROWS_AS(
        async_codec.decompress_async(Kokkos::subview(async_stream, std::make_pair(0, 15)),
                                     async_decoded, outcome),
        ndzip::stream_error);
    const auto short_stream = Kokkos::subview(async_stream, std::make_pair(std::size_t{0}, size));
    CHECK_THROWS_AS(async_codec.compress_async(device_values, short_stream, stream_bytes),
                    ndzip::capacity_error);
  });
}
