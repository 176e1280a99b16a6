# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Shared by the scripts: locate the checkout, install what is missing, configure and build.
# Set Kokkos_ROOT to use your own Kokkos installation instead of the one install-deps.sh builds.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="${NDZIP_BUILD_DIR:-$root/build}"
jobs=$(nproc 2>/dev/null || echo 2)

# Quiet, predictable OpenMP: Kokkos warns without these, and unpinned threads make timings noisy.
export OMP_PROC_BIND="${OMP_PROC_BIND:-spread}"
export OMP_PLACES="${OMP_PLACES:-threads}"

ndzip_configure() {
  if [ -z "${Kokkos_ROOT:-}" ]; then
    "$root/scripts/install-deps.sh"
    kokkos_root="$root/.deps/kokkos-host"
  else
    NDZIP_SKIP_KOKKOS=1 "$root/scripts/install-deps.sh"
    kokkos_root="$Kokkos_ROOT"
  fi
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kokkos_root" "$@" >/dev/null
}

ndzip_build() {
  cmake --build "$build" -j "$jobs" "$@"
}
