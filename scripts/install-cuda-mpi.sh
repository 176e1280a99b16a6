#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds a CUDA-aware MPI from Debian's bookworm source packages into the git-ignored prefix
# .deps/cuda-mpi, for the GPU test of ndzip::mpi (issue 46): UCX 1.13.1 (`ucx`, with Debian's
# patches, which its autogen.sh needs) with its CUDA transports (cuda_copy, cuda_ipc), then
# Open MPI 4.1.4 (the upstream tarball of `openmpi`) with CUDA support over that UCX. Debian's
# own openmpi is built without CUDA.
#
# Both use Debian's CUDA 11.8 toolkit (headers in /usr/include, libraries in
# /usr/lib/x86_64-linux-gnu: `scripts/install-deps.sh --cuda`) and the default host compiler;
# neither compiles CUDA code, so nvcc's g++-11 limit does not apply. Everything optional that
# would pull in another shared library is left out (verbs, rdmacm, knem, xpmem, gdrcopy, NUMA,
# FUSE, libfabric, zlib, libnl, Fortran, Java, OpenSHMEM, ROMIO); hwloc, libevent and PMIx are Open
# MPI's internal copies. The prefix is relocatable, so it can be copied to a GPU machine with a
# newer glibc: Open MPI follows OPAL_PREFIX, UCX finds its modules beside libucs.so. What it then
# needs besides glibc and the C/C++ runtime is the NVIDIA driver (libcuda.so.1,
# libnvidia-ml.so.1) and libcudart.so.11.0 (carried along, on LD_LIBRARY_PATH).
#
# The prefix is reused while the versions and arguments it was built with are unchanged (a
# stamp file in it); the sources are kept in .deps/src. Set NDZIP_CUDA_MPI_PREFIX for another
# prefix. Builds run niced with at most 2 jobs (NDZIP_CUDA_MPI_JOBS to change).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps="$root/.deps"
src="$deps/src"
prefix="${NDZIP_CUDA_MPI_PREFIX:-$deps/cuda-mpi}"
jobs="${NDZIP_CUDA_MPI_JOBS:-2}"
cuda_dir=/usr

# Nothing of another CUDA (CUDA_HOME, its bin/ early in PATH) or another MPI may leak in.
source "$root/scripts/debian-cuda-env.sh"
unset OPAL_PREFIX CPATH C_INCLUDE_PATH

source "$root/scripts/debian-apt.sh"

say() { echo "install-cuda-mpi: $*"; }
die() { echo "install-cuda-mpi: $*" >&2; exit 1; }

# The CUDA toolkit comes from install-deps.sh --cuda (non-free); here only check for it.
for f in "$cuda_dir/include/cuda.h" "$cuda_dir/include/cuda_runtime.h" "$cuda_dir/include/nvml.h"; do
  [ -f "$f" ] || die "$f not found: install Debian's CUDA toolkit first (scripts/install-deps.sh --cuda-mpi)"
done

# UCX's Debian source has no configure script: autogen.sh needs the autotools.
install_missing_packages install-cuda-mpi build-essential dpkg-dev autoconf automake libtool \
  pkg-config

# download_source NAME: Debian's source package NAME (.dsc, orig and debian tarballs) into
# .deps/src, once.
download_source() {
  local name=$1
  ls "$src/${name}"_*.dsc >/dev/null 2>&1 && return 0
  say "downloading Debian's $name source package into $src"
  download_debian_source "$name" "$src"
}

# dsc_version NAME: the Debian version of the downloaded source package (e.g. 1.13.1-1).
dsc_version() {
  sed -n 's/^Version: //p' "$(ls "$src/$1"_*.dsc | head -n 1)"
}

download_source ucx
download_source openmpi
ucx_deb=$(dsc_version ucx)
ompi_deb=$(dsc_version openmpi)
ucx_version=${ucx_deb%-*}
ompi_version=${ompi_deb%-*}

ucx_args=(--prefix="$prefix" --disable-static --enable-mt
  --with-cuda="$cuda_dir" --without-rocm --without-gdrcopy
  --without-verbs --without-rdmacm --without-knem --without-xpmem --without-ugni
  --disable-numa --without-fuse3 --without-java --without-go --without-mpi --without-valgrind
  --disable-backtrace-detail --disable-doxygen-doc
  --disable-debug --disable-assertions --disable-params-check)
ompi_args=(--prefix="$prefix" --disable-static
  --with-cuda="$cuda_dir" --with-ucx="$prefix" --with-ucx-libdir="$prefix/lib"
  --with-hwloc=internal --with-libevent=internal --with-pmix=internal
  --disable-mpi-fortran --disable-mpi-java --disable-oshmem --disable-io-romio
  --without-verbs --without-ofi --without-psm --without-psm2 --without-knem --without-xpmem
  --without-ugni --without-hcoll --without-fca --without-mxm --without-portals4
  --without-zlib --without-valgrind --enable-mca-no-build=reachable-netlink)

stamp="$prefix/.ndzip-cuda-mpi-build-args"
wanted="ucx $ucx_deb: ${ucx_args[*]}; openmpi $ompi_deb: ${ompi_args[*]}"

# verify: the checks that this is a CUDA-aware MPI over a CUDA-capable UCX (no GPU needed).
verify() {
  local tmp out
  export OPAL_PREFIX="$prefix" PATH="$prefix/bin:$PATH"
  export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  out=$(ompi_info --parsable --all | grep 'mpi_built_with_cuda_support:value') || true
  say "ompi_info: $out"
  [ "$out" = "mca:mpi:base:param:mpi_built_with_cuda_support:value:true" ] ||
    die "Open MPI in $prefix was not built with CUDA support"
  local m
  for m in libuct_cuda.so libucx_perftest_cuda.so libucm_cuda.so; do
    [ -f "$prefix/lib/ucx/$m" ] || die "UCX's CUDA module $prefix/lib/ucx/$m is missing"
  done
  for m in cuda_copy cuda_ipc; do
    strings "$prefix/lib/ucx/libuct_cuda.so" | grep -x "$m" >/dev/null || die "libuct_cuda.so has no $m transport"
  done
  # Without a GPU (or driver) the CUDA transports do not open; ucx_info then lists none.
  out=$(ucx_info -d 2>/dev/null | grep -i 'transport: *cuda' | tr -s ' \n' ' ') || true
  say "ucx_info -d CUDA transports: ${out:-none (no GPU here; libuct_cuda.so has cuda_copy and cuda_ipc)}"
  tmp=$(mktemp -d)
  cat >"$tmp/cuda_aware.c" <<'EOF'
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank, size, value = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 2) { /* a host-memory message through the selected PML */
    if (rank == 0) {
      value = 42;
      MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      printf("rank 1 received %d\n", value);
    }
  } else {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    printf("compile time CUDA-aware: yes; run time MPIX_Query_cuda_support(): %d\n",
           MPIX_Query_cuda_support());
#else
    printf("compile time CUDA-aware: no\n");
#endif
  }
  MPI_Finalize();
  return 0;
}
EOF
  mpicc "$tmp/cuda_aware.c" -o "$tmp/cuda_aware" || die "mpicc could not build the MPIX_Query_cuda_support() check"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  out=$(timeout 120 mpiexec -n 1 "$tmp/cuda_aware" 2>&1) || { rm -rf "$tmp"; die "mpiexec -n 1 failed: $out"; }
  say "mpiexec -n 1: $out"
  echo "$out" | grep -q 'compile time CUDA-aware: yes' ||
    { rm -rf "$tmp"; die "mpi-ext.h does not declare CUDA awareness"; }
  # Open MPI takes UCX by itself only with InfiniBand or cuda_ipc (a GPU): force it here.
  out=$(timeout 120 mpiexec -n 2 --oversubscribe --mca pml ucx --mca pml_ucx_tls any \
    --mca pml_ucx_devices any "$tmp/cuda_aware" 2>&1) ||
    { rm -rf "$tmp"; die "mpiexec -n 2 over UCX failed: $out"; }
  rm -rf "$tmp"
  say "mpiexec -n 2 --mca pml ucx: $out"
}

usage() {
  cat <<EOF
install-cuda-mpi: CUDA-aware Open MPI $ompi_version over UCX $ucx_version in $prefix. To use it
(also after copying the prefix elsewhere: set the variables to the new place; carry
libcudart.so.11.0 into its lib/ or onto LD_LIBRARY_PATH):
  export OPAL_PREFIX=$prefix
  export PATH=\$OPAL_PREFIX/bin:\$PATH
  export LD_LIBRARY_PATH=\$OPAL_PREFIX/lib:\$LD_LIBRARY_PATH
Open MPI takes UCX (pml ucx) by itself where UCX finds cuda_ipc (a GPU) or InfiniBand; to force it:
  mpiexec --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any ...
EOF
}

if [ -f "$prefix/bin/ompi_info" ] && [ -f "$prefix/lib/libucp.so" ] && [ -f "$stamp" ] &&
  [ "$(cat "$stamp")" = "$wanted" ]; then
  say "$prefix is up to date"
  verify
  usage
  exit 0
fi

if [ -e "$prefix" ]; then
  # Rebuilt with other arguments: only a prefix of this script's own is replaced.
  [[ $prefix == "$deps"/* ]] || [ -f "$stamp" ] ||
    die "$prefix exists and was not built by this script; remove it or pick another NDZIP_CUDA_MPI_PREFIX"
  rm -rf "$prefix"
fi

build="$deps/cuda-mpi-build"
rm -rf "$build"
mkdir -p "$build"

# UCX: Debian's source package with its patches (they drop the debian/ files the upstream
# configure.ac wants), then autogen.sh.
ucx_src="$src/ucx-$ucx_version"
if [ ! -x "$ucx_src/configure" ]; then
  rm -rf "$ucx_src"
  say "extracting UCX $ucx_deb into $ucx_src"
  (cd "$src" && dpkg-source -x "$(ls ucx_*.dsc | head -n 1)" "ucx-$ucx_version" >/dev/null 2>&1) ||
    die "dpkg-source could not extract the ucx source package"
  # autogen.sh bakes `git rev-parse HEAD` into ucx_info -v: not this checkout's commit.
  (cd "$ucx_src" && GIT_CEILING_DIRECTORIES="$src" ./autogen.sh >"$deps/cuda-mpi-ucx-autogen.log" 2>&1) ||
    { tail -n 40 "$deps/cuda-mpi-ucx-autogen.log" >&2; die "UCX's autogen.sh failed"; }
fi

# Open MPI: the release tarball has its configure script; Debian's patches are for packaging and
# other architectures.
ompi_src="$src/openmpi-$ompi_version"
if [ ! -x "$ompi_src/configure" ]; then
  rm -rf "$ompi_src"
  say "extracting Open MPI $ompi_version into $ompi_src"
  tar -xf "$(ls "$src"/openmpi_"$ompi_version".orig.tar.* | head -n 1)" -C "$src"
  [ -x "$ompi_src/configure" ] || die "$ompi_src/configure not found"
fi

# build_autotools NAME SRC ARGS...: configure, make and install out of tree, logs in .deps.
build_autotools() {
  local name=$1 dir=$2 start=$SECONDS
  shift 2
  local log="$deps/cuda-mpi-$name"
  mkdir -p "$build/$name"
  say "configuring $name (log $log-configure.log)"
  (cd "$build/$name" && nice -n 15 "$dir/configure" "$@" >"$log-configure.log" 2>&1) ||
    { tail -n 40 "$log-configure.log" >&2; die "configuring $name failed"; }
  say "building $name with $jobs jobs (log $log-build.log)"
  (cd "$build/$name" && nice -n 15 make -j "$jobs" >"$log-build.log" 2>&1 &&
    nice -n 15 make install >>"$log-build.log" 2>&1) ||
    { tail -n 40 "$log-build.log" >&2; die "building $name failed"; }
  say "$name built and installed in $((SECONDS - start)) s"
}

build_autotools ucx "$ucx_src" "${ucx_args[@]}"
build_autotools openmpi "$ompi_src" "${ompi_args[@]}"
printf '%s' "$wanted" >"$stamp"
rm -rf "$build"

verify
usage
