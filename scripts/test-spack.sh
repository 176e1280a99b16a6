#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The Spack package (spack/) installed and tested by a real Spack, offline: Spack 0.23 from the
# kit beside the checkout (../shared/spack-kit: Spack, the clingo module its concretizer needs,
# a source mirror; its README says what was found to work), unpacked into .deps/spack and reused
# while the kit is unchanged, with its configuration and caches there (never ~/.spack). Steps:
#  1. `spack spec` of the variant matrix the recipe advertises (three specs and one refusal
#     without --full, all of them with it): each spec concretizes, or is refused by a conflict
#     whose message the recipe gives;
#  2. `spack install --test=root ndzip-kokkos@main +openmp` of a copy of this working tree
#     (`spack develop`, so no link is written into the checkout) against the project's own
#     Kokkos 3.4.01 (.deps/kokkos-host, an external) and Spack's CLI11 2.4.1 built from the
#     mirror: --test=root builds the installed downstream example with find_package and runs
#     it (the recipe's check_downstream_example);
#  3. `spack test run`: the same example against the installed spec;
#  4. the CLI's own tests (tools/tests) against the installed `ndzip`, built with CLI11 2.4.1
#     where the other builds use Debian's 2.1.2: the options parse alike with both;
#  5. the installed binaries need nothing of xxhash at run time (a build dependency only);
#  with --full also the whole matrix of step 1, and
#  6. the same install against Kokkos 4.3.01 built by Spack from the mirror;
#  7. `+tests --test=root`: the project's whole test suite built and run by Spack.
# Skipped, saying so, where the kit is absent. CI runs steps 1 to 5 (.ci/run).
# Usage: scripts/test-spack.sh [--full]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
full=false
case "${1:-}" in
  "") ;;
  --full) full=true ;;
  *) echo "usage: $0 [--full]" >&2; exit 2 ;;
esac
kit=${NDZIP_SPACK_KIT:-$root/../shared/spack-kit}
say() { echo "test-spack: [${SECONDS} s] $*"; }
fail() { echo "test-spack: FAIL: $*" >&2; exit 1; }
if [ ! -f "$kit/source-mirror.tar" ]; then
  say "skipped: no Spack kit at $kit (NDZIP_SPACK_KIT names another)"
  exit 0
fi
kokkos_prefix=$root/.deps/kokkos-host
[ -f "$kokkos_prefix/lib/cmake/Kokkos/KokkosConfig.cmake" ] ||
  fail "no project Kokkos at $kokkos_prefix: run scripts/install-deps.sh first"

# The kit, unpacked once per version of its archives.
work=$root/.deps/spack
stamp=$(cd "$kit" && sha256sum -- *.tar *.tar.xz)
if [ "$(cat "$work/kit.sha256" 2>/dev/null)" != "$stamp" ]; then
  say "unpacking the kit into $work"
  rm -rf "$work"
  mkdir -p "$work/mirror"
  tar -xJf "$kit"/spack-*.tar.xz -C "$work"
  tar -xJf "$kit"/clingo-*.tar.xz -C "$work"
  tar -xf "$kit/source-mirror.tar" -C "$work/mirror"
  echo "$stamp" >"$work/kit.sha256"
fi
# Every run installs afresh: a develop spec keeps its hash across edits, so an install tree
# left by an earlier run would be reused rather than built from this working tree.
rm -rf "$work/opt" "$work/stage" "$work/test-stage" "$work"/env-* "$work"/src-*
export SPACK_PYTHON=/usr/bin/python3 PYTHONPATH=$work/python
export SPACK_USER_CONFIG_PATH=$work/config SPACK_USER_CACHE_PATH=$work/cache
spack() { "$work/spack/bin/spack" "$@"; }

# Configuration, written every run: the kit's mirror only (mirrors:: replaces the public one),
# Debian's build tools as externals, the project's Kokkos as a buildable-around external.
mkdir -p "$work/config"
cat >"$work/config/config.yaml" <<EOF
config:
  install_tree:
    root: $work/opt
  build_stage: [$work/stage]
  test_stage: $work/test-stage
  source_cache: $work/source-cache
  misc_cache: $work/cache/misc
  build_jobs: $(nproc)
EOF
cat >"$work/config/mirrors.yaml" <<EOF
mirrors::
  kit:
    url: file://$work/mirror
    signed: false
EOF
# external NAME VERSION PREFIX [buildable]: a packages.yaml entry; none where VERSION is empty
# (the Debian package is not installed: Spack then builds it, from the mirror, if asked).
external() {
  [ -n "$2" ] || return 0
  printf '  %s:\n    externals: [{spec: %s@%s, prefix: %s}]\n' "$1" "$1" "$2" "$3"
  [ "${4:-}" != "not-buildable" ] || printf '    buildable: false\n'
}
debian_version() {
  dpkg-query -W -f='${Version}' "$1" 2>/dev/null | sed -E 's/^[0-9]+://; s/[-+~].*//'
}
{
  echo "packages:"
  external gmake "$(debian_version make)" /usr not-buildable
  external cmake "$(cmake --version | sed -nE 's/^cmake version ([0-9.]+).*/\1/p')" /usr not-buildable
  external python "$(/usr/bin/python3 -c 'import platform; print(platform.python_version())')" /usr not-buildable
  external openssl "$(debian_version libssl-dev)" /usr not-buildable
  external xxhash "$(debian_version libxxhash-dev)" /usr
  echo "  kokkos:"
  echo "    externals: [{spec: kokkos@3.4.01+openmp+serial+shared, prefix: $kokkos_prefix}]"
} >"$work/config/packages.yaml"
spack bootstrap disable >/dev/null
spack repo list | grep -q "^ndzip_kokkos " || spack repo add "$root/spack" >/dev/null
spack repo list | grep -q " $root/spack\$" || fail "Spack knows another ndzip_kokkos repository"

# round_trip_logged LOG...: the downstream example's bit-exact line is in these (gzipped) logs.
round_trip_logged() { zcat -f "$@" | grep -E "^downstream example: ndzip-kokkos .* on .*bit-exact"; }

# 1. The variant matrix. Accepted specs are concretized in one call (each solve takes Spack
# 20 to 60 s here); refused ones must fail with the recipe's own message. Without --full, a
# spec of each kind that CI can afford.
say "1. spack spec of the variant matrix$($full || echo " (a part; --full: all)")"
accepted=("ndzip-kokkos@main +openmp" "ndzip-kokkos@main ~shared" "ndzip-kokkos@main +tests")
refused=("ndzip-kokkos@main ~serial~openmp~threads|enable at least one backend")
if $full; then
  accepted+=(
    "ndzip-kokkos@main"
    "ndzip-kokkos@main ~serial +openmp"
    "ndzip-kokkos@main +threads ^kokkos@4.3.01"
    "ndzip-kokkos@main ~cli"
    "ndzip-kokkos@main +perf_tests"
    "ndzip-kokkos@main +cuda cuda_arch=90 ^kokkos@4.3.01"
  )
  refused+=(
    "ndzip-kokkos@main +openmp +threads|Kokkos has at most one host-parallel backend"
    "ndzip-kokkos@main +cuda +rocm cuda_arch=90 amdgpu_target=gfx90a|pick +cuda or +rocm"
  )
fi
spack spec -I "${accepted[@]}" >"$work/spec-accepted.log" 2>&1 ||
  fail "a spec that should concretize did not ($work/spec-accepted.log): $(tail -5 "$work/spec-accepted.log")"
# One line per root spec, after its install status ("[+]" once installed, " - " if not).
[ "$(grep -cE '^(\[.\]| - ) +ndzip-kokkos@main%' "$work/spec-accepted.log")" = "${#accepted[@]}" ] ||
  fail "not every spec of the matrix concretized ($work/spec-accepted.log)"
for case in "${refused[@]}"; do
  spec=${case%%|*} reason=${case#*|}
  if spack spec "$spec" >"$work/spec-refused.log" 2>&1; then
    fail "'$spec' concretized; the recipe should refuse it ($reason)"
  fi
  grep -qF -- "$reason" "$work/spec-refused.log" ||
    fail "'$spec' refused without the recipe's reason '$reason': $(tail -5 "$work/spec-refused.log")"
done
say "   ${#accepted[@]} specs concretized, ${#refused[@]} refused with the recipe's reason"

# install_env NAME SPEC...: a fresh environment developing a copy of this working tree (tracked
# and untracked files git does not ignore) as ndzip-kokkos@main, installed with --test=root.
install_env() {
  local name=$1 env=$work/env-$1
  shift
  rm -rf "$env" "$work/src-$name"
  mkdir -p "$work/src-$name"
  (cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) |
    tar -xf - -C "$work/src-$name"
  spack env create -d "$env" >/dev/null
  spack -e "$env" add "$@" >/dev/null
  spack -e "$env" develop --no-clone --path "$work/src-$name" ndzip-kokkos@main >/dev/null
  spack -e "$env" install --test=root >"$work/install-$name.log" 2>&1 ||
    fail "spack install $* ($work/install-$name.log): $(tail -20 "$work/install-$name.log")"
  local build_log
  build_log=$(spack -e "$env" location -i ndzip-kokkos)/.spack/spack-build-out.txt
  round_trip_logged "$build_log"* ||
    fail "--test=root ran no bit-exact downstream example ($build_log)"
}

say "2. spack install --test=root ndzip-kokkos@main +openmp ^cli11@2.4.1 (Kokkos 3.4.01, external)"
install_env openmp "ndzip-kokkos@main +openmp ^cli11@2.4.1"
prefix=$(spack -e "$work/env-openmp" location -i ndzip-kokkos)
[ -x "$prefix/bin/ndzip" ] || fail "no bin/ndzip in $prefix"

say "3. spack test run"
rm -rf "$work/test-stage"
spack -e "$work/env-openmp" test run ndzip-kokkos >"$work/test-run.log" 2>&1 ||
  fail "spack test run ($work/test-run.log): $(tail -20 "$work/test-run.log")"
grep -q "1 passed of 1 spec" "$work/test-run.log" ||
  fail "spack test run passed nothing ($work/test-run.log)"
round_trip_logged $(find "$work/test-stage" -name "*-test-out.txt*") ||
  fail "spack test run ran no bit-exact downstream example ($work/test-stage)"

say "4. the CLI's tests against the installed ndzip (CLI11 2.4.1)"
for test in cli_behaviour cli_walkthrough cli_limits cli_spellings cli_folding; do
  bash "$root/tools/tests/$test.sh" "$prefix/bin/ndzip" >"$work/$test.log" 2>&1 ||
    fail "$test against $prefix/bin/ndzip ($work/$test.log): $(tail -5 "$work/$test.log")"
done

say "5. the installed binaries need no xxhash at run time"
for binary in "$prefix/bin/ndzip" "$prefix"/lib*/libndzip.so; do
  ! ldd "$binary" | grep -q xxhash || fail "$binary links xxhash: $(ldd "$binary" | grep xxhash)"
done

if $full; then
  say "6. the same against Kokkos 4.3.01 built by Spack from the mirror"
  install_env kokkos4 "ndzip-kokkos@main +openmp ^kokkos@4.3.01"
  say "7. +tests --test=root: the project's test suite built and run by Spack"
  install_env tests "ndzip-kokkos@main +openmp +tests ^cli11@2.4.1"
fi
say "passed ($($full && echo "steps 1-7" || echo "steps 1-5; --full: the whole matrix, Kokkos 4.3.01, +tests"))"
