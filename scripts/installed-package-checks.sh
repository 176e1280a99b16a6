# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Checks of an installed ndzip-kokkos that more than one way of installing it shares, sourced by
# scripts/test-install.sh (CMake installs) and scripts/test-spack.sh (Spack installs). The
# sourcing script defines `fail MESSAGE` (report and exit) and `say MESSAGE`.

# check_installed_hdf5_plugin LABEL PLUGIN_DIR SCRATCH_DIR: the installed HDF5 filter plugin
# loads from PLUGIN_DIR alone (its RPATH finds libndzip and Kokkos) and h5py round-trips a
# dataset through it, with the default filter id (310).
check_installed_hdf5_plugin() {
  local label=$1 plugin_dir=$2 scratch=$3 py
  for py in python3 /usr/bin/python3 ""; do
    [ -n "$py" ] && "$py" -c 'import h5py, numpy' 2>/dev/null && break
  done
  [ -n "$py" ] || fail "$label: no python3 with h5py and numpy to load the installed HDF5 plugin"
  mkdir -p "$scratch"
  HDF5_PLUGIN_PATH="$plugin_dir" "$py" - "$scratch/plugin.h5" <<'PY' ||
import sys
import h5py
import numpy as np
values = np.cumsum(np.ones((200, 300)), axis=1).astype(np.float32)
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("field", data=values, chunks=(64, 128), compression=310)
with h5py.File(sys.argv[1], "r") as f:
    assert f["field"].id.get_create_plist().get_filter(0)[0] == 310, "not written with ndzip"
    assert (f["field"][...].view(np.uint32) == values.view(np.uint32)).all(), "not bit-exact"
PY
    fail "$label: the installed HDF5 plugin ($plugin_dir) does not load or round-trip"
  say "$label: the installed HDF5 plugin round-trips through h5py"
}

# check_mpi_example LABEL PREFIX PREFIX_PATH SCRATCH_DIR RANKS: the package installed in PREFIX
# has ndzip::mpi, and examples/mpi_halo (as installed) builds against it with
# find_package(ndzip-kokkos COMPONENTS mpi) and only PREFIX_PATH, and runs on RANKS ranks: a
# bit-exact diffusion whose compressed halos take fewer bytes than the raw ones.
check_mpi_example() {
  local label=$1 prefix=$2 prefix_path=$3 scratch=$4 ranks=$5
  local example="$prefix/share/ndzip-kokkos/examples/mpi_halo"
  command -v mpiexec >/dev/null || { say "$label: no mpiexec, ndzip::mpi not checked"; return; }
  [ -f "$prefix/lib/cmake/ndzip-kokkos/ndzip-kokkos-mpiTargets.cmake" ] ||
    [ -f "$prefix/lib64/cmake/ndzip-kokkos/ndzip-kokkos-mpiTargets.cmake" ] ||
    fail "$label: MPI is installed, but the package has no ndzip::mpi"
  [ -f "$example/CMakeLists.txt" ] || fail "$label: examples/mpi_halo is not installed"
  mkdir -p "$scratch"
  cmake -S "$example" -B "$scratch/mpi_halo" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix_path" >"$scratch/mpi_halo-configure.log" 2>&1 ||
    { cat "$scratch/mpi_halo-configure.log"; fail "$label: examples/mpi_halo does not configure"; }
  cmake --build "$scratch/mpi_halo" >"$scratch/mpi_halo-build.log" 2>&1 ||
    { cat "$scratch/mpi_halo-build.log"; fail "$label: examples/mpi_halo does not build"; }
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMP_PROC_BIND=false \
    OMPI_MCA_btl_vader_single_copy_mechanism=none \
    mpiexec -n "$ranks" --oversubscribe "$scratch/mpi_halo/ndzip-mpi-halo-example" --n 64 \
    --steps 3 2>"$scratch/mpi_halo-run.err" | tee "$scratch/mpi_halo-run.log" ||
    { cat "$scratch/mpi_halo-run.err"; fail "$label: examples/mpi_halo failed on $ranks ranks"; }
  grep -q "bit-exact" "$scratch/mpi_halo-run.log" ||
    fail "$label: examples/mpi_halo did not report bit-exact"
  # A step whose pieces all ranks sent raw cannot have taken fewer bytes than the raw halo.
  awk '$1 ~ /^[0-9]+$/ && $NF == "raw" && $(NF - 1) != "ranks" && $3 < $2 { bad = 1 }
       END { exit bad }' \
    "$scratch/mpi_halo-run.log" ||
    fail "$label: examples/mpi_halo calls a step raw that took fewer bytes than raw"
  local saved
  saved=$(sed -nE 's/.*; (-?[0-9]+) bytes saved on the wire per step/\1/p' "$scratch/mpi_halo-run.log")
  [ -n "$saved" ] && [ "$saved" -gt 0 ] ||
    fail "$label: examples/mpi_halo saved no bytes on the wire (${saved:-none})"
}
