#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# CUDA compile check (no GPU needed): builds the library, the CLI and the perf binaries,
# ndzip::mpi with its NCCL link where nccl.h is found, against Kokkos 3.4.01 with CUDA
# (Debian's CUDA 11.8 + g++-11, arch AMPERE80), so that CUDA code cannot rot between GPU
# sessions. Installs what it needs, like install-deps.sh.
# Static, as is the Kokkos it builds for this check (shared builds are checked on the host).
# Not the test binaries (NDZIP_BUILD_TESTS=OFF), which no CI machine can run: they instantiate
# the public templates the CLI and the perf binaries instantiate too, they took two fifths of
# this check's time, and the GPU builds that run them (docs/INSTALL.md, "GPU machines")
# compile them in full. NDZIP_CUDA_CHECK_TESTS=ON builds them here as well.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$root/scripts/install-deps.sh" --cuda

source "$root/scripts/debian-cuda-env.sh"
kokkos_cuda="$root/.deps/kokkos-cuda"
# A __host__ function called from device code is only a warning to nvcc, and the call does not
# happen on the GPU (a kernel that wrote nothing): an error here.
host_call_errors="-Xcudafe --diag_error=20011 -Xcudafe --diag_error=20014"
cuda_build="${NDZIP_CUDA_BUILD_DIR:-$root/build-cuda}"
# The NCCL link (ndzip::mpi's nccl_communicator, its tests and the MPI bench's NCCL path)
# compiles against the nccl.h found: NCCL_ROOT's, else the one this machine kind has under
# /usr/local/cuda (NCCL 2.28, beside CUDA 13). That header includes cuda_runtime.h, which must
# stay Debian's CUDA 11.8 here: nccl.h and libnccl are staged alone into the build folder.
nccl_args=(-DNDZIP_MPI_NCCL=AUTO)
nccl_prefix=${NCCL_ROOT:-/usr/local/cuda}
nccl_library=$(ls "$nccl_prefix"/lib64/libnccl.so* "$nccl_prefix"/lib/libnccl.so* 2>/dev/null | head -n 1 || true)
if [ -f "$nccl_prefix/include/nccl.h" ] && [ -n "$nccl_library" ]; then
  staged="$cuda_build/nccl-staged"
  mkdir -p "$staged/include" "$staged/lib"
  ln -sf "$nccl_prefix/include/nccl.h" "$staged/include/nccl.h"
  ln -sf "$nccl_library" "$staged/lib/libnccl.so"
  nccl_args=(-DNDZIP_MPI_NCCL=ON -DNCCL_ROOT="$staged")
  echo "build-cuda: the NCCL link compiles against $nccl_prefix/include/nccl.h"
else
  echo "build-cuda: no nccl.h and libnccl under $nccl_prefix (NCCL_ROOT): the NCCL link is" \
       "not compiled"
fi
cmake -S "$root" -B "$cuda_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKokkos_ROOT="$kokkos_cuda" -DBUILD_SHARED_LIBS=OFF \
  -DCMAKE_CXX_COMPILER="$kokkos_cuda/bin/nvcc_wrapper" \
  -DCMAKE_CXX_FLAGS="-arch=sm_80 $host_call_errors" \
  -DCUDAToolkit_INCLUDE_DIR=/usr/include -DNDZIP_BUILD_TESTS="${NDZIP_CUDA_CHECK_TESTS:-OFF}" \
  "${nccl_args[@]}" >/dev/null
cmake --build "$cuda_build" -j "$jobs"
compile_python_sources "$cuda_build/python-objects" "$kokkos_cuda/bin/nvcc_wrapper" -arch=sm_80 \
  -O1 "-I$root/include" "-I$cuda_build/include" -isystem "$kokkos_cuda/include"
echo "build-cuda: the CUDA configuration compiles, the Python extension's sources too (binaries" \
     "in $cuda_build/bin, not run here)"
