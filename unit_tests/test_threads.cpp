// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Several host threads using the library at once, on every backend: distinct compressors, and
// one compressor shared by all threads, must give the reference streams and exact round trips
// (Kokkos 3.x Serial crashed or gave wrong streams here: its team scratch is one global
// buffer, which the library now guards with a lock). With Kokkos 3.x the
// OpenMP backend refuses threads other than the one that initialised Kokkos, with a clear error.
// The same for a batch compressor shared by several threads.

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "codec_support.hpp"

using namespace ndzip_test;

namespace {

constexpr int thread_count = 4;
constexpr int rounds = 3;

// Kokkos 3.x OpenMP runs work only on the thread that called Kokkos::initialize.
bool only_the_initial_thread(const std::string& backend) {
  return KOKKOS_VERSION < 40000 && backend == "openmp";
}

// Runs body(t) on thread_count threads; returns what each threw ("" where nothing).
template <class Body>
std::vector<std::string> on_threads(Body body) {
  std::vector<std::string> failures(thread_count);
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      try {
        body(t);
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  for (auto& thread : threads) thread.join();
  return failures;
}

// Inputs that differ per thread, so that streams mixed up between threads are seen, and the
// model's streams for them.
template <class C>
struct thread_inputs {
  ndzip::extent<C::dims> grid = make_extent<C::dims>({C::dims == 1 ? 70000 : 40, 50, 37});
  std::vector<std::vector<typename C::bits_type>> values;
  std::vector<std::vector<unsigned char>> streams;

  thread_inputs() {
    for (int t = 0; t < thread_count; ++t) {
      values.push_back(generate_for<C>(t % 2 ? "smooth" : "checker", 4 + 2 * t, grid));
      streams.push_back(model_stream<C>(values.back(), grid));
    }
  }
};

// What one thread works on, allocated on the main thread: with Kokkos 3.x and OpenMP enabled,
// Kokkos refuses to initialise a View on any other thread, whatever the backend.
template <class T, int D, class Exec>
struct workspace {
  using space = typename Exec::memory_space;
  using bits_type = typename ndzip::profile<T, D>::bits_type;
  grid_view<T, D, Kokkos::LayoutRight, space> values, decoded;
  Kokkos::View<unsigned char*, space> stream;
  typename Kokkos::View<unsigned char*, space>::HostMirror stream_host;
  typename grid_view<T, D, Kokkos::LayoutRight, space>::HostMirror decoded_host;

  workspace(const std::vector<bits_type>& input, const ndzip::extent<D>& grid)
      : values(Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grid))),
        decoded(make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("decoded", grid)),
        // Room for either mode's stream.
        stream("stream", ndzip::compressed_size_bound<T>(grid) + ndzip::high_ratio_header_bytes),
        stream_host(Kokkos::create_mirror_view(stream)),
        decoded_host(Kokkos::create_mirror_view(decoded)) {}
};

template <class Exec, class C>
std::vector<workspace<typename C::value_type, C::dims, Exec>> workspaces(
    const thread_inputs<C>& in) {
  std::vector<workspace<typename C::value_type, C::dims, Exec>> work;
  for (int t = 0; t < thread_count; ++t) work.emplace_back(in.values[t], in.grid);
  return work;
}

// One thread's work: `rounds` compressions and decompressions with `codec`, checked against
// the model's stream; "" or what went wrong (doctest assertions stay on the main thread).
template <class T, int D, class Exec, class Bits>
std::string round_trips(ndzip::compressor<T, D, Exec>& codec, workspace<T, D, Exec>& work,
                        const std::vector<Bits>& input, const std::vector<unsigned char>& expected) {
  const auto& exec = codec.execution_space_instance();
  for (int r = 0; r < rounds; ++r) {
    const std::size_t size = codec.compress(work.values, work.stream);
    exec.fence();
    Kokkos::deep_copy(work.stream_host, work.stream);  // nothing to copy where it is host memory
    if (size != expected.size() || std::memcmp(work.stream_host.data(), expected.data(), size))
      return "round " + std::to_string(r) + ": not the reference stream";
    if (codec.decompress(Kokkos::subview(work.stream, std::make_pair(std::size_t{0}, size)),
                         work.decoded) != size)
      return "round " + std::to_string(r) + ": wrong byte count consumed";
    Kokkos::deep_copy(work.decoded_host, work.decoded);
    if (std::memcmp(work.decoded_host.data(), input.data(), input.size() * sizeof(Bits)))
      return "round " + std::to_string(r) + ": values differ after the round trip";
  }
  return "";
}

void check_outcomes(const std::string& backend, const std::vector<std::string>& failures) {
  for (int t = 0; t < thread_count; ++t) {
    INFO("thread " << t);
    if (only_the_initial_thread(backend))
      CHECK(failures[t].find("thread that called Kokkos::initialize") != std::string::npos);
    else
      CHECK(failures[t] == "");
  }
}

}  // namespace

TEST_CASE_TEMPLATE("threads: distinct compressors on several host threads", C, ndzip_test::f32_3d,
                   ndzip_test::f64_2d, ndzip_test::f32_1d) {
  using T = typename C::value_type;
  const thread_inputs<C> in;
  for_each_backend([&](const std::string& name, auto exec) {
    using Exec = decltype(exec);
    auto work = workspaces<Exec>(in);
    check_outcomes(name, on_threads([&](int t) {
                     ndzip::compressor<T, C::dims, Exec> codec(exec, in.grid);
                     const auto failure = round_trips(codec, work[t], in.values[t], in.streams[t]);
                     if (!failure.empty()) throw std::runtime_error(failure);
                   }));
  });
}

TEST_CASE_TEMPLATE("threads: one compressor shared by several host threads", C, ndzip_test::f32_3d,
                   ndzip_test::f64_1d) {
  using T = typename C::value_type;
  const thread_inputs<C> in;
  for_each_backend([&](const std::string& name, auto exec) {
    using Exec = decltype(exec);
    auto work = workspaces<Exec>(in);
    // Built on the initial thread: with Kokkos 3 OpenMP the others are refused at their call.
    ndzip::compressor<T, C::dims, Exec> shared(exec, in.grid);
    check_outcomes(name, on_threads([&](int t) {
                     const auto failure = round_trips(shared, work[t], in.values[t], in.streams[t]);
                     if (!failure.empty()) throw std::runtime_error(failure);
                   }));
  });
}

// The high-ratio mode keeps scratch and state of its own between a call's kernels: calls from
// several threads must not mix them up.
TEST_CASE_TEMPLATE("threads: one high-ratio compressor shared by several host threads", C,
                   ndzip_test::f32_3d, ndzip_test::f64_1d) {
  using T = typename C::value_type;
  const thread_inputs<C> in;
  for_each_backend([&](const std::string& name, auto exec) {
    using Exec = decltype(exec);
    auto work = workspaces<Exec>(in);
    ndzip::compressor<T, C::dims, Exec> shared(exec, in.grid, ndzip::codec_mode::high_ratio);
    // The expected streams, made one at a time on this thread.
    std::vector<std::vector<unsigned char>> expected;
    for (int t = 0; t < thread_count; ++t) {
      const std::size_t size = shared.compress(work[t].values, work[t].stream);
      exec.fence();
      Kokkos::deep_copy(work[t].stream_host, work[t].stream);
      expected.emplace_back(work[t].stream_host.data(), work[t].stream_host.data() + size);
    }
    check_outcomes(name, on_threads([&](int t) {
                     const auto failure = round_trips(shared, work[t], in.values[t], expected[t]);
                     if (!failure.empty()) throw std::runtime_error(failure);
                   }));
  });
}

TEST_CASE("threads: a compressor moved to another thread keeps working") {
  using C = f32_3d;
  const auto grid = make_extent<3>({40, 50, 37});
  const auto input = generate_for<C>("smooth", 8, grid);
  const auto expected = model_stream<C>(input, grid);
  for_each_backend([&](const std::string& name, auto exec) {
    using Exec = decltype(exec);
    workspace<float, 3, Exec> work(input, grid);
    ndzip::compressor<float, 3, Exec> codec(exec, grid);
    CHECK(round_trips(codec, work, input, expected) == "");
    auto moved = std::make_unique<ndzip::compressor<float, 3, Exec>>(std::move(codec));
    std::string failure;
    std::thread([&] {
      try {
        failure = round_trips(*moved, work, input, expected);
      } catch (const std::exception& e) {
        failure = e.what();
      }
    }).join();
    if (only_the_initial_thread(name))
      CHECK(failure.find("thread that called Kokkos::initialize") != std::string::npos);
    else
      CHECK(failure == "");
  });
}

TEST_CASE_TEMPLATE("threads: one batch compressor shared by several host threads", C,
                   ndzip_test::f32_3d, ndzip_test::f64_1d) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const thread_inputs<C> in;
  for_each_backend([&](const std::string& name, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    using items_view = Kokkos::View<ndzip::batch_item<T>*, space>;
    using outcomes_view = Kokkos::View<ndzip::decompress_outcome*, space>;
    auto work = workspaces<Exec>(in);
    // A batch of one grid: the threads share its scratch (tickets, published words, outcome
    // words). Views are made and filled on the initial thread (Kokkos 3 with OpenMP refuses
    // others), so that a thread's first Kokkos call is the batch's.
    ndzip::batch_compressor<T, D, Exec> shared(exec, {in.grid});
    std::vector<items_view> packing, unpacking;
    std::vector<typename items_view::HostMirror> sizes;
    std::vector<outcomes_view> outcomes;
    std::vector<typename outcomes_view::HostMirror> outcomes_host;
    for (int t = 0; t < thread_count; ++t) {
      auto* stream = reinterpret_cast<std::byte*>(work[t].stream.data());
      packing.emplace_back("packing", 1);
      unpacking.emplace_back("unpacking", 1);
      sizes.push_back(Kokkos::create_mirror(packing[t]));  // a copy even in host memory
      sizes[t](0) = {work[t].values.data(), stream, 0};
      Kokkos::deep_copy(packing[t], sizes[t]);
      sizes[t](0) = {work[t].decoded.data(), stream, in.streams[t].size()};
      Kokkos::deep_copy(unpacking[t], sizes[t]);
      outcomes.emplace_back("outcomes", 1);
      outcomes_host.push_back(Kokkos::create_mirror_view(outcomes[t]));
    }
    check_outcomes(name, on_threads([&](int t) {
                     auto& w = work[t];
                     const auto& expected = in.streams[t];
                     for (int r = 0; r < rounds; ++r) {
                       shared.compress_async(packing[t]);
                       exec.fence();
                       Kokkos::deep_copy(sizes[t], packing[t]);
                       Kokkos::deep_copy(w.stream_host, w.stream);
                       if (sizes[t](0).stream_bytes != expected.size() ||
                           std::memcmp(w.stream_host.data(), expected.data(), expected.size()))
                         throw std::runtime_error("not the reference stream");
                       shared.decompress_async(unpacking[t], outcomes[t]);
                       exec.fence();
                       Kokkos::deep_copy(outcomes_host[t], outcomes[t]);
                       Kokkos::deep_copy(w.decoded_host, w.decoded);
                       if (shared.check_outcome(0, outcomes_host[t](0)) != expected.size() ||
                           std::memcmp(w.decoded_host.data(), in.values[t].data(),
                                       in.values[t].size() * sizeof(in.values[t][0])))
                         throw std::runtime_error("values differ after the round trip");
                     }
                   }));
  });
}
