// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Error paths: too-small output buffers, truncated and forged streams, streams decoded with the
// wrong extents or type. The stream is untrusted input: every damaged stream must end in
// ndzip::stream_error (or decode to some output of the right size), never in a crash.

#include <functional>

#include "codec_support.hpp"

using namespace ndzip_test;

namespace {

// Three hypercubes along the first axis and a border in every axis.
template <int D>
ndzip::extent<D> error_grid() {
  constexpr std::size_t s = ndzip::profile<float, D>::side_length;
  ndzip::extent<D> e;
  for (int a = 0; a < D; ++a) e[a] = a == 0 ? 3 * s + 2 : s + 1;
  return e;
}

enum class outcome { decoded, stream_error };

// Decompresses `stream` (a View of exactly its size plus `extra` bytes); stream_error is an
// acceptable outcome, anything else thrown fails the test.
template <class Codec>
outcome try_decompress(Codec& codec, const std::vector<unsigned char>& stream,
                       std::size_t* consumed = nullptr, std::size_t extra = 0) {
  try {
    std::size_t used = 0;
    decompress_with(codec, stream, &used, extra);
    if (consumed) *consumed = used;
    return outcome::decoded;
  } catch (const ndzip::stream_error&) {
    return outcome::stream_error;
  }
}

}  // namespace

TEST_CASE_TEMPLATE("errors: a too-small stream View throws capacity_error", C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  constexpr std::size_t u = sizeof(T);
  std::vector<ndzip::extent<D>> grids = {error_grid<D>()};
  ndzip::extent<D> border_only;  // no hypercube: the stream is the raw array
  for (int a = 0; a < D; ++a) border_only[a] = a == D - 1 ? 5 : 3;
  grids.push_back(border_only);

  for (const auto& grid : grids) {
    INFO("grid " << ndzip::to_string(grid));
    const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
    const auto expected = model_stream<C>(input, grid);
    const std::size_t size = expected.size();
    for_each_backend([&](const std::string&, auto exec) {
      using Exec = decltype(exec);
      using space = typename Exec::memory_space;
      ndzip::compressor<T, D, Exec> codec(exec, grid);
      const auto values =
          Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
      for (std::size_t capacity :
           {std::size_t{0}, std::size_t{1}, u, size / 2, size - u, size - 1}) {
        INFO("capacity " << capacity << " of " << size);
        auto stream = device_bytes<space>({}, capacity);
        CHECK_THROWS_AS(codec.compress(values, stream), ndzip::capacity_error);
        exec.fence();
      }
      // Exactly the stream size is enough, and the compressor is unharmed by the failures.
      auto exact = device_bytes<space>({}, size);
      CHECK(codec.compress(values, exact) == size);
      exec.fence();
      CHECK(mismatch(host_bytes(exact, size), expected) == "");
      // The free function reports the same.
      auto small = device_bytes<space>({}, size - u);
      CHECK_THROWS_AS(ndzip::compress(exec, values, small), ndzip::capacity_error);
    });
  }
}

TEST_CASE_TEMPLATE("errors: truncated streams throw stream_error", C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  constexpr std::size_t u = sizeof(T);
  std::vector<ndzip::extent<D>> grids = {error_grid<D>()};
  ndzip::extent<D> border_only;
  for (int a = 0; a < D; ++a) border_only[a] = a == D - 1 ? 5 : 3;
  grids.push_back(border_only);

  for (const auto& grid : grids) {
    INFO("grid " << ndzip::to_string(grid));
    const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
    const auto stream = model_stream<C>(input, grid);
    const auto layout = model_layout_of(C::is_double, D, to_array(grid));
    std::vector<std::size_t> lengths = {
        0, 1, u - 1, u, stream.size() / 2, stream.size() - u, stream.size() - 1};
    if (layout.hypercubes > 0)
      lengths.insert(lengths.end(), {layout.header_bytes - 1, layout.header_bytes,
                                     layout.header_bytes + 512 * layout.hypercubes - u});
    for_each_backend([&](const std::string&, auto exec) {
      using Exec = decltype(exec);
      ndzip::compressor<T, D, Exec> codec(exec, grid);
      for (std::size_t length : lengths) {
        INFO("truncated to " << length << " of " << stream.size() << " bytes");
        const std::vector<unsigned char> truncated(stream.begin(), stream.begin() + length);
        CHECK_THROWS_AS(decompress_with(codec, truncated), ndzip::stream_error);
      }
      // The compressor still decodes a whole stream afterwards.
      CHECK(mismatch(decompress_with(codec, stream), input) == "");
    });
  }
}

TEST_CASE_TEMPLATE("errors: forged offset tables and heads throw stream_error", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  constexpr std::size_t u = sizeof(T);
  constexpr std::uint32_t heads = ndzip::profile<T, D>::chunks_per_hypercube;
  const auto grid = error_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto stream = model_stream<C>(input, grid);
  const auto layout = model_layout_of(C::is_double, D, to_array(grid));
  REQUIRE(layout.hypercubes == 3);
  const std::size_t p = layout.header_bytes;
  const std::uint32_t e0 = load_u32(stream, 0), e1 = load_u32(stream, 4), e2 = load_u32(stream, 8);
  REQUIRE(e0 < e1);
  REQUIRE(e1 < e2);

  using forgery = std::pair<const char*, std::function<void(std::vector<unsigned char>&)>>;
  std::vector<forgery> forgeries = {
      {"E0 > E1 (non-monotone)", [&](auto& s) { store_u32(s, 0, e1 + 1); }},
      {"E1 < E0 (non-monotone)", [&](auto& s) { store_u32(s, 4, e0 - 1); }},
      {"E2 = E1 (empty block)", [&](auto& s) { store_u32(s, 8, e1); }},
      {"E0 = 0", [&](auto& s) { store_u32(s, 0, 0); }},
      {"E0 shorter than the heads", [&](auto& s) { store_u32(s, 0, heads - 1); }},
      {"all entries 0",
       [&](auto& s) { store_u32(s, 0, 0), store_u32(s, 4, 0), store_u32(s, 8, 0); }},
      {"E2 far beyond the stream", [&](auto& s) { store_u32(s, 8, 0xffffffffu); }},
      {"E2 one word beyond the stream end", [&](auto& s) { store_u32(s, 8, e2 + 1); }},
      {"E0 one word short, E1 unchanged", [&](auto& s) { store_u32(s, 0, e0 - 1); }},
      {"E0 one word long, E1 unchanged", [&](auto& s) { store_u32(s, 0, e0 + 1); }},
      {"E2 one word short", [&](auto& s) { store_u32(s, 8, e2 - 1); }},
      {"E1 larger than a block can be",
       [&](auto& s) {
         store_u32(s, 4, e0 + heads + 4096 + 1), store_u32(s, 8, e0 + heads + 4096 + 2);
       }},
  };
  // Heads that do not match the block lengths: set a bit plane that is absent in a head of
  // block 1, and clear one that is present in a head of block 2.
  auto head_offset = [&](std::uint32_t block_start_word, std::size_t chunk) {
    return p + (block_start_word + chunk) * u;
  };
  auto load_word = [&](const std::vector<unsigned char>& s, std::size_t at) {
    Bits w = 0;
    for (std::size_t b = 0; b < u; ++b) w |= static_cast<Bits>(s[at + b]) << (8 * b);
    return w;
  };
  auto store_word = [&](std::vector<unsigned char>& s, std::size_t at, Bits w) {
    for (std::size_t b = 0; b < u; ++b) s[at + b] = static_cast<unsigned char>(w >> (8 * b));
  };
  {
    const std::size_t at = head_offset(e0, 5);
    const Bits head = load_word(stream, at);
    REQUIRE(head != static_cast<Bits>(~Bits{0}));
    Bits absent = 1;
    while (head & absent) absent <<= 1;
    forgeries.push_back({"a head of block 1 gains a bit plane",
                         [=](auto& s) { store_word(s, at, head | absent); }});
  }
  {
    const std::size_t at = head_offset(e1, heads - 1);
    const Bits head = load_word(stream, at);
    REQUIRE(head != 0);
    forgeries.push_back({"a head of block 2 loses a bit plane",
                         [=](auto& s) { store_word(s, at, head & (head - 1)); }});
  }
  {
    std::size_t chunk = 0;
    while (chunk < heads && load_word(stream, head_offset(0, chunk)) == static_cast<Bits>(~Bits{0}))
      ++chunk;
    REQUIRE(chunk < heads);
    const std::size_t at = head_offset(0, chunk);
    forgeries.push_back({"a head of block 0 has every plane",
                         [=](auto& s) { store_word(s, at, static_cast<Bits>(~Bits{0})); }});
  }

  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    ndzip::compressor<T, D, Exec> codec(exec, grid);
    for (const auto& forgery : forgeries) {
      // Named references, not a structured binding: INFO captures them in a lambda.
      const auto& what = forgery.first;
      const auto& forge = forgery.second;
      INFO("forgery: " << std::string(what));
      auto forged = stream;
      forge(forged);
      REQUIRE(forged != stream);
      CHECK_THROWS_AS(decompress_with(codec, forged), ndzip::stream_error);
      // Also when the stream View has room to spare beyond the stream.
      CHECK_THROWS_AS(decompress_with(codec, forged, nullptr, 1 << 16), ndzip::stream_error);
    }
    CHECK(mismatch(decompress_with(codec, stream), input) == "");
  });
}

TEST_CASE_TEMPLATE("errors: streams decoded with the wrong extents or type", C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Other = std::conditional_t<C::is_double, float, double>;
  constexpr int D = C::dims;
  const auto grid = error_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto stream = model_stream<C>(input, grid);

  std::vector<ndzip::extent<D>> others;
  for (int axis = 0; axis < D; ++axis)
    for (long delta :
         {-1L, 1L, -static_cast<long>(grid[axis]) / 2, static_cast<long>(grid[axis])}) {
      auto e = grid;
      e[axis] = static_cast<std::size_t>(static_cast<long>(e[axis]) + delta);
      others.push_back(e);
    }
  ndzip::extent<D> reversed_grid;
  for (int a = 0; a < D; ++a) reversed_grid[a] = grid[D - 1 - a];
  others.push_back(reversed_grid);

  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    for (const auto& other : others) {
      INFO("decoded as " << ndzip::to_string(other));
      ndzip::compressor<T, D, Exec> codec(exec, other);
      std::size_t consumed = 0;
      if (try_decompress(codec, stream, &consumed) == outcome::decoded)
        CHECK(consumed <= stream.size());
    }
    {
      INFO("decoded as the other element type");
      ndzip::compressor<Other, D, Exec> codec(exec, grid);
      std::size_t consumed = 0;
      if (try_decompress(codec, stream, &consumed) == outcome::decoded)
        CHECK(consumed <= stream.size());
    }
    // Doubling the first axis reads block data as offset-table entries: an error for this stream.
    auto doubled = grid;
    doubled[0] *= 2;
    ndzip::compressor<T, D, Exec> codec(exec, doubled);
    CHECK_THROWS_AS(decompress_with(codec, stream), ndzip::stream_error);
  });
}

TEST_CASE_TEMPLATE("errors: bit flips anywhere in a stream never crash the decoder", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const auto grid = error_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto stream = model_stream<C>(input, grid);
  const auto layout = model_layout_of(C::is_double, D, to_array(grid));
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    ndzip::compressor<T, D, Exec> codec(exec, grid);
    std::size_t errors = 0, decoded = 0;
    for (std::uint64_t trial = 0; trial < 200; ++trial) {
      const std::uint64_t r = splitmix64(0xb17f11b5, trial);
      // Half of the flips hit the offset table and heads, the rest anywhere.
      const std::size_t region = trial % 2 ? stream.size() : layout.header_bytes + 600;
      const std::size_t bit = (r >> 8) % (region * 8);
      auto damaged = stream;
      damaged[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
      INFO("trial " << trial << ": bit " << bit % 8 << " of byte " << bit / 8);
      std::size_t consumed = 0;
      if (try_decompress(codec, damaged, &consumed) == outcome::decoded) {
        ++decoded;
        CHECK(consumed == stream.size());
      } else {
        ++errors;
      }
    }
    // Flips in the offset table or a head always break the block lengths.
    CHECK(errors > 0);
    CHECK(decoded > 0);
  });
}

// The campaign of issue #5 over every reference vector: every truncation of the small streams
// (a sample of lengths for the larger ones), random bit flips, forged offset-table entries and
// overwritten byte runs. Truncations must throw stream_error; every other mutation must throw
// stream_error or decode from at most the bytes given. Nothing else is acceptable.
TEST_CASE_TEMPLATE("errors: corruption campaign over the reference vectors", C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  constexpr std::size_t every_truncation_up_to = 4096;  // bytes
  constexpr std::uint32_t heads = ndzip::profile<T, D>::chunks_per_hypercube;

  for (const auto& v : reference_vectors()) {
    if (v.is_double != C::is_double || v.dims != D) continue;
    INFO("vector " << std::string(v.name));
    const auto grid = make_extent<D>(v.extents);
    const auto stream = model_stream<C>(generate_bits<Bits>(parse_vector_name(v.name)), grid);
    const auto layout = model_layout_of(C::is_double, D, to_array(grid));
    const std::uint64_t seed = splitmix64(0xc0 + D, stream.size());

    std::vector<std::size_t> truncations;
    const std::size_t step = stream.size() <= every_truncation_up_to ? 1 : stream.size() / 61;
    for (std::size_t length = 0; length < stream.size(); length += step)
      truncations.push_back(length);
    truncations.push_back(stream.size() - 1);

    std::vector<std::vector<unsigned char>> mutants;
    for (std::uint64_t k = 0; k < 24; ++k) {  // bit flips
      const std::uint64_t bit = splitmix64(seed, k) % (stream.size() * 8);
      mutants.push_back(stream);
      mutants.back()[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    }
    for (std::uint64_t k = 0; k < 8; ++k) {  // 8-byte runs overwritten with random bytes
      const std::uint64_t r = splitmix64(seed ^ 0x5eed, k);
      mutants.push_back(stream);
      for (std::size_t i = 0; i < 8; ++i)
        mutants.back()[(r + i) % stream.size()] = static_cast<unsigned char>(r >> (8 * i));
    }
    for (std::uint64_t k = 0; k < 16 && layout.hypercubes > 0; ++k) {  // forged offsets
      const std::uint64_t r = splitmix64(seed ^ 0x0ff5e7, k);
      const std::size_t entry = r % layout.hypercubes;
      const std::uint32_t old = load_u32(stream, 4 * entry);
      const std::uint32_t forged[] = {0,           old + 1,     old - 1, old + heads,
                                      old - heads, 0xffffffffu, old * 2, static_cast<std::uint32_t>(r >> 32)};
      mutants.push_back(stream);
      store_u32(mutants.back(), 4 * entry, forged[(r >> 16) % 8]);
    }

    for_each_backend([&](const std::string&, auto exec) {
      using Exec = decltype(exec);
      ndzip::compressor<T, D, Exec> codec(exec, grid);
      for (const std::size_t length : truncations) {
        INFO("truncated to " << length << " of " << stream.size() << " bytes");
        const std::vector<unsigned char> truncated(stream.begin(), stream.begin() + length);
        CHECK(try_decompress(codec, truncated) == outcome::stream_error);
      }
      std::size_t errors = 0;
      for (std::size_t m = 0; m < mutants.size(); ++m) {
        INFO("mutant " << m);
        std::size_t consumed = 0;
        if (try_decompress(codec, mutants[m], &consumed) == outcome::decoded)
          CHECK(consumed <= mutants[m].size());
        else
          ++errors;
      }
      // Most of a stream is chunk data whose damage decodes to other values; but forged offsets
      // (when there are hypercubes) are always caught.
      if (layout.hypercubes > 0) CHECK(errors >= 16);
    });
  }
}
