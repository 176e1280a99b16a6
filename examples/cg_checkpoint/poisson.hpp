// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The 3-D Poisson problem of the example: the 7-point Laplacian of an n x n x n grid with zero
// Dirichlet boundaries, as a KokkosSparse::CrsMatrix (row z * n^2 + y * n + x), and a smooth
// right-hand side.

#include <Kokkos_Core.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <cmath>

namespace cg_example {

template <class Device>
using poisson_matrix = KokkosSparse::CrsMatrix<double, int, Device, void, int>;

template <class Device>
poisson_matrix<Device> laplacian_7pt(int n) {
  using exec = typename Device::execution_space;
  const int rows = n * n * n;
  Kokkos::View<int*, Device> row_map("row_map", rows + 1);
  // Neighbours inside the grid of row i, and the diagonal.
  const auto entries_of = KOKKOS_LAMBDA(int i) {
    const int x = i % n, y = i / n % n, z = i / (n * n);
    return 1 + (x > 0) + (x < n - 1) + (y > 0) + (y < n - 1) + (z > 0) + (z < n - 1);
  };
  Kokkos::parallel_scan(
      "poisson::row_map", Kokkos::RangePolicy<exec>(0, rows + 1),
      KOKKOS_LAMBDA(int i, int& offset, bool final) {
        if (final) row_map(i) = offset;
        if (i < rows) offset += entries_of(i);
      });
  int nnz = 0;
  Kokkos::deep_copy(nnz, Kokkos::subview(row_map, rows));
  Kokkos::View<int*, Device> columns("columns", nnz);
  Kokkos::View<double*, Device> values("values", nnz);
  Kokkos::parallel_for(
      "poisson::entries", Kokkos::RangePolicy<exec>(0, rows), KOKKOS_LAMBDA(int i) {
        const int x = i % n, y = i / n % n, z = i / (n * n);
        int k = row_map(i);
        const auto put = [&](int column, double value) {
          columns(k) = column;
          values(k) = value;
          ++k;
        };
        // Ascending column order, as CrsMatrix users expect.
        if (z > 0) put(i - n * n, -1.0);
        if (y > 0) put(i - n, -1.0);
        if (x > 0) put(i - 1, -1.0);
        put(i, 6.0);
        if (x < n - 1) put(i + 1, -1.0);
        if (y < n - 1) put(i + n, -1.0);
        if (z < n - 1) put(i + n * n, -1.0);
      });
  return poisson_matrix<Device>("laplacian", rows, rows, nnz, values, row_map, columns);
}

// A smooth source on the grid's interior points, a Gaussian bump on a ramp (not an eigenvector of
// the Laplacian, which CG would solve in one step).
template <class Device>
Kokkos::View<double*, Device> smooth_source(int n) {
  using exec = typename Device::execution_space;
  Kokkos::View<double*, Device> b("b", static_cast<std::size_t>(n) * n * n);
  const double h = 1.0 / (n + 1);
  Kokkos::parallel_for(
      "poisson::source", Kokkos::RangePolicy<exec>(0, n * n * n), KOKKOS_LAMBDA(int i) {
        const double x = (i % n + 1) * h, y = (i / n % n + 1) * h, z = (i / (n * n) + 1) * h;
        const double d2 = (x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6) + (z - 0.45) * (z - 0.45);
        b(i) = std::exp(-20 * d2) + 0.5 * x;
      });
  return b;
}

}  // namespace cg_example
