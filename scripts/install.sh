#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds ndzip-kokkos and installs it into PREFIX: headers, library, the `ndzip` tool, the CMake
# package (find_package(ndzip-kokkos CONFIG)) and the downstream example's sources.
# Usage: scripts/install.sh PREFIX [CMAKE_ARGS...]
# Missing dependencies are installed as for the test command (scripts/install-deps.sh), so the
# library is built against Kokkos 3.4.01 in .deps/kokkos-host unless Kokkos_ROOT names another
# Kokkos. The project's own Kokkos (inside this checkout) is installed into PREFIX beside the
# library, so that the installed tool, library and package keep working once the checkout is
# gone (every installed binary looks in its own prefix's lib first). Builds in build-install/
# (NDZIP_BUILD_DIR overrides). It prints the CMAKE_PREFIX_PATH a downstream project needs, the
# Kokkos prefix included, and last, where the Python package was built (pybind11 and NumPy
# found), the PYTHONPATH that finds it.
set -euo pipefail
if [ $# -lt 1 ] || [ -z "$1" ] || [[ $1 == -* ]]; then
  echo "usage: scripts/install.sh PREFIX [CMAKE_ARGS...]" >&2
  exit 2
fi
prefix=$(realpath -m "$1")
shift
export NDZIP_BUILD_DIR="${NDZIP_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build-install}"
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ndzip_configure -DCMAKE_INSTALL_PREFIX="$prefix" -DNDZIP_BUILD_TOOLS=ON \
  -DNDZIP_BUILD_TESTS=OFF -DNDZIP_BUILD_PERF_TESTS=OFF -DNDZIP_BUILD_FUZZERS=OFF "$@"
ndzip_build
cmake --install "$build" >/dev/null
kokkos_prefix=$(realpath -m "$kokkos_root")
echo "install: ndzip-kokkos installed into $prefix (the ndzip tool is $prefix/bin/ndzip)"
if [[ $kokkos_prefix == "$root"/* ]]; then
  cp -a "$kokkos_prefix"/. "$prefix"/
  echo "install: the Kokkos it was built with ($kokkos_prefix, inside this checkout) is" \
    "installed into $prefix too"
  kokkos_prefix=$prefix
fi
echo "install: a downstream CMake project needs:"
if [ "$kokkos_prefix" = "$prefix" ]; then
  echo "CMAKE_PREFIX_PATH=$prefix"
else
  echo "CMAKE_PREFIX_PATH=$prefix;$kokkos_prefix"
fi
python_dir=$(sed -n 's/^NDZIP_PYTHON_INSTALL_DIR:STRING=//p' "$build/CMakeCache.txt")
if [ -n "$python_dir" ] && [ -f "$prefix/$python_dir/ndzip/__init__.py" ]; then
  python=$(sed -n 's/^NDZIP_PYTHON:FILEPATH=//p' "$build/CMakeCache.txt")
  echo "install: the Python package ndzip (for $python) needs:"
  echo "PYTHONPATH=$prefix/$python_dir"
fi
