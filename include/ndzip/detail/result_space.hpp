// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Where ndzip::compressor keeps the results of its synchronous calls.

#include <type_traits>

#include <Kokkos_Core.hpp>

namespace ndzip::detail {

// Where the synchronous calls have their results (stream size, decompress_outcome) written:
// host-pinned memory, which the host reads after the fence without a copy, where this Kokkos
// names it (4.x); otherwise the space's own memory, copied back.
template <class ExecSpace>
struct result_space {
#if KOKKOS_VERSION >= 40000
  using type = std::conditional_t<
      Kokkos::SpaceAccessibility<ExecSpace, Kokkos::SharedHostPinnedSpace>::accessible,
      Kokkos::SharedHostPinnedSpace, typename ExecSpace::memory_space>;
#else
  using type = typename ExecSpace::memory_space;
#endif
};

}  // namespace ndzip::detail
