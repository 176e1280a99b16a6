// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A frame's bytes, Views of a frame in host memory as ndzip/frame.hpp takes them, and the
// message of a frame_error, for the tests of frames (test_frame.cpp, test_chunked_frame.cpp,
// test_folding.cpp).

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <ndzip/error.hpp>
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

}  // namespace ndzip_test
