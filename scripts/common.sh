# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Shared by the scripts: locate the checkout, install what is missing, configure and build.
# Set Kokkos_ROOT to use your own Kokkos installation instead of the one install-deps.sh builds.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="${NDZIP_BUILD_DIR:-$root/build}"
jobs=$(nproc 2>/dev/null || echo 2)

# Quiet, predictable OpenMP: Kokkos warns without these, and unpinned threads make timings noisy.
export OMP_PROC_BIND="${OMP_PROC_BIND:-spread}"
export OMP_PLACES="${OMP_PLACES:-threads}"

# With the project's own Kokkos, its Kokkos Kernels too (for examples/cg_checkpoint); with
# Kokkos_ROOT, KokkosKernels_ROOT if set (the example is skipped without it).
ndzip_configure() {
  local kernels=()
  if [ -z "${Kokkos_ROOT:-}" ]; then
    "$root/scripts/install-deps.sh"
    kokkos_root="$root/.deps/kokkos-host"
    kokkos_kernels_root="$root/.deps/kokkos-kernels-host"
  else
    NDZIP_SKIP_KOKKOS=1 "$root/scripts/install-deps.sh"
    kokkos_root="$Kokkos_ROOT"
    kokkos_kernels_root="${KokkosKernels_ROOT:-}"
  fi
  [ -n "$kokkos_kernels_root" ] && kernels=(-DKokkosKernels_ROOT="$kokkos_kernels_root")
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kokkos_root" \
    "${kernels[@]}" "$@" >/dev/null
}

ndzip_build() {
  cmake --build "$build" -j "$jobs" "$@"
}
