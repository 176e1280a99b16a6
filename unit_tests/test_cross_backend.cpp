// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every enabled backend must write the same stream for the same input (and the stream the
// test-side model writes), repeatedly: parallel encoders must not depend on scheduling.

#include <cstdlib>
#include <string>

#include "backends/host/lane_ops.hpp"
#include "codec_support.hpp"
#include "core/encoder.hpp"
#include "core/streamed_kernels.hpp"

using namespace ndzip_test;

TEST_CASE_TEMPLATE("cross-backend streams are identical", C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const int noise = C::is_double ? 24 : 8;
  if (ndzip::enabled_backends().size() < 2)
    MESSAGE("only one backend is enabled: comparing it with the model and with itself");

  for (const auto& grid : cross_backend_shapes<D>()) {
    for (const auto& family : cross_backend_families()) {
      INFO("grid " << ndzip::to_string(grid) << ", family " << family);
      const auto input = generate_for<C>(family, noise, grid);
      const auto expected = model_stream<C>(input, grid);
      std::vector<std::pair<std::string, std::vector<unsigned char>>> first_streams;
      for_each_backend([&](const std::string& backend, auto exec) {
        using Exec = decltype(exec);
        ndzip::compressor<T, D, Exec> codec(exec, grid);
        for (int repeat = 0; repeat < 3; ++repeat) {
          CAPTURE(repeat);
          const auto stream = compress_with(codec, input);
          CHECK(mismatch(stream, expected) == "");
          if (repeat == 0) first_streams.emplace_back(backend, stream);
        }
        std::size_t consumed = 0;
        CHECK(mismatch(decompress_with(codec, expected, &consumed), input) == "");
        CHECK(consumed == expected.size());
      });
      // Not a structured binding: doctest's INFO captures in a lambda, which C++17 forbids.
      for (const auto& backend_stream : first_streams) {
        INFO(backend_stream.first << " vs " << first_streams.front().first);
        CHECK(mismatch(backend_stream.second, first_streams.front().second) == "");
      }
    }
  }
}

// GPUs give the few teams of a small grid more lane groups each (core/encoder.hpp, launch):
// the grids above take that shape there, so these take the other, the one with launch bounds
// (more hypercube teams than an H200 holds at once at sixteen groups: 528).
TEST_CASE_TEMPLATE("cross-backend streams are identical on grids of thousands of hypercubes", C,
                   ndzip_test::f32_1d, ndzip_test::f64_3d) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const auto grid = D == 1 ? make_extent<D>({std::size_t{2048} * 4096 + 123, 1, 1})
                           : make_extent<D>({167, 161, 163});
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  std::vector<unsigned char> first;
  std::string first_backend;
  for_each_backend([&](const std::string& backend, auto exec) {
    using Exec = decltype(exec);
    ndzip::compressor<T, D, Exec> codec(exec, grid);
    const auto stream = compress_with(codec, input);
    if (first.empty()) {
      first = stream;
      first_backend = backend;
    }
    INFO(backend << " vs " << first_backend);
    CHECK(mismatch(stream, first) == "");
    std::size_t consumed = 0;
    CHECK(mismatch(decompress_with(codec, stream, &consumed), input) == "");
    CHECK(consumed == stream.size());
  });
}

// The dispatch to the streamed kernels takes no empty grid and, once it takes a grid, every larger
// one: the GPU test below searches for the smallest grid it takes.
TEST_CASE_TEMPLATE("the streamed kernels' dispatch grows with the grid", C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  for (const auto role : {ndzip::backend::kernel_role::encode, ndzip::backend::kernel_role::decode})
    for (const std::uint64_t groups : {1, 32, 8448, 1 << 20}) {
      CHECK_FALSE(ndzip::core::streamed_kernels_win<T, D>(role, 0, groups));
      bool taken = false;
      for (std::uint64_t hypercubes = 1; hypercubes <= 8 * groups;
           hypercubes += 1 + hypercubes / 64) {
        const bool now = ndzip::core::streamed_kernels_win<T, D>(role, hypercubes, groups);
        INFO(groups << " groups, " << hypercubes << " hypercubes");
        CHECK((now || !taken));
        taken = now;
      }
    }
}

// GPUs take the streamed kernels (core/streamed_kernels.hpp) for grids of many hypercubes where
// streamed_kernels_win says so: on every GPU backend, for each profile and direction that has
// them, the smallest grid that takes them (with a border), against the default host space's
// stream.
TEST_CASE_TEMPLATE("cross-backend streams are identical where GPUs take the streamed kernels", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  using ndzip::backend::kernel_role;
  int gpu_backends = 0;
  for_each_backend([&](const std::string& backend, auto exec) {
    using Exec = decltype(exec);
    if constexpr (!Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
      ++gpu_backends;
      const auto groups = static_cast<std::uint64_t>(exec.concurrency()) / 32;
      for (const auto role : {kernel_role::encode, kernel_role::decode}) {
        // The rule grows with the hypercube count: the smallest count it takes, up to 4 groups.
        std::uint64_t low = 0, high = 4 * groups;  // low: not taken; high: taken (if at all)
        if (!ndzip::core::streamed_kernels_win<T, D>(role, high, groups)) continue;
        while (high - low > 1) {
          const std::uint64_t middle = low + (high - low) / 2;
          if (ndzip::core::streamed_kernels_win<T, D>(role, middle, groups))
            high = middle;
          else
            low = middle;
        }
        // At least `high` hypercubes, a partial one along every axis.
        const std::size_t side = ndzip::profile<T, D>::side_length;
        const auto grid =
            D == 1   ? make_extent<D>({high * side + 123, 1, 1})
            : D == 2 ? make_extent<D>({(high + 63) / 64 * side + 7, 64 * side + 5, 1})
                     : make_extent<D>({(high + 15) / 16 * side + 3, 16 * side + 5, side + 7});
        const ndzip::stream_layout<T, D> layout(grid);
        INFO(backend << (role == kernel_role::encode ? " compressing " : " decompressing ")
                     << layout.hypercube_count << " hypercubes");
        REQUIRE(ndzip::core::streamed_kernels_win<T, D>(role, layout.hypercube_count, groups));
        const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
        ndzip::compressor<T, D, Kokkos::DefaultHostExecutionSpace> host(
            Kokkos::DefaultHostExecutionSpace{}, grid);
        const auto expected = compress_with(host, input);
        ndzip::compressor<T, D, Exec> codec(exec, grid);
        if (role == kernel_role::encode) {
          CHECK(mismatch(compress_with(codec, input), expected) == "");
        } else {
          std::size_t consumed = 0;
          CHECK(mismatch(decompress_with(codec, expected, &consumed), input) == "");
          CHECK(consumed == expected.size());
        }
      }
    }
  });
  if (gpu_backends == 0) MESSAGE("no GPU backend enabled: the streamed kernels run on GPUs only");
}

// Host backends running several threads give each single-pass team a run of consecutive
// hypercubes, staged in team scratch before its look-back (core/encoder.hpp,
// hypercubes_per_team): runs of 2, 5 and 32 with a shorter last one and a border behind. CTest
// runs each case in a process of its own, where the team scratch is only what these kernels
// ask for: the first version took scratch once per hypercube of a run, overran it and crashed.
TEST_CASE_TEMPLATE("cross-backend streams are identical when host teams encode runs of hypercubes",
                   C, ndzip_test::f32_3d, ndzip_test::f64_2d) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  constexpr std::size_t side = ndzip::profile<T, D>::side_length;
  for (const std::size_t run : {2, 5, 32}) {
    for_each_backend([&](const std::string& backend, auto exec) {
      using Exec = decltype(exec);
      if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                               typename Exec::memory_space>::accessible) {
        const auto threads = static_cast<std::size_t>(exec.concurrency());
        const std::size_t hypercubes = 8 * threads * run + 1;
        INFO("run " << run << ", " << threads << " threads, " << hypercubes << " hypercubes");
        if (threads > 1)
          CHECK(ndzip::core::hypercubes_per_team<ndzip::backend::host_lane_ops, D>(hypercubes,
                                                                                   threads) == run);
        else
          MESSAGE(backend << " runs one thread: its teams encode one hypercube each");
        const auto grid = D == 2 ? make_extent<D>({side + 3, hypercubes * side + 7, 1})
                                 : make_extent<D>({side, side + 3, hypercubes * side + 7});
        const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
        const auto expected = model_stream<C>(input, grid);
        ndzip::compressor<T, D, Exec> codec(exec, grid);
        CHECK(mismatch(compress_with(codec, input), expected) == "");
        std::size_t consumed = 0;
        CHECK(mismatch(decompress_with(codec, expected, &consumed), input) == "");
        CHECK(consumed == expected.size());
      }
    });
  }
}

// Which clone of the host kernels runs (backends/host/isa.hpp). The CTest entries host-isa-*
// run this and the stream comparisons under NDZIP_HOST_ISA, so that every clone the machine
// can run is checked against the reference vectors, the model and the other backends.
TEST_CASE("host instruction set: the best clone the CPU runs, capped by NDZIP_HOST_ISA") {
  const std::string isa = ndzip::host_instruction_set();
  const char* cap = std::getenv("NDZIP_HOST_ISA");
  const std::string capped = cap ? cap : "";
  CHECK((isa == "baseline" || isa == "avx2" || isa == "avx512" || isa == "avx512_gfni"));
  if (capped == "baseline") {
    CHECK(isa == "baseline");
  } else if (capped == "avx2") {
    CHECK((isa == "baseline" || isa == "avx2"));
  } else if (capped == "avx512") {
    CHECK(isa != "avx512_gfni");
  }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
  // Built with the clones: the CPU's own instruction set is used unless capped lower.
  if (capped != "baseline" && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2"))
    CHECK(isa != "baseline");
  if (capped.empty() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("gfni"))
    CHECK(isa == "avx512_gfni");
#endif
}
