#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Checks the installed package the way a user meets it (CI runs this):
#  1. scripts/install.sh into a temporary prefix;
#  2. the downstream example (examples/downstream, as installed under share/) configured with
#     only the printed CMAKE_PREFIX_PATH, built and run: it must report a bit-exact round trip;
#  3. the installed `ndzip --version` reports the project version;
#  4. find_package(ndzip-kokkos) refuses, with its message, a Kokkos whose backends differ from
#     the ones the library was built for (a stand-in KokkosConfig.cmake with other devices).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ndzip-test-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "test-install: FAIL: $*" >&2; exit 1; }

"$root/scripts/install.sh" "$work/prefix" | tee "$work/install.log"
prefix_path=$(sed -n 's/^CMAKE_PREFIX_PATH=//p' "$work/install.log" | tail -n 1)
[ -n "$prefix_path" ] || fail "install.sh printed no CMAKE_PREFIX_PATH"
example="$work/prefix/share/ndzip-kokkos/examples/downstream"
[ -f "$example/CMakeLists.txt" ] || fail "the downstream example is not installed"

echo "test-install: building the downstream example against the installed package"
cmake -S "$example" -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix_path" >"$work/example-configure.log" 2>&1 ||
  { cat "$work/example-configure.log"; fail "the example does not configure"; }
cmake --build "$work/example" >"$work/example-build.log" 2>&1 ||
  { cat "$work/example-build.log"; fail "the example does not build"; }
OMP_NUM_THREADS=2 OMP_PROC_BIND=false "$work/example/ndzip-downstream-example" 64 | tee "$work/run.log"
grep -q "bit-exact" "$work/run.log" || fail "the example did not report a bit-exact round trip"

version=$(sed -nE 's/^project\(ndzip-kokkos VERSION ([0-9.]+).*/\1/p' "$root/CMakeLists.txt")
"$work/prefix/bin/ndzip" --version | grep -qx "ndzip $version" ||
  fail "'ndzip --version' does not say 'ndzip $version': $("$work/prefix/bin/ndzip" --version)"

echo "test-install: a Kokkos with other backends must be refused"
mkdir -p "$work/other-kokkos/lib/cmake/Kokkos"
cat >"$work/other-kokkos/lib/cmake/Kokkos/KokkosConfig.cmake" <<'CMAKE'
set(Kokkos_VERSION 4.6.1)
set(Kokkos_DEVICES SERIAL;CUDA)
CMAKE
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
echo "test-install: OK"
