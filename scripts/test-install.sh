#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Checks the installed package the way a user meets it (CI runs this), built two ways: shared
# (the default, against .deps/kokkos-host: OpenMP), and static (-DBUILD_SHARED_LIBS=OFF) against
# a Kokkos whose default execution space is Threads (install-deps.sh --threads); one build covers
# both of the latter, since each library build takes minutes on CI's two cores. For each:
#  1. scripts/install.sh into a temporary prefix;
#  2. the downstream example (examples/downstream, as installed under share/) configured with
#     only the printed CMAKE_PREFIX_PATH, built and run: it must report a bit-exact round trip
#     on the Kokkos default space; so is examples/compressed_statistics, which compiles the
#     device-callable decoder (its internals installed under include/ndzip/kernels) into its
#     kernels: its statistics from the stream must agree with the decompressed field's;
#  3. the installed `ndzip --version` reports the project version, with unndzip and the manual
#     pages beside it;
#  4. the library is the kind asked for; a shared one exports the API (namespace ndzip) and
#     none of the kernels or of the Kokkos code instantiated for them;
#  5. where the build found HDF5, the installed HDF5 filter plugin loads from its folder alone
#     (its RPATH finds libndzip and Kokkos) and h5py round-trips a dataset through it;
#  6. (shared) where MPI is installed, ndzip::mpi is in the package and the installed
#     examples/mpi_halo and examples/mpi_transpose build against it and run bit-exact on 4
#     ranks (the transpose on 3 too);
#  7. (shared) the Python package is installed, and with only the printed PYTHONPATH it imports
#     (its RPATH finds libndzip and Kokkos), round-trips an array, reads its frame with the
#     installed tool, serves Zarr and finds the installed HDF5 plugin;
#  8. (shared) the installed examples/cg_checkpoint builds against the package and the project's
#     Kokkos Kernels (.deps/kokkos-kernels-host) and passes its restart and hostile-use tests
#     (tests/cg_restart.sh: bit-exact restarts, refused damaged checkpoints; tests/cg_hostile.sh:
#     forged checkpoints, endless inputs, planted links, concurrent writers).
# Once (shared): find_package(ndzip-kokkos) refuses, with its message, a Kokkos whose backends
# differ from the ones the library was built for (a stand-in KokkosConfig.cmake with other
# devices).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ndzip-test-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test-install: FAIL: $*" >&2; exit 1; }
say() { echo "test-install: $*"; }
# check_installed_hdf5_plugin (step 5), check_mpi_example (step 6)
source "$root/scripts/installed-package-checks.sh"
version=$(sed -nE 's/^project\(ndzip-kokkos VERSION ([0-9.]+).*/\1/p' "$root/CMakeLists.txt")

# check_python_package NAME: step 7.
check_python_package() {
  local name=$1 dir="$work/$1" pythonpath python
  pythonpath=$(sed -n 's/^PYTHONPATH=//p' "$dir/install.log" | tail -n 1)
  [ -n "$pythonpath" ] || fail "$name: install.sh printed no PYTHONPATH (the Python package)"
  python=$(sed -n 's/^install: the Python package ndzip (for \(.*\)) needs:$/\1/p' "$dir/install.log")
  (cd "$work" && env -u LD_LIBRARY_PATH PYTHONPATH="$pythonpath" OMP_PROC_BIND=false \
    "$python" - "$dir/prefix" "$work/$name/py.ndz" <<'PY') ||
import os, subprocess, sys
import numpy as np
import ndzip, ndzip.h5, ndzip.numcodecs
prefix, frame_path = sys.argv[1], sys.argv[2]
assert ndzip.__file__.startswith(prefix), ndzip.__file__
values = np.cumsum(np.ones((70, 80)), axis=1).astype(np.float64)
frame = ndzip.compress(values)
assert (ndzip.decompress(frame).view(np.uint64) == values.view(np.uint64)).all()
with open(frame_path, "wb") as f:
    f.write(frame)
restored = subprocess.run([os.path.join(prefix, "bin", "ndzip"), "-d", "-c", frame_path],
                          check=True, capture_output=True).stdout
assert restored == values.tobytes(), "the installed tool reads Python's frame differently"
codec = ndzip.numcodecs.Ndzip()
assert (codec.decode(codec.encode(values)).view(np.uint64) == values.view(np.uint64)).all()
import importlib.metadata
codecs = [e.value for e in importlib.metadata.distribution("ndzip-kokkos").entry_points
          if e.group == "numcodecs.codecs" and e.name == "ndzip"]
assert codecs == ["ndzip.numcodecs:Ndzip"], "the installed metadata names no Zarr codec"
plugin = os.path.join(ndzip.h5.plugin_path(), "libh5ndzip.so")
assert os.path.realpath(plugin).startswith(os.path.realpath(prefix)) and os.path.exists(plugin)
print("test-install: python: ndzip", ndzip.__version__, "round-trips on", ndzip.default_backend())
PY
    fail "$name: the installed Python package does not work with PYTHONPATH=$pythonpath"
}

# check_cg_example NAME PREFIX_PATH: step 8.
check_cg_example() {
  local name=$1 prefix_path=$2 dir="$work/$1"
  local example="$dir/prefix/share/ndzip-kokkos/examples/cg_checkpoint"
  [ -f "$example/CMakeLists.txt" ] || fail "$name: examples/cg_checkpoint is not installed"
  cmake -S "$example" -B "$dir/cg" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix_path" -DKokkosKernels_ROOT="$root/.deps/kokkos-kernels-host" \
    >"$dir/cg-configure.log" 2>&1 ||
    { cat "$dir/cg-configure.log"; fail "$name: examples/cg_checkpoint does not configure"; }
  cmake --build "$dir/cg" >"$dir/cg-build.log" 2>&1 ||
    { cat "$dir/cg-build.log"; fail "$name: examples/cg_checkpoint does not build"; }
  OMP_NUM_THREADS=2 OMP_PROC_BIND=false bash "$example/tests/cg_restart.sh" \
    "$dir/cg/ndzip-cg-checkpoint" "$dir/cg-run" | tee "$dir/cg-run.log" ||
    fail "$name: the installed examples/cg_checkpoint fails its restart test"
  OMP_NUM_THREADS=2 OMP_PROC_BIND=false bash "$example/tests/cg_hostile.sh" \
    "$dir/cg/ndzip-cg-checkpoint" "$dir/cg-hostile" | tee "$dir/cg-hostile.log" ||
    fail "$name: the installed examples/cg_checkpoint fails its hostile-use test"
}

# check_install NAME EXPECTED_SPACE KIND [CMAKE_ARGS...]: steps 1-4 in $work/NAME; KIND is
# shared or static.
check_install() {
  local name=$1 space=$2 kind=$3
  shift 3
  local dir="$work/$name"
  mkdir -p "$dir"
  echo "test-install: $name"
  # NDZIP_TEST_INSTALL_BUILD_DIR_<NAME>: a build folder to install from, as a user who ran the
  # tests first would (install.sh reconfigures it without the tests: the library and the tool
  # are not compiled again). .ci/run gives the shared case scripts/run-tests.sh's build/.
  local reuse_var="NDZIP_TEST_INSTALL_BUILD_DIR_${name//-/_}"
  NDZIP_BUILD_DIR="${!reuse_var:-$root/build-install-$name}" "$root/scripts/install.sh" \
    "$dir/prefix" "$@" | tee "$dir/install.log"
  local prefix_path
  prefix_path=$(sed -n 's/^CMAKE_PREFIX_PATH=//p' "$dir/install.log" | tail -n 1)
  [ -n "$prefix_path" ] || fail "$name: install.sh printed no CMAKE_PREFIX_PATH"
  local example="$dir/prefix/share/ndzip-kokkos/examples/downstream"
  [ -f "$example/CMakeLists.txt" ] || fail "$name: the downstream example is not installed"
  [ -f "$dir/prefix/share/doc/ndzip-kokkos/LICENSE" ] || fail "$name: LICENSE is not installed"

  local lib="$dir/prefix/lib"
  if [ "$kind" = shared ]; then
    [ -f "$lib/libndzip.so" ] && [ ! -e "$lib/libndzip.a" ] || fail "$name: no libndzip.so alone in $lib"
    # Defined dynamic symbols outside namespace ndzip, less the C++ library's own template
    # code (its headers give namespace std default visibility; a function template's demangled
    # name may start with its return type, "void std::vector<...>::_M_realloc_insert<...>"). Kernels and Kokkos code would
    # show up as Kokkos:: or ndzip-internal lambdas' Kokkos instantiations.
    local foreign
    foreign=$(nm -D --defined-only -C "$lib/libndzip.so" | cut -d' ' -f3- |
      grep -vE '^((typeinfo (name )?|vtable |guard variable )for |void )?(ndzip|std|__gnu_cxx)::|^_(init|fini)$' || true)
    if [ -n "$foreign" ]; then
      echo "$foreign" | head -n 20
      fail "$name: libndzip.so exports $(echo "$foreign" | wc -l) symbols outside the API (above)"
    fi
    readelf -d "$dir/prefix/bin/ndzip" | grep -qE 'R(UN)?PATH.*\$ORIGIN/../lib' ||
      fail "$name: the installed ndzip tool has no RPATH to its library"
  else
    [ -f "$lib/libndzip.a" ] && [ ! -e "$lib/libndzip.so" ] || fail "$name: no libndzip.a alone in $lib"
  fi

  if [ -f "$lib/hdf5/plugin/libh5ndzip.so" ]; then
    check_installed_hdf5_plugin "$name" "$lib/hdf5/plugin" "$dir"
  fi

  # Without MPI to be found: an application that does not ask for ndzip::mpi needs none.
  cmake -S "$example" -B "$dir/example" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix_path" -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON \
    >"$dir/example-configure.log" 2>&1 ||
    { cat "$dir/example-configure.log"; fail "$name: the example does not configure"; }
  cmake --build "$dir/example" >"$dir/example-build.log" 2>&1 ||
    { cat "$dir/example-build.log"; fail "$name: the example does not build"; }
  OMP_NUM_THREADS=2 OMP_PROC_BIND=false "$dir/example/ndzip-downstream-example" 64 | tee "$dir/run.log"
  grep -q "bit-exact" "$dir/run.log" || fail "$name: the example did not report a bit-exact round trip"
  grep -q " on $space:" "$dir/run.log" || fail "$name: the example did not run on $space"
  local statistics="$dir/prefix/share/ndzip-kokkos/examples/compressed_statistics"
  cmake -S "$statistics" -B "$dir/statistics" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix_path" -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON \
    >"$dir/statistics-configure.log" 2>&1 ||
    { cat "$dir/statistics-configure.log"; fail "$name: compressed_statistics does not configure"; }
  cmake --build "$dir/statistics" >"$dir/statistics-build.log" 2>&1 ||
    { cat "$dir/statistics-build.log"; fail "$name: compressed_statistics does not build"; }
  OMP_NUM_THREADS=2 OMP_PROC_BIND=false "$dir/statistics/ndzip-compressed-statistics" 48 |
    tee "$dir/statistics.log"
  grep -q "statistics agree" "$dir/statistics.log" ||
    fail "$name: compressed_statistics' statistics from the stream disagree with the field's"

  "$dir/prefix/bin/ndzip" --version | grep -qx "ndzip $version" ||
    fail "$name: 'ndzip --version' does not say 'ndzip $version': $("$dir/prefix/bin/ndzip" --version)"
  # With the project's own Kokkos the install carries it: the tool runs with the checkout's
  # .deps hidden (a private mount namespace; said and skipped where that is not allowed).
  if [ -z "${Kokkos_ROOT:-}" ]; then
    if unshare -m true 2>/dev/null; then
      unshare -m sh -c 'mount -t tmpfs tmpfs "$1" && "$2" --version' sh "$root/.deps" \
        "$dir/prefix/bin/ndzip" | grep -qx "ndzip $version" ||
        fail "$name: the installed tool does not run without the checkout's .deps"
    else
      echo "test-install: $name: no private mount namespace here, the install's own Kokkos" \
        "is not checked without .deps"
    fi
  fi
  # unndzip (a link to ndzip) and the manual pages come with the tool.
  [ "$(readlink "$dir/prefix/bin/unndzip")" = ndzip ] || fail "$name: no bin/unndzip -> ndzip"
  for page in ndzip.1 unndzip.1; do
    [ -f "$dir/prefix/share/man/man1/$page" ] || fail "$name: share/man/man1/$page not installed"
  done
  echo "$prefix_path" >"$dir/prefix_path"
}

check_install shared OpenMP shared
check_mpi_example shared "$work/shared/prefix" "$(cat "$work/shared/prefix_path")" "$work/shared" 4
check_python_package shared
check_cg_example shared "$(cat "$work/shared/prefix_path")"
"$root/scripts/install-deps.sh" --threads
Kokkos_ROOT="$root/.deps/kokkos-threads" check_install static-threads Threads static \
  -DBUILD_SHARED_LIBS=OFF

echo "test-install: a Kokkos with other backends must be refused"
example="$work/shared/prefix/share/ndzip-kokkos/examples/downstream"
mkdir -p "$work/other-kokkos/lib/cmake/Kokkos"
cat >"$work/other-kokkos/lib/cmake/Kokkos/KokkosConfig.cmake" <<'CMAKE'
set(Kokkos_VERSION 4.6.1)
set(Kokkos_DEVICES SERIAL;CUDA)
CMAKE
prefix_path=$(cat "$work/shared/prefix_path")
ndzip_prefix=${prefix_path%%;*}
if cmake -S "$example" -B "$work/refused" -G Ninja -DCMAKE_PREFIX_PATH="$ndzip_prefix" \
     -DKokkos_ROOT="$work/other-kokkos" >"$work/refused.log" 2>&1; then
  cat "$work/refused.log"
  fail "find_package(ndzip-kokkos) accepted a Kokkos with the backends SERIAL;CUDA"
fi
# CMake wraps the message: compare it with the lines joined.
message=$(tr -s ' \n' ' ' <"$work/refused.log")
[[ $message == *"was built for a Kokkos with the backends 'OPENMP;SERIAL'"*"has 'CUDA;SERIAL'"* ]] ||
  { cat "$work/refused.log"; fail "the refusal does not explain itself"; }
grep -A6 "Reason given by package" "$work/refused.log"

echo "test-install: a Kokkos with an execution space ndzip-kokkos lacks must be refused at configure"
mkdir -p "$work/sycl-kokkos/lib/cmake/Kokkos"
cat >"$work/sycl-kokkos/lib/cmake/Kokkos/KokkosConfig.cmake" <<'CMAKE'
set(Kokkos_VERSION 4.6.1)
set(Kokkos_DEVICES SERIAL;SYCL)
CMAKE
if cmake -S "$root" -B "$work/sycl-build" -G Ninja -DKokkos_ROOT="$work/sycl-kokkos" \
     -DNDZIP_BUILD_TESTS=OFF -DNDZIP_BUILD_TOOLS=OFF -DNDZIP_BUILD_PERF_TESTS=OFF \
     >"$work/sycl.log" 2>&1; then
  fail "the project configured against a Kokkos with SYCL"
fi
message=$(tr -s ' \n' ' ' <"$work/sycl.log")
[[ $message == *"execution space(s) SYCL, which ndzip-kokkos does not support"* ]] ||
  { cat "$work/sycl.log"; fail "the SYCL refusal does not name the space"; }
echo "test-install: OK"
