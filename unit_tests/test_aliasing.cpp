// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Memory aliasing. Every entry point refuses values and stream buffers that overlap, before it
// writes anything; and a stream whose memory changes while it is decoded (here: decoded into a
// second mapping of the same pages, as with a buffer shared with another process) may give
// other values or a stream_error, but never makes the decoder read outside the stream.

#include <algorithm>
#include <stdexcept>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "codec_support.hpp"

using namespace ndzip_test;

namespace {

template <int D>
ndzip::extent<D> aliasing_grid() {
  if constexpr (D == 1)
    return ndzip::extent<1>(4096 * 3 + 77);
  else if constexpr (D == 2)
    return ndzip::extent<2>(130, 67);
  else
    return ndzip::extent<3>(40, 50, 37);  // the audit's reproduction
}

template <class Space>
using unmanaged_bytes = Kokkos::View<std::byte*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

template <class Space>
unmanaged_bytes<Space> bytes_at(void* at, std::size_t size) {
  return unmanaged_bytes<Space>(static_cast<std::byte*>(at), size);
}

}  // namespace

TEST_CASE_TEMPLATE("aliasing: overlapping values and stream are refused before anything is written",
                   C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = aliasing_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto expected = model_stream<C>(input, grid);
  const std::size_t values_bytes = grid.size() * sizeof(T);

  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    ndzip::compressor<T, D, Exec> codec(exec, grid);
    const std::size_t bound = codec.size_bound();
    // One buffer with room for a stream and the values side by side; the cases place them at
    // word offsets that overlap fully, partly from either side, or not at all.
    const std::size_t words = (bound + values_bytes) / sizeof(T) + 2;
    Kokkos::View<Bits*, space> buffer("buffer", words);
    std::byte* base = reinterpret_cast<std::byte*>(buffer.data());
    const std::size_t values_words = values_bytes / sizeof(T);
    struct placement {
      const char* what;
      std::size_t stream_word, values_word;
    };
    const placement overlapping[] = {
        {"values on the stream", 0, 0},
        {"values starting inside the stream", 0, expected.size() / sizeof(T) - 1},
        {"stream starting inside the values", 1, 0},
        {"stream starting in the last word of the values", values_words - 1, 0},
    };
    for (const auto& p : overlapping) {
      INFO(p.what);
      auto stream = bytes_at<space>(base + p.stream_word * sizeof(T), bound);
      auto values = grid_at<T, D, space>(base + p.values_word * sizeof(T), grid);
      Kokkos::deep_copy(buffer, Bits{0x5a});
      const auto before = bits_of<Bits>(buffer);
      CHECK_THROWS_WITH_AS(codec.compress(values, stream), doctest::Contains("overlap"),
                           std::invalid_argument);
      CHECK_THROWS_AS(codec.compress_raw(values.data(), stream.data(), stream.size()),
                      std::invalid_argument);
      CHECK_THROWS_AS(ndzip::compress(exec, values, stream), std::invalid_argument);
      exec.fence();
      CHECK(mismatch(bits_of<Bits>(buffer), before) == "");

      // The stream in place, then decoded onto memory that overlaps it.
      Kokkos::deep_copy(Kokkos::subview(stream, std::make_pair(std::size_t{0}, expected.size())),
                        Kokkos::View<const std::byte*, Kokkos::HostSpace,
                                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                            reinterpret_cast<const std::byte*>(expected.data()),
                            expected.size()));
      const auto placed = bits_of<Bits>(buffer);
      const auto exact = Kokkos::subview(stream, std::make_pair(std::size_t{0}, expected.size()));
      CHECK_THROWS_WITH_AS(codec.decompress(exact, values), doctest::Contains("overlap"),
                           std::invalid_argument);
      CHECK_THROWS_AS(codec.decompress_raw(exact.data(), exact.size(), values.data()),
                      std::invalid_argument);
      CHECK_THROWS_AS(ndzip::decompress(exec, exact, values), std::invalid_argument);
      exec.fence();
      CHECK(mismatch(bits_of<Bits>(buffer), placed) == "");
    }

    // Side by side in one buffer is fine: the stream's whole View ends where the values begin.
    auto stream = bytes_at<space>(base, bound);
    auto values = grid_at<T, D, space>(base + (bound + sizeof(T) - 1) / sizeof(T) * sizeof(T), grid);
    Kokkos::deep_copy(values, grid_at<T, D, Kokkos::HostSpace>(
                                  const_cast<Bits*>(input.data()), grid));
    const std::size_t size = codec.compress(values, stream);
    exec.fence();
    CHECK(mismatch(host_bytes(stream, size), expected) == "");
    Kokkos::deep_copy(values, T{0});
    CHECK(codec.decompress(stream, values) == size);
    CHECK(mismatch(bits_of<Bits>(values), input) == "");
  });
}

#if defined(__linux__)
// The audit's reproduction, with the two buffers made distinct addresses of the same memory so
// that the overlap check cannot see it: decoding writes values over the stream while later
// hypercubes are still to be read. Guard pages around the stream's mapping turn any read
// outside it into a crash. Host backends only (device memory cannot be mapped like this).
TEST_CASE_TEMPLATE("aliasing: a stream that changes while it is decoded is never read out of bounds",
                   C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const auto grid = aliasing_grid<D>();
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto expected = model_stream<C>(input, grid);

  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t bytes =
      (std::max(ndzip::compressed_size_bound<T>(grid), grid.size() * sizeof(T)) + page - 1) /
      page * page;
  const int fd = ::memfd_create("ndzip-aliasing-test", 0);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(bytes)) == 0);
  // [guard page][stream mapping][guard page], and a second mapping of the same memory.
  auto* region = static_cast<std::byte*>(
      ::mmap(nullptr, bytes + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(region != MAP_FAILED);
  void* stream_memory =
      ::mmap(region + page, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
  void* values_memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  REQUIRE(stream_memory != MAP_FAILED);
  REQUIRE(values_memory != MAP_FAILED);

  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, space>::accessible) {
      ndzip::compressor<T, D, Exec> codec(exec, grid);
      std::memcpy(stream_memory, expected.data(), expected.size());
      const auto stream = bytes_at<space>(stream_memory, expected.size());
      const auto values = grid_at<T, D, space>(values_memory, grid);
      // Whatever the values: a stream_error or the whole stream consumed, never a crash.
      std::size_t consumed = 0;
      bool rejected = false;
      try {
        consumed = codec.decompress(stream, values);
      } catch (const ndzip::stream_error&) {
        rejected = true;
      }
      CHECK((rejected || consumed == expected.size()));
      // The same compressor still works on memory of its own.
      CHECK(mismatch(decompress_with(codec, expected), input) == "");
    }
  });
  ::munmap(values_memory, bytes);
  ::munmap(region, bytes + 2 * page);
  ::close(fd);
}
#endif
