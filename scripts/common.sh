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
  # Only for a build of the tests, which holds the example: elsewhere CMake would warn that the
  # variable went unused.
  [ -n "$kokkos_kernels_root" ] && [[ " $* " == *" -DNDZIP_BUILD_TESTS=ON "* ]] &&
    kernels=(-DKokkosKernels_ROOT="$kokkos_kernels_root")
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_ROOT="$kokkos_root" \
    "${kernels[@]}" "$@" >/dev/null
}

ndzip_build() {
  cmake --build "$build" -j "$jobs" "$@"
}

# The Python extension's sources, as python/CMakeLists.txt lists them (src/*.cpp, relative to
# python/).
python_extension_sources() {
  sed -n '/pybind11_add_module/,/)/p' "$root/python/CMakeLists.txt" | grep -o 'src/[a-z0-9_]*\.cpp'
}

# Compiles, without linking, the Python extension's sources with a GPU configuration's compiler
# into OUT_DIR, so that their CUDA and HIP branches (python/src/device_runtime.cpp) cannot rot
# where the module itself is not built (it needs a shared libndzip). Skipped, saying so, without
# pybind11 or Python's headers.
#   compile_python_sources OUT_DIR COMPILER [FLAGS...]   (include folders come from the caller)
compile_python_sources() {
  local out="$1" compiler="$2"
  shift 2
  local python_include
  python_include=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  if [ ! -f /usr/include/pybind11/pybind11.h ] || [ ! -f "$python_include/Python.h" ]; then
    echo "compile_python_sources: no pybind11 or Python headers, the extension is not compiled"
    return 0
  fi
  mkdir -p "$out"
  local source
  for source in $(python_extension_sources); do
    "$compiler" "$@" -std=c++17 -fPIC -fvisibility=hidden -I/usr/include/pybind11 \
      "-I$python_include" \
      -c "$root/python/$source" -o "$out/$(basename "$source" .cpp).o"
  done
}
