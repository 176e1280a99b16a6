#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# HIP compile check (no AMD GPU needed): builds the library, the CLI, the HDF5 plugin and the perf
# binaries against Kokkos 3.4.01 with HIP (Debian's hipcc, ROCm 5.2.3, arch VEGA908 = gfx908),
# and compiles ndzip::mpi's NCCL link for RCCL, so that HIP code cannot rot. The unit tests are
# left out: they instantiate the same public templates as the CLI and ndzip-bench,
# scripts/build-cuda.sh compiles them for a device space, and they took a quarter of CI's time
# under hipcc. Installs what it needs, like install-deps.sh.
# The HIP logic is not run here: the lane-group algorithm it shares with CUDA is tested on the
# host. Static, as is the Kokkos it builds for this check (shared builds are checked on the host).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$root/scripts/install-deps.sh" --hip

kokkos_hip="$root/.deps/kokkos-hip"
hip_build="${NDZIP_HIP_BUILD_DIR:-$root/build-hip}"
# ndzip::mpi is left out here: its device code paths are the same templates for CUDA and HIP,
# and scripts/build-cuda.sh compiles them (its bench and headers); this keeps CI's time down.
cmake -S "$root" -B "$hip_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKokkos_ROOT="$kokkos_hip" -DBUILD_SHARED_LIBS=OFF -DNDZIP_ENABLE_MPI=OFF \
  -DNDZIP_BUILD_TESTS=OFF \
  -DCMAKE_CXX_COMPILER=hipcc >/dev/null
cmake --build "$hip_build" -j "$jobs"
compile_python_sources "$hip_build/python-objects" hipcc -O1 -I"$root/include" \
  -I"$hip_build/include" -isystem "$kokkos_hip/include"
# The NCCL link on HIP (RCCL): no MPI here, and its communicator makes no MPI call, so one
# source instantiating every operation of it is compiled alone, against a real rccl.h where one
# is found (ROCM_PATH, /opt/rocm, /usr), else against the declarations of mpi/tests/rccl-stub/.
rccl_include="$root/mpi/tests/rccl-stub"
for prefix in "${ROCM_PATH:-/opt/rocm}" /opt/rocm /usr; do
  if [ -f "$prefix/include/rccl/rccl.h" ]; then rccl_include="$prefix/include"; break; fi
done
echo "build-hip: the NCCL link compiles against $rccl_include/rccl/rccl.h"
mkdir -p "$hip_build/mpi-objects"
hipcc -O1 -std=c++17 -DNDZIP_MPI_HAS_NCCL -I"$root/include" -I"$hip_build/include" \
  -I"$root/mpi/include" -isystem "$kokkos_hip/include" -isystem "$rccl_include" \
  -c "$root/mpi/tests/nccl_link_compiles.cpp" -o "$hip_build/mpi-objects/nccl_link_compiles.o"
echo "build-hip: the HIP configuration compiles, the Python extension's sources and the NCCL" \
     "link too (binaries in $hip_build/bin, not run here)"
