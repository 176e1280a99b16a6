#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds the Python package with CUDA for a GPU machine whose Python differs from this one's
# (docs/PYTHON.md, "GPU arrays"): libndzip shared against a CUDA build of Kokkos, the extension
# compiled for the target interpreter's headers, and the package with its libraries packed into
# one archive, to be carried to that machine and tested there (scripts/test-python-gpu.sh).
#
#   scripts/build-python-gpu.sh --kokkos PREFIX --python-include DIR [--python-include DIR] \
#       --pybind11 DIR [--ext-suffix .cpython-312-x86_64-linux-gnu.so] [--arch sm_90] \
#       [--cudart FILE] [--build DIR] [--out FILE.tar.xz]
#
# --kokkos: a shared Kokkos with CUDA, with its nvcc_wrapper (bin/); --python-include: Python.h
# of the target interpreter (and, where Debian-style multiarch headers keep pyconfig.h apart,
# the folder holding x86_64-linux-gnu/python3.12/);
# --pybind11: pybind11's include folder (2.12 or later for NumPy 2); --cudart: the CUDA runtime
# the build links (libcudart.so.11.0), packed beside the libraries where the target has none.
# Uses Debian's CUDA 11.8 with g++-11 (scripts/debian-cuda-env.sh). The archive unpacks into a
# folder for PYTHONPATH holding ndzip/ (the package, libndzip and Kokkos' libraries beside the
# extension, found through its RPATH $ORIGIN).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

kokkos="" pybind11="" arch=sm_90 cudart="" suffix=".cpython-312-x86_64-linux-gnu.so"
build="$root/build-python-gpu" out="" python_includes=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kokkos) kokkos="$2"; shift 2 ;;
    --python-include) python_includes+=("$2"); shift 2 ;;
    --pybind11) pybind11="$2"; shift 2 ;;
    --ext-suffix) suffix="$2"; shift 2 ;;
    --arch) arch="$2"; shift 2 ;;
    --cudart) cudart="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "build-python-gpu: unknown argument '$1' (see the script's head)" >&2; exit 2 ;;
  esac
done
[[ -x "$kokkos/bin/nvcc_wrapper" ]] ||
  { echo "build-python-gpu: --kokkos must name a CUDA Kokkos prefix with bin/nvcc_wrapper" >&2; exit 2; }
[[ ${#python_includes[@]} -gt 0 && -f "${python_includes[0]}/Python.h" ]] ||
  { echo "build-python-gpu: --python-include must name the folder of the target's Python.h" >&2; exit 2; }
[[ -f "$pybind11/pybind11/pybind11.h" ]] ||
  { echo "build-python-gpu: --pybind11 must name pybind11's include folder" >&2; exit 2; }
out="${out:-$build/ndzip-python-gpu.tar.xz}"

source "$root/scripts/debian-cuda-env.sh"
# libndzip, shared, without the project's other parts.
cmake -S "$root" -B "$build/lib" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DKokkos_DIR="$kokkos/lib/cmake/Kokkos" -DBUILD_SHARED_LIBS=ON \
  -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=$arch" \
  -DCUDAToolkit_INCLUDE_DIR=/usr/include \
  -DNDZIP_BUILD_PYTHON=OFF -DNDZIP_BUILD_TESTS=OFF -DNDZIP_BUILD_TOOLS=OFF \
  -DNDZIP_BUILD_PERF_TESTS=OFF -DNDZIP_BUILD_HDF5_PLUGIN=OFF -DNDZIP_BUILD_FUZZERS=OFF \
  -DNDZIP_ENABLE_MPI=OFF >/dev/null
cmake --build "$build/lib" -j "$jobs" --target ndzip

# The extension: the sources python/CMakeLists.txt lists, for the target interpreter.
package="$build/package/ndzip"
rm -rf "$build/package" && mkdir -p "$package" "$build/objects"
# Joined: nvcc_wrapper passes a separate -I's folder on as an option of its own.
includes=("-I$pybind11" "-I$root/include" "-I$build/lib/include" -isystem "$kokkos/include")
for dir in "${python_includes[@]}"; do includes+=("-I$dir"); done
objects=()
for source in $(python_extension_sources); do
  object="$build/objects/$(basename "$source" .cpp).o"
  "$kokkos/bin/nvcc_wrapper" -arch="$arch" -O2 -std=c++17 -fPIC -fvisibility=hidden -fopenmp \
    "${includes[@]}" -c "$root/python/$source" -o "$object" &
  objects+=("$object")
done
wait
g++-11 -shared -fopenmp -o "$package/_ndzip$suffix" "${objects[@]}" -Wl,-rpath,'$ORIGIN' \
  -L "$build/lib" -L "$kokkos/lib" -lndzip -lkokkoscore -lkokkoscontainers -lcudart

# The package: its modules, a build configuration without the HDF5 plugin, the libraries.
sed -n '/set(python_sources/p' "$root/python/CMakeLists.txt" | grep -o '[a-z0-9_]*\.py' |
  while read -r module; do cp "$root/python/ndzip/$module" "$package/"; done
sed -e 's/@NDZIP_FILTER_ID@/0/' -e 's/@NDZIP_PLUGIN_FROM_PACKAGE@//' \
  "$root/python/ndzip/_build_config.py.in" >"$package/_build_config.py"
cp -P "$build/lib"/libndzip.so* "$package/"
cp -P "$kokkos"/lib/libkokkoscore.so* "$kokkos"/lib/libkokkoscontainers.so* "$package/"
[[ -z "$cudart" ]] || cp "$cudart" "$package/"
tar -C "$build/package" -cJf "$out" ndzip
echo "build-python-gpu: $out ($(du -h "$out" | cut -f1)); on the GPU machine:" \
     "scripts/test-python-gpu.sh $out"
