#!/usr/bin/env bash
# Installs what ndzip-kokkos needs on a Debian machine, idempotently:
#  - Debian packages: compiler, cmake, ninja, doctest, xxhash, OpenSSL (test-only SHA-256);
#  - Kokkos 3.4.01 (Serial + OpenMP) built from the `packages/kokkos` folder of Debian's
#    bookworm `trilinos` source package into the git-ignored prefix .deps/kokkos-host.
# A user with their own Kokkos skips this and passes -DKokkos_ROOT=... to CMake.
# With NDZIP_SKIP_KOKKOS=1 (set by the other scripts when Kokkos_ROOT is given) only the Debian
# packages are installed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps="$root/.deps"
kokkos_prefix="${NDZIP_KOKKOS_PREFIX:-$deps/kokkos-host}"
jobs=$(nproc 2>/dev/null || echo 2)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

packages=(build-essential cmake ninja-build doctest-dev libxxhash-dev libssl-dev dpkg-dev python3)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

apt_updated=0
apt_update() {
  if [ "$apt_updated" = 0 ]; then
    "${sudo_cmd[@]}" apt-get update -qq
    apt_updated=1
  fi
}

if ((${#missing[@]})); then
  echo "install-deps: installing Debian packages: ${missing[*]}"
  apt_update
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Kokkos sources: Debian has no standalone Kokkos, but trilinos ships Kokkos 3.4.01 as packages/kokkos.
kokkos_src="$deps/kokkos-3.4.01-src"
fetch_kokkos_source() {
  [ -f "$kokkos_src/CMakeLists.txt" ] && return 0
  # apt-get source needs deb-src entries; add them beside the configured deb sources.
  if ! grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "install-deps: enabling deb-src for the configured Debian sources"
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      grep -q 'debian' "$f" || continue
      "${sudo_cmd[@]}" sed -i -E 's/^Types: deb$/Types: deb deb-src/' "$f"
    done
    if [ -f /etc/apt/sources.list ] && grep -qE '^deb .*debian' /etc/apt/sources.list; then
      grep -E '^deb .*debian' /etc/apt/sources.list | sed 's/^deb /deb-src /' |
        "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/ndzip-deb-src.list >/dev/null
    fi
    apt_updated=0
  fi
  apt_update
  mkdir -p "$deps/trilinos"
  (
    cd "$deps/trilinos"
    if ! ls trilinos_*.orig.tar.* >/dev/null 2>&1; then
      echo "install-deps: downloading the trilinos source package (contains Kokkos 3.4.01)"
      apt-get source --download-only -qq trilinos >/dev/null
    fi
    tarball=$(ls trilinos_*.orig.tar.* | head -n 1)
    echo "install-deps: extracting packages/kokkos from $tarball"
    rm -rf extract && mkdir extract
    tar -xf "$tarball" -C extract --wildcards '*/packages/kokkos/*'
  )
  local found
  found=$(find "$deps/trilinos/extract" -maxdepth 3 -type d -path '*/packages/kokkos' | head -n 1)
  [ -n "$found" ] || { echo "install-deps: packages/kokkos not found in the trilinos source" >&2; exit 1; }
  rm -rf "$kokkos_src"
  mv "$found" "$kokkos_src"
  rm -rf "$deps/trilinos/extract"
}

if [ -n "${NDZIP_SKIP_KOKKOS:-}" ]; then
  echo "install-deps: using the Kokkos given by Kokkos_ROOT"
  exit 0
fi

if [ ! -f "$kokkos_prefix/lib/cmake/Kokkos/KokkosConfig.cmake" ] && [ ! -f "$kokkos_prefix/lib64/cmake/Kokkos/KokkosConfig.cmake" ]; then
  fetch_kokkos_source
  echo "install-deps: building Kokkos 3.4.01 (Serial + OpenMP) into $kokkos_prefix"
  build="$deps/kokkos-host-build"
  rm -rf "$build"
  cmake -S "$kokkos_src" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$kokkos_prefix" \
    -DCMAKE_CXX_STANDARD=17 \
    -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON \
    -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF >"$deps/kokkos-host-configure.log" 2>&1 ||
    { tail -n 40 "$deps/kokkos-host-configure.log" >&2; exit 1; }
  cmake --build "$build" -j "$jobs" >"$deps/kokkos-host-build.log" 2>&1 ||
    { tail -n 40 "$deps/kokkos-host-build.log" >&2; exit 1; }
  cmake --install "$build" >/dev/null
  rm -rf "$build"
fi
echo "install-deps: Kokkos prefix $kokkos_prefix"
