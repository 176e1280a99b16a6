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

# build_mpi_example LABEL EXAMPLE PREFIX_PATH SCRATCH_DIR: the installed example folder EXAMPLE
# configured with only PREFIX_PATH and built in SCRATCH_DIR/<its name>.
build_mpi_example() {
  local label=$1 example=$2 prefix_path=$3 scratch=$4
  local name=${example##*/}
  [ -f "$example/CMakeLists.txt" ] || fail "$label: examples/$name is not installed"
  cmake -S "$example" -B "$scratch/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix_path" >"$scratch/$name-configure.log" 2>&1 ||
    { cat "$scratch/$name-configure.log"; fail "$label: examples/$name does not configure"; }
  cmake --build "$scratch/$name" >"$scratch/$name-build.log" 2>&1 ||
    { cat "$scratch/$name-build.log"; fail "$label: examples/$name does not build"; }
}

# run_mpi_example LABEL EXECUTABLE RANKS LOG ARGS...: EXECUTABLE on RANKS ranks with ARGS, its
# output in LOG.log (and shown), its errors in LOG.err (shown if it fails); it must report
# bit-exact and have saved bytes on the wire.
run_mpi_example() {
  local label=$1 executable=$2 ranks=$3 log=$4
  shift 4
  local name="${executable##*/} $*"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMP_PROC_BIND=false \
    OMPI_MCA_btl_vader_single_copy_mechanism=none \
    mpiexec -n "$ranks" --oversubscribe "$executable" "$@" 2>"$log.err" | tee "$log.log" ||
    { cat "$log.err"; fail "$label: $name failed on $ranks ranks"; }
  grep -q "bit-exact" "$log.log" || fail "$label: $name did not report bit-exact on $ranks ranks"
  local saved
  saved=$(sed -nE 's/.*; (-?[0-9]+) bytes saved on the wire per step/\1/p' "$log.log")
  [ -n "$saved" ] && [ "$saved" -gt 0 ] ||
    fail "$label: $name saved no bytes on the wire on $ranks ranks (${saved:-none})"
}

# check_mpi_example LABEL PREFIX PREFIX_PATH SCRATCH_DIR RANKS: the package installed in PREFIX
# has ndzip::mpi, and examples/mpi_halo and examples/mpi_transpose (as installed) build against
# it with find_package(ndzip-kokkos COMPONENTS mpi) and only PREFIX_PATH. mpi_halo runs on RANKS
# ranks: a bit-exact diffusion whose compressed halos take fewer bytes than the raw ones.
# mpi_transpose runs on RANKS ranks (doubles) and on 3 (floats; its 128 planes split unevenly,
# 42, 43, 43): bit-exact slab-to-pencil transposes, compressed to fewer bytes than raw.
check_mpi_example() {
  local label=$1 prefix=$2 prefix_path=$3 scratch=$4 ranks=$5
  local examples="$prefix/share/ndzip-kokkos/examples"
  command -v mpiexec >/dev/null || { say "$label: no mpiexec, ndzip::mpi not checked"; return; }
  [ -f "$prefix/lib/cmake/ndzip-kokkos/ndzip-kokkos-mpiTargets.cmake" ] ||
    [ -f "$prefix/lib64/cmake/ndzip-kokkos/ndzip-kokkos-mpiTargets.cmake" ] ||
    fail "$label: MPI is installed, but the package has no ndzip::mpi"
  mkdir -p "$scratch"
  build_mpi_example "$label" "$examples/mpi_halo" "$prefix_path" "$scratch"
  run_mpi_example "$label" "$scratch/mpi_halo/ndzip-mpi-halo-example" "$ranks" \
    "$scratch/mpi_halo-run" --n 64 --steps 3
  # A step whose pieces all ranks sent raw cannot have taken fewer bytes than the raw halo.
  awk '$1 ~ /^[0-9]+$/ && $NF == "raw" && $(NF - 1) != "ranks" && $3 < $2 { bad = 1 }
       END { exit bad }' \
    "$scratch/mpi_halo-run.log" ||
    fail "$label: examples/mpi_halo calls a step raw that took fewer bytes than raw"

  build_mpi_example "$label" "$examples/mpi_transpose" "$prefix_path" "$scratch"
  run_mpi_example "$label" "$scratch/mpi_transpose/ndzip-mpi-transpose-example" "$ranks" \
    "$scratch/mpi_transpose-run" --steps 3
  run_mpi_example "$label" "$scratch/mpi_transpose/ndzip-mpi-transpose-example" 3 \
    "$scratch/mpi_transpose-run-3" --steps 3 --type float
}
