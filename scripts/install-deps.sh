#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs what ndzip-kokkos needs on a Debian machine, idempotently:
#  - Debian packages: compiler, cmake, ninja, doctest, xxHash (library; xxhsum for the CLI
#    tests), CLI11 (option parsing of the CLI and the benchmark), OpenSSL (test-only SHA-256), strace (the CLI test sees the directory fsync), time (/usr/bin/time -v: peak RSS in scripts/bench-streaming.sh),
#    the benchmark's peer codecs (zstd, LZ4, Blosc, fpzip, zfp), and HDF5 with its tools, h5py,
#    hdf5plugin and the LZ4, Blosc and zfp HDF5 filters (which Debian's hdf5plugin only
#    recommends) for the HDF5 filter plugin's tests and benchmark (plugins/hdf5), and Open MPI
#    for ndzip::mpi and its tests under mpiexec (mpi/), and pybind11, pytest, Zarr and
#    numcodecs for the Python module and its tests (python/);
#  - Kokkos 3.4.01 (Serial + OpenMP) built from the `packages/kokkos` folder of Debian's
#    bookworm `trilinos` source package into the git-ignored prefix .deps/kokkos-host, as shared
#    libraries (position-independent), so that libndzip.so and the HDF5 filter plugin can link
#    it and share one Kokkos with the application;
#  - Kokkos Kernels 3.4.01 from the same package's `packages/kokkos-kernels`, against that
#    Kokkos, into .deps/kokkos-kernels-host (no explicit instantiations: a few seconds; the
#    example that uses it compiles the kernels it calls). Only examples/cg_checkpoint needs it,
#    never the library.
# A user with their own Kokkos skips this and passes -DKokkos_ROOT=... to CMake.
# With NDZIP_SKIP_KOKKOS=1 (set by the other scripts when Kokkos_ROOT is given) only the Debian
# packages are installed.
#
# With --cuda it also installs Debian's CUDA toolkit (11.8, from non-free) and g++-11, and builds
# the same Kokkos with CUDA (arch AMPERE80, lambdas enabled) into .deps/kokkos-cuda, for the CUDA
# compile check of scripts/build-cuda.sh (no GPU needed).
#
# With --cuda-mpi it also installs the CUDA toolkit as --cuda does (not the CUDA Kokkos) and runs
# scripts/install-cuda-mpi.sh: a CUDA-aware Open MPI 4.1.4 over UCX 1.13.1, built from Debian's
# source packages into .deps/cuda-mpi, relocatable, for the GPU test of ndzip::mpi.
#
# With --hip it also installs Debian's hipcc (ROCm 5.2.3) and builds the same Kokkos with HIP
# (arch VEGA908, the newest Kokkos 3.4 knows) into .deps/kokkos-hip, for the HIP compile check
# of scripts/build-hip.sh (no GPU needed).
#
# With --fuzz it also installs Clang 14 with libFuzzer and builds a Serial-only Kokkos with it
# into .deps/kokkos-fuzz, for the fuzz targets (scripts/run-fuzz.sh).
#
# With --threads it also builds Kokkos with the Threads backend (Serial + Threads, shared) into
# .deps/kokkos-threads, for the check that a Threads-default Kokkos links (scripts/test-install.sh).
#
# A prefix is reused while the arguments it was built with are unchanged (a stamp file in it).
set -euo pipefail

with_cuda=0
with_cuda_mpi=0
with_hip=0
with_fuzz=0
with_threads=0
for arg in "$@"; do
  case "$arg" in
    --cuda) with_cuda=1 ;;
    --cuda-mpi) with_cuda_mpi=1 ;;
    --hip) with_hip=1 ;;
    --fuzz) with_fuzz=1 ;;
    --threads) with_threads=1 ;;
    *) echo "install-deps: unknown argument '$arg' (--cuda, --cuda-mpi, --hip, --fuzz, --threads)" >&2; exit 2 ;;
  esac
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps="$root/.deps"
kokkos_prefix="${NDZIP_KOKKOS_PREFIX:-$deps/kokkos-host}"
jobs=$(nproc 2>/dev/null || echo 2)

source "$root/scripts/debian-apt.sh"

packages=(build-essential cmake ninja-build doctest-dev libxxhash-dev xxhash libssl-dev dpkg-dev python3 strace time
  libcli11-dev
  libzstd-dev liblz4-dev libblosc-dev libfpzip-dev libzfp-dev
  libhdf5-dev hdf5-tools python3-h5py python3-hdf5plugin python3-numpy
  hdf5-filter-plugin hdf5-filter-plugin-blosc-serial hdf5-filter-plugin-zfp-serial
  openmpi-bin libopenmpi-dev
  pybind11-dev python3-dev python3-pytest python3-zarr python3-numcodecs)
if [ "$with_cuda" = 1 ] || [ "$with_cuda_mpi" = 1 ]; then
  packages+=(nvidia-cuda-toolkit g++-11)
  # The toolkit is in non-free: enable it (with contrib) for the configured Debian sources.
  if ! grep -rqsE '^Components:.*non-free( |$)|^deb .*debian.* non-free( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "install-deps: enabling Debian's contrib and non-free components (CUDA toolkit)"
    edit_debian_sources 's/^Components: main$/Components: main contrib non-free/'
    if [ -f /etc/apt/sources.list ]; then
      "${sudo_cmd[@]}" sed -i -E '/^deb(-src)? .*debian/ s/ main$/ main contrib non-free/' /etc/apt/sources.list
    fi
  fi
fi

if [ "$with_cuda_mpi" = 1 ]; then
  # UCX's Debian source has no configure script: autogen.sh needs the autotools.
  packages+=(autoconf automake libtool pkg-config)
fi

if [ "$with_hip" = 1 ]; then
  packages+=(hipcc)
fi

if [ "$with_fuzz" = 1 ]; then
  packages+=(clang-14 libclang-rt-14-dev)
fi

install_missing_packages install-deps "${packages[@]}"

if [ "$with_cuda_mpi" = 1 ]; then
  "$root/scripts/install-cuda-mpi.sh"
fi

# Debian has no standalone Kokkos, but its trilinos source package ships Kokkos and Kokkos Kernels
# 3.4.01 as packages/kokkos and packages/kokkos-kernels.
download_trilinos_source() {
  ls "$deps"/trilinos/trilinos_*.orig.tar.* >/dev/null 2>&1 && return 0
  echo "install-deps: downloading the trilinos source package (contains Kokkos 3.4.01)"
  download_debian_source trilinos "$deps/trilinos"
}

# extract_trilinos_package NAME DEST: packages/NAME of the trilinos source into DEST, once.
extract_trilinos_package() {
  local name=$1 dest=$2
  [ -f "$dest/CMakeLists.txt" ] && return 0
  download_trilinos_source
  local tarball found
  tarball=$(ls "$deps"/trilinos/trilinos_*.orig.tar.* | head -n 1)
  echo "install-deps: extracting packages/$name from $tarball"
  rm -rf "$deps/trilinos/extract" && mkdir "$deps/trilinos/extract"
  tar -xf "$tarball" -C "$deps/trilinos/extract" --wildcards "*/packages/$name/*"
  found=$(find "$deps/trilinos/extract" -maxdepth 3 -type d -path "*/packages/$name" | head -n 1)
  [ -n "$found" ] || { echo "install-deps: packages/$name not found in the trilinos source" >&2; exit 1; }
  rm -rf "$dest"
  mv "$found" "$dest"
  rm -rf "$deps/trilinos/extract"
}

kokkos_src="$deps/kokkos-3.4.01-src"
fetch_kokkos_source() { extract_trilinos_package kokkos "$kokkos_src"; }
kokkos_kernels_src="$deps/kokkos-kernels-3.4.01-src"
fetch_kokkos_kernels_source() { extract_trilinos_package kokkos-kernels "$kokkos_kernels_src"; }

if [ -n "${NDZIP_SKIP_KOKKOS:-}" ]; then
  echo "install-deps: using the Kokkos given by Kokkos_ROOT"
  exit 0
fi

# build_kokkos PREFIX LOG_NAME CMAKE_ARGS...: configure, build and install the Kokkos sources.
build_kokkos() {
  local prefix=$1 name=$2
  shift 2
  local stamp="$prefix/.ndzip-kokkos-build-args" wanted="$*"
  if [ -f "$prefix/lib/cmake/Kokkos/KokkosConfig.cmake" ] && [ -f "$stamp" ] &&
    [ "$(cat "$stamp")" = "$wanted" ]; then
    return 0
  fi
  if [ -e "$prefix" ]; then
    # Rebuilt with other arguments: only a prefix of this script's own is replaced.
    [[ $prefix == "$deps"/* ]] || [ -f "$stamp" ] ||
      { echo "install-deps: $prefix exists and was not built by this script; remove it or pick another NDZIP_KOKKOS_PREFIX" >&2; exit 1; }
    rm -rf "$prefix"
  fi
  fetch_kokkos_source
  echo "install-deps: building Kokkos 3.4.01 ($name) into $prefix"
  local build="$deps/kokkos-$name-build"
  rm -rf "$build"
  cmake -S "$kokkos_src" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_INSTALL_LIBDIR=lib \
    -DCMAKE_CXX_STANDARD=17 \
    -DKokkos_ENABLE_SERIAL=ON \
    -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF "$@" >"$deps/kokkos-$name-configure.log" 2>&1 ||
    { tail -n 40 "$deps/kokkos-$name-configure.log" >&2; exit 1; }
  cmake --build "$build" -j "$jobs" >"$deps/kokkos-$name-build.log" 2>&1 ||
    { tail -n 40 "$deps/kokkos-$name-build.log" >&2; exit 1; }
  cmake --install "$build" >/dev/null
  printf '%s' "$wanted" >"$stamp"
  rm -rf "$build"
}

build_kokkos "$kokkos_prefix" host -DKokkos_ENABLE_OPENMP=ON -DBUILD_SHARED_LIBS=ON
echo "install-deps: Kokkos prefix $kokkos_prefix"

# build_kokkos_kernels PREFIX KOKKOS_PREFIX: Kokkos Kernels against that Kokkos, without
# explicit instantiations, reused while the Kokkos it was built against is unchanged.
build_kokkos_kernels() {
  local prefix=$1 kokkos=$2
  local stamp="$prefix/.ndzip-kokkos-kernels-build-args" wanted
  wanted="kokkos=$kokkos $(cat "$kokkos/.ndzip-kokkos-build-args" 2>/dev/null)"
  if [ -f "$prefix/lib/cmake/KokkosKernels/KokkosKernelsConfig.cmake" ] && [ -f "$stamp" ] &&
    [ "$(cat "$stamp")" = "$wanted" ]; then
    return 0
  fi
  rm -rf "$prefix"
  fetch_kokkos_kernels_source
  echo "install-deps: building Kokkos Kernels 3.4.01 into $prefix"
  local build="$deps/kokkos-kernels-build"
  rm -rf "$build"
  cmake -S "$kokkos_kernels_src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_CXX_STANDARD=17 \
    -DKokkos_ROOT="$kokkos" -DBUILD_SHARED_LIBS=ON -DKokkosKernels_ENABLE_TESTS=OFF \
    -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_ORDINAL_INT=OFF \
    -DKokkosKernels_INST_OFFSET_INT=OFF -DKokkosKernels_INST_OFFSET_SIZE_T=OFF \
    -DKokkosKernels_INST_LAYOUTLEFT=OFF >"$deps/kokkos-kernels-configure.log" 2>&1 ||
    { tail -n 40 "$deps/kokkos-kernels-configure.log" >&2; exit 1; }
  cmake --build "$build" -j "$jobs" >"$deps/kokkos-kernels-build.log" 2>&1 ||
    { tail -n 40 "$deps/kokkos-kernels-build.log" >&2; exit 1; }
  cmake --install "$build" >/dev/null
  printf '%s' "$wanted" >"$stamp"
  rm -rf "$build"
}
build_kokkos_kernels "$deps/kokkos-kernels-host" "$kokkos_prefix"
echo "install-deps: Kokkos Kernels prefix $deps/kokkos-kernels-host"

if [ "$with_cuda" = 1 ]; then
  cuda_prefix="$deps/kokkos-cuda"
  (
    source "$root/scripts/debian-cuda-env.sh"
    build_kokkos "$cuda_prefix" cuda \
      -DCMAKE_CXX_COMPILER="$kokkos_src/bin/nvcc_wrapper" \
      -DCMAKE_CXX_FLAGS="-arch=sm_80" \
      -DCUDAToolkit_INCLUDE_DIR=/usr/include \
      -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_AMPERE80=ON
  )
  echo "install-deps: Kokkos (CUDA) prefix $cuda_prefix"
fi

if [ "$with_hip" = 1 ]; then
  hip_prefix="$deps/kokkos-hip"
  # Without an AMD GPU, hipcc's rocm_agent_enumerator prints a harmless Python traceback.
  build_kokkos "$hip_prefix" hip -DCMAKE_CXX_COMPILER=hipcc \
    -DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_VEGA908=ON
  echo "install-deps: Kokkos (HIP) prefix $hip_prefix"
fi

if [ "$with_threads" = 1 ]; then
  threads_prefix="$deps/kokkos-threads"
  # Kokkos 3.x calls the Threads backend PTHREAD.
  build_kokkos "$threads_prefix" threads -DKokkos_ENABLE_PTHREAD=ON -DBUILD_SHARED_LIBS=ON
  echo "install-deps: Kokkos (Threads) prefix $threads_prefix"
fi

if [ "$with_fuzz" = 1 ]; then
  fuzz_prefix="$deps/kokkos-fuzz"
  build_kokkos "$fuzz_prefix" fuzz -DCMAKE_CXX_COMPILER=clang++-14
  echo "install-deps: Kokkos (Clang, Serial) prefix $fuzz_prefix"
fi
