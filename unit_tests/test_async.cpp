// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The asynchronous API: compress_async and decompress_async give the synchronous calls' streams,
// values and errors; calls queued back to back on one compressor, with one fence at the end,
// give every result; and an asynchronous call fences nothing, allocates nothing and copies
// nothing (Kokkos' tool callbacks count them).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "async_support.hpp"
#include "codec_support.hpp"

using namespace ndzip_test;

TEST_CASE_TEMPLATE("async: streams, sizes and values are those of the synchronous calls", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    for (const auto& grid : async_grids<D>()) {
      INFO("grid " << ndzip::to_string(grid));
      const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
      const auto expected = model_stream<C>(input, grid);
      ndzip::compressor<T, D, Exec> codec(exec, grid);
      const auto values =
          Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
      auto stream = device_bytes<space>({}, codec.size_bound(), 0xa5);
      Kokkos::View<std::uint64_t, space> size("size");
      codec.compress_async(values, stream, size);
      exec.fence();
      const auto size_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, size);
      REQUIRE(size_host() == expected.size());
      CHECK(mismatch(host_bytes(stream, size_host()), expected) == "");

      // Into a stream View with room to spare: the bytes consumed are the stream's.
      auto longer = device_bytes<space>(expected, 64, 0x5a);
      auto decoded = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("decoded", grid);
      Kokkos::View<ndzip::decompress_outcome, space> outcome("outcome");
      codec.decompress_async(longer, decoded, outcome);
      exec.fence();
      const auto outcome_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcome);
      CHECK(codec.check_outcome(outcome_host()) == expected.size());
      CHECK(outcome_host().given_bytes == expected.size() + 64);
      CHECK(mismatch(bits_of<Bits>(decoded), input) == "");

#if KOKKOS_VERSION >= 40000
      // The stream size in host-pinned memory, read on the host after the fence without a copy.
      Kokkos::View<std::uint64_t, Kokkos::SharedHostPinnedSpace> pinned_size("pinned size");
      codec.compress_async(values, stream, pinned_size);
      exec.fence();
      CHECK(pinned_size() == expected.size());
      // The outcome too: the decoder's teams combine their findings in scratch of their own and
      // write the outcome with plain stores.
      Kokkos::View<ndzip::decompress_outcome, Kokkos::SharedHostPinnedSpace> pinned_outcome(
          "pinned outcome");
      auto decoded_again = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("decoded", grid);
      codec.decompress_async(longer, decoded_again, pinned_outcome);
      exec.fence();
      CHECK(codec.check_outcome(pinned_outcome()) == expected.size());
      CHECK(mismatch(bits_of<Bits>(decoded_again), input) == "");
#endif
    }
  });
}

TEST_CASE_TEMPLATE("async: calls queued back to back on one compressor all complete", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = async_grids<D>().front();
  const std::vector<std::string> families = {"smooth", "checker", "random"};
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    using values_view = grid_view<T, D, Kokkos::LayoutRight, space>;
    ndzip::compressor<T, D, Exec> codec(exec, grid);
    std::vector<std::vector<Bits>> inputs;
    std::vector<values_view> values, decoded;
    std::vector<Kokkos::View<unsigned char*, space>> streams;
    Kokkos::View<std::uint64_t*, space> sizes("sizes", families.size());
    Kokkos::View<ndzip::decompress_outcome*, space> outcomes("outcomes", families.size());
    for (const auto& family : families) {
      inputs.push_back(generate_for<C>(family, C::is_double ? 24 : 8, grid));
      values.push_back(
          Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(inputs.back(), grid)));
      decoded.push_back(make_view<values_view>("decoded", grid));
      streams.push_back(device_bytes<space>({}, codec.size_bound(), 0xa5));
    }
    // Every compression, then every decompression, with no fence in between: each call reuses
    // the compressor's scratch while the ones before it may still be queued.
    for (std::size_t i = 0; i < families.size(); ++i)
      codec.compress_async(values[i], streams[i], Kokkos::subview(sizes, i));
    for (std::size_t i = 0; i < families.size(); ++i)
      codec.decompress_async(streams[i], decoded[i], Kokkos::subview(outcomes, i));
    exec.fence();
    const auto sizes_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sizes);
    const auto outcomes_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcomes);
    for (std::size_t i = 0; i < families.size(); ++i) {
      INFO("input " << families[i]);
      const auto expected = model_stream<C>(inputs[i], grid);
      REQUIRE(sizes_host(i) == expected.size());
      CHECK(mismatch(host_bytes(streams[i], sizes_host(i)), expected) == "");
      CHECK(codec.check_outcome(outcomes_host(i)) == expected.size());
      CHECK(mismatch(bits_of<Bits>(decoded[i]), inputs[i]) == "");
    }
  });
}

TEST_CASE_TEMPLATE("async: forged streams give the synchronous call's errors", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const auto grid = async_grids<D>().front();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto stream = model_stream<C>(input, grid);
  const auto forgeries = forged_streams(stream, sizeof(T));
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    ndzip::compressor<T, D, Exec> codec(exec, grid);
    for (const auto& [what, bytes] : forgeries) {
      const std::string name = what;
      INFO("forgery: " << name);
      std::string sync_message;
      try {
        decompress_with(codec, bytes);
      } catch (const ndzip::stream_error& e) {
        sync_message = e.what();
      }
      REQUIRE_FALSE(sync_message.empty());
      const auto view = device_bytes<space>(bytes);
      auto decoded = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("decoded", grid);
      Kokkos::View<ndzip::decompress_outcome, space> outcome("outcome");
      codec.decompress_async(view, decoded, outcome);
      exec.fence();
      const auto outcome_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcome);
      std::string async_message;
      try {
        codec.check_outcome(outcome_host());
      } catch (const ndzip::stream_error& e) {
        async_message = e.what();
      }
      CHECK(async_message == sync_message);
    }
    // A failure leaves nothing behind in the compressor's scratch: the genuine stream decodes.
    CHECK(mismatch(decompress_with(codec, stream), input) == "");
    // What the sizes alone show is thrown before anything is queued.
    const auto short_view = device_bytes<space>(std::vector<unsigned char>(stream.begin(),
                                                                           stream.begin() + 4));
    auto decoded = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("decoded", grid);
    Kokkos::View<ndzip::decompress_outcome, space> outcome("outcome");
    CHECK_THROWS_AS(codec.decompress_async(short_view, decoded, outcome), ndzip::stream_error);
    const auto values =
        Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
    auto small = device_bytes<space>({}, codec.size_bound() - 1);
    Kokkos::View<std::uint64_t, space> size("size");
    CHECK_THROWS_AS(codec.compress_async(values, small, size), ndzip::capacity_error);
  });
}

TEST_CASE_TEMPLATE("async: calls fence nothing, allocate nothing and copy nothing", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = async_grids<D>().front();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    ndzip::compressor<T, D, Exec> codec(exec, grid);
    const auto values =
        Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid));
    auto stream = device_bytes<space>({}, codec.size_bound());
    auto decoded = make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("decoded", grid);
    Kokkos::View<std::uint64_t, space> size("size");
    Kokkos::View<ndzip::decompress_outcome, space> outcome("outcome");
    // The compressor's first compression allocates the encoder's scratch.
    codec.compress_async(values, stream, size);
    exec.fence();
    // The counters see what Kokkos reports: an allocation, a copy, and the synchronous calls'
    // fences must be counted (otherwise zero below would prove nothing). Kokkos 3 does not
    // report a fence of an execution-space instance to tools; there only allocations and copies
    // are checked.
    const bool instance_fences_reported = [&] {
      const tool_counter counter;
      exec.fence();
      return counter.since_start().fences > 0;
    }();
    {
      const tool_counter counter;
      const Kokkos::View<int*, space> probe("probe", 1);
      const auto host_probe = Kokkos::create_mirror(probe);
      Kokkos::deep_copy(host_probe, probe);
      CHECK(counter.since_start().allocations == 2);
      CHECK(counter.since_start().deep_copies > 0);
    }
    if (!instance_fences_reported)
      MESSAGE("this Kokkos does not report instance fences to tools: fences not counted");
    {
      const tool_counter counter;
      const std::size_t stream_size = codec.compress(values, stream);
      codec.decompress(stream, decoded);
      const auto sync = counter.since_start();
      CHECK(stream_size > 0);
      if (instance_fences_reported) CHECK(sync.fences > 0);
    }
    tool_counts async;
    {
      const tool_counter counter;
      codec.compress_async(values, stream, size);
      codec.decompress_async(stream, decoded, outcome);
      async = counter.since_start();
    }
    INFO("reported:" << async.what);
    CHECK(async.fences == 0);
    CHECK(async.allocations == 0);
    CHECK(async.deep_copies == 0);
    exec.fence();
    const auto outcome_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcome);
    CHECK(codec.check_outcome(outcome_host()) > 0);
    CHECK(mismatch(bits_of<Bits>(decoded), input) == "");
  });
}
