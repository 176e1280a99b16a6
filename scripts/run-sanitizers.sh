#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The tests under AddressSanitizer + UndefinedBehaviorSanitizer (CMake preset `asan-ubsan`,
# Serial and OpenMP), installing what is missing like run-tests.sh. Builds into build-asan/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [ -z "${Kokkos_ROOT:-}" ]; then
  "$root/scripts/install-deps.sh"
else
  NDZIP_SKIP_KOKKOS=1 "$root/scripts/install-deps.sh"
fi
cd "$root"
preset_args=()
# With your own Kokkos, the example that needs Kokkos Kernels takes KokkosKernels_ROOT (or is
# skipped), not the project's.
[ -n "${Kokkos_ROOT:-}" ] &&
  preset_args=(-DKokkos_ROOT="$Kokkos_ROOT" -DKokkosKernels_ROOT="${KokkosKernels_ROOT:-}")
cmake --preset asan-ubsan "${preset_args[@]}" >/dev/null
cmake --build --preset asan-ubsan -j "$jobs"
ctest --preset asan-ubsan -j "$jobs"
