// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compresses a smooth 3-D field on Kokkos' default execution space with ndzip-kokkos, restores it
// into a second View, checks that every value came back bit for bit, and prints the ratio.
// Usage: ndzip-downstream-example [N]  (an N^3 field of doubles, default 96).

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ndzip/ndzip.hpp>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const int n = argc > 1 ? std::atoi(argv[1]) : 96;
  if (n < 1) {
    std::fprintf(stderr, "usage: %s [N], N >= 1\n", argv[0]);
    return 2;
  }
  using exec_space = Kokkos::DefaultExecutionSpace;
  const exec_space exec;

  Kokkos::View<double***> field("field", n, n, n);
  Kokkos::parallel_for(
      "fill", Kokkos::MDRangePolicy<exec_space, Kokkos::Rank<3>>(exec, {0, 0, 0}, {n, n, n}),
      KOKKOS_LAMBDA(int z, int y, int x) {
        field(z, y, x) = std::sin(0.05 * x) * std::cos(0.03 * y) + 0.001 * z;
      });

  Kokkos::View<std::byte*> stream("stream", ndzip::compressed_size_bound(field));
  const std::size_t bytes = ndzip::compress(exec, field, stream);

  Kokkos::View<double***> restored("restored", n, n, n);
  ndzip::decompress(exec, Kokkos::subview(stream, std::make_pair(std::size_t{0}, bytes)),
                    restored);

  // Bitwise comparison: lossless means the same bits, not merely equal values (NaN, -0.0).
  int differing = 0;
  Kokkos::parallel_reduce(
      "compare", Kokkos::MDRangePolicy<exec_space, Kokkos::Rank<3>>(exec, {0, 0, 0}, {n, n, n}),
      KOKKOS_LAMBDA(int z, int y, int x, int& count) {
        std::uint64_t a, b;
        std::memcpy(&a, &field(z, y, x), sizeof a);
        std::memcpy(&b, &restored(z, y, x), sizeof b);
        count += a != b;
      },
      differing);

  const double array_bytes = static_cast<double>(field.size() * sizeof(double));
  std::printf("ndzip-kokkos %s on %s: %d^3 doubles, %zu -> %zu bytes (%.3fx smaller), %s\n",
              ndzip::version_string, exec_space::name(), n, field.size() * sizeof(double), bytes,
              array_bytes / static_cast<double>(bytes), differing ? "MISMATCH" : "bit-exact");
  return differing ? 1 : 0;
}
