// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A frame's bytes, and Views of a frame in host memory as ndzip/frame.hpp takes them, for the
// tests of frames (test_frame.cpp, test_folding.cpp).

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <vector>

namespace ndzip_test {

using frame_bytes = std::vector<std::byte>;
using host_frame_view = Kokkos::View<std::byte*, Kokkos::HostSpace>;
using const_frame_view =
    Kokkos::View<const std::byte*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

}  // namespace ndzip_test
