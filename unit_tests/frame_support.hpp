// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A frame's bytes, Views of a frame in host memory as ndzip/frame.hpp takes them, the frames the
// library writes for a View, and the message of a frame_error, for the tests of frames
// (test_frame.cpp, test_chunked_frame.cpp, test_chunked_frame_stream.cpp, test_folding.cpp,
// test_region.cpp).

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <ndzip/ndzip.hpp>
#include <string>
#include <vector>

namespace ndzip_test {

using frame_bytes = std::vector<std::byte>;
using host_frame_view = Kokkos::View<std::byte*, Kokkos::HostSpace>;
using const_frame_view =
    Kokkos::View<const std::byte*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The message of the ndzip::frame_error that f() throws, or "" if it throws none.
template <class F>
std::string frame_error_of(F&& f) {
  try {
    f();
  } catch (const ndzip::frame_error& e) {
    return e.what();
  }
  return "";
}

// A View of a frame's bytes, as the readers take it.
inline const_frame_view view_of(const frame_bytes& frame) {
  return const_frame_view(frame.data(), frame.size());
}

// The frame compress_frame writes for `values` (version 1 to 3).
template <class Exec, class View>
frame_bytes frame_of(const Exec& exec, const View& values,
                     ndzip::codec_mode mode = ndzip::codec_mode::ndzip,
                     ndzip::folding fold = ndzip::folding::automatic) {
  host_frame_view frame("frame", ndzip::frame_size_bound(values, mode));
  const std::size_t size = ndzip::compress_frame(exec, values, frame, mode, fold);
  REQUIRE(size <= frame.size());
  return frame_bytes(frame.data(), frame.data() + size);
}

// The chunked frame compress_chunked_frame writes for `values` in slabs of `rows` rows.
template <class Exec, class View>
frame_bytes chunked_frame_of(const Exec& exec, const View& values, std::uint64_t rows,
                             ndzip::codec_mode mode = ndzip::codec_mode::ndzip) {
  host_frame_view frame("frame", ndzip::chunked_frame_size_bound(values, rows, mode));
  const std::size_t size = ndzip::compress_chunked_frame(exec, values, frame, rows, mode);
  REQUIRE(size <= frame.size());
  return frame_bytes(frame.data(), frame.data() + size);
}

}  // namespace ndzip_test
