#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# CUDA compile check (no GPU needed): builds the whole project, library, CLI, tests and perf
# binaries, against Kokkos 3.4.01 with CUDA (Debian's CUDA 11.8 + g++-11, arch AMPERE80), so
# that CUDA code cannot rot between GPU sessions. Installs what it needs, like install-deps.sh.
# Static, as is the Kokkos it builds for this check (shared builds are checked on the host).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$root/scripts/install-deps.sh" --cuda

source "$root/scripts/debian-cuda-env.sh"
kokkos_cuda="$root/.deps/kokkos-cuda"
# A __host__ function called from device code is only a warning to nvcc, and the call does not
# happen on the GPU (a kernel that wrote nothing): an error here.
host_call_errors="-Xcudafe --diag_error=20011 -Xcudafe --diag_error=20014"
cuda_build="${NDZIP_CUDA_BUILD_DIR:-$root/build-cuda}"
cmake -S "$root" -B "$cuda_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKokkos_ROOT="$kokkos_cuda" -DBUILD_SHARED_LIBS=OFF \
  -DCMAKE_CXX_COMPILER="$kokkos_cuda/bin/nvcc_wrapper" \
  -DCMAKE_CXX_FLAGS="-arch=sm_80 $host_call_errors" \
  -DCUDAToolkit_INCLUDE_DIR=/usr/include >/dev/null
cmake --build "$cuda_build" -j "$jobs"
compile_python_sources "$cuda_build/python-objects" "$kokkos_cuda/bin/nvcc_wrapper" -arch=sm_80 \
  -O1 "-I$root/include" "-I$cuda_build/include" -isystem "$kokkos_cuda/include"
echo "build-cuda: the CUDA configuration compiles, the Python extension's sources too (binaries" \
     "in $cuda_build/bin, not run here)"
