#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The Spack package (spack/) installed and tested by a real Spack, offline: Spack 0.23 from the
# kit beside the checkout (../shared/spack-kit: Spack, the clingo module its concretizer needs,
# a source mirror; its README says what was found to work), unpacked into .deps/spack and reused
# while the kit is unchanged, with its configuration and caches there (never ~/.spack). Steps:
#  1. `spack spec` of the variant matrix the recipe advertises (a part without --full, all of
#     it with it): each spec concretizes with the variants asked for and no other turned on, or
#     is refused by a conflict whose message the recipe gives; plain `ndzip-kokkos` is the
#     newest release;
#  2. the release: its tarball made from the tag (scripts/make-release-tarball.sh) into a
#     mirror, and `spack stage` of it, which checks the recipe's sha256, holds the variants'
#     sources (plugins/, mpi/) and declares the version;
#  3. `spack install --test=root ndzip-kokkos@main +openmp +mpi +hdf5` of a copy of this
#     working tree (`spack develop`, so no link is written into the checkout) against the
#     project's own Kokkos 3.4.01 (.deps/kokkos-host), Debian's Open MPI and HDF5 (externals)
#     and Spack's CLI11 2.4.1 built from the mirror: --test=root builds the installed
#     downstream example with find_package and runs it (the recipe's check_downstream_example);
#  4. `spack test run`: the same example against the installed spec;
#  5. the CLI's own tests (tools/tests) against the installed `ndzip`, built with CLI11 2.4.1
#     where the other builds use Debian's 2.1.2: the options parse alike with both;
#  6. the installed binaries need nothing of xxhash at run time (a build dependency only);
#  7. +mpi and +hdf5 installed what they say: examples/mpi_halo and examples/mpi_transpose
#     build against the install and run bit-exact on 3 ranks; h5py round-trips a dataset
#     through the installed plugin;
#  with --full also the whole matrix of step 1, and
#  8. the release installed from its tarball, against Kokkos 4.3.01 built by Spack from the
#     kit's mirror;
#  9. `+tests --test=root`: the project's whole test suite built and run by Spack.
# Skipped, saying so, where the kit is absent. CI runs steps 1 to 7 (.ci/run).
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
# check_mpi_example, check_installed_hdf5_plugin (step 7)
source "$root/scripts/installed-package-checks.sh"
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
rm -rf "$work/opt" "$work/stage" "$work/test-stage" "$work"/env-* "$work"/src-* "$work/checks"
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
# The release's tarball goes into a mirror of its own (step 2), not into the kit's.
release_mirror=$work/release-mirror
cat >"$work/config/mirrors.yaml" <<EOF
mirrors::
  release:
    url: file://$release_mirror
    signed: false
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
  # What +mpi and +hdf5 link: the MPI and HDF5 the machine's applications use.
  external openmpi "$(debian_version libopenmpi-dev)" /usr not-buildable
  external hdf5 "$(debian_version libhdf5-dev)" /usr not-buildable
  echo "  kokkos:"
  echo "    externals: [{spec: kokkos@3.4.01+openmp+serial+shared, prefix: $kokkos_prefix}]"
} >"$work/config/packages.yaml"
spack bootstrap disable >/dev/null
# The list is read whole first: `spack repo list | grep -q` makes Spack fail on a broken pipe.
repos=$(spack repo list)
grep -q "^ndzip_kokkos " <<<"$repos" || spack repo add "$root/spack" >/dev/null
repos=$(spack repo list)
grep -q " $root/spack\$" <<<"$repos" || fail "Spack knows another ndzip_kokkos repository"

# round_trip_logged LOG...: the downstream example's bit-exact line is in these (gzipped) logs.
round_trip_logged() { zcat -f "$@" | grep -E "^downstream example: ndzip-kokkos .* on .*bit-exact"; }

# 1. The variant matrix. Accepted specs are concretized in one call (each solve takes Spack
# 20 to 60 s here), and each root must show what was asked for and nothing the concretizer
# turned on by itself; refused ones must fail with the recipe's own reason. Without --full, a
# spec of each kind that CI can afford. Cases are "SPEC|WORD..." (words of the root's line).
say "1. spack spec of the variant matrix$($full || echo " (a part; --full: all)")"
accepted=(
  "ndzip-kokkos +openmp|ndzip-kokkos@0.2.0 +openmp +shared"  # plain: the newest release
  "ndzip-kokkos@main ~shared|~shared"
  # ~serial only stops requiring Serial: no other backend may be turned on in its place.
  "ndzip-kokkos@main ~serial|~serial ~openmp ~threads ~cuda ~rocm"
  "ndzip-kokkos@main +tests|+tests"
)
refused=(
  # A static Kokkos must not turn libndzip static unasked (the variant is sticky).
  "ndzip-kokkos@main +openmp ^kokkos~shared|ndzip-kokkos depends on kokkos+shared when +shared"
)
if $full; then
  accepted+=(
    "ndzip-kokkos@main|+serial ~openmp +cli +shared"
    "ndzip-kokkos@main ~serial +openmp|~serial +openmp"
    "ndzip-kokkos@main ~shared ^kokkos~shared|~shared"
    "ndzip-kokkos@main +threads ^kokkos@4.3.01|+threads ~openmp"
    "ndzip-kokkos@main ~cli|~cli"
    "ndzip-kokkos@main +perf_tests|+perf_tests"
    "ndzip-kokkos@main +mpi +hdf5|+mpi +hdf5"
    "ndzip-kokkos@main +cuda cuda_arch=90 ^kokkos@4.3.01|+cuda cuda_arch=90"
  )
  refused+=(
    "ndzip-kokkos@main +openmp +threads|Kokkos has at most one host-parallel backend"
    "ndzip-kokkos@main +cuda +rocm cuda_arch=90 amdgpu_target=gfx90a|pick +cuda or +rocm"
  )
fi
specs=()
for case in "${accepted[@]}"; do specs+=("${case%%|*}"); done
spack spec -I "${specs[@]}" >"$work/spec-accepted.log" 2>&1 ||
  fail "a spec that should concretize did not ($work/spec-accepted.log): $(tail -5 "$work/spec-accepted.log")"
# One line per concretized root, in the order asked, after its install status ("[+]" once
# installed, " - " if not) and with its compiler (the input specs' lines have none); the
# variants of a line are glued together (+cli~cuda~hdf5...).
mapfile -t roots < <(grep -E '^(\[.\]| - ) +ndzip-kokkos@[^ %]+%' "$work/spec-accepted.log")
[ "${#roots[@]}" = "${#accepted[@]}" ] ||
  fail "not every spec of the matrix concretized ($work/spec-accepted.log)"
for i in "${!accepted[@]}"; do
  # The line's words, each variant one: "+cli~cuda" -> " +cli ~cuda ".
  words=" $(sed -E 's/([+~%])/ \1/g' <<<"${roots[$i]}") "
  for word in ${accepted[$i]#*|}; do
    [[ "$words" == *" $word "* ]] || fail "'${specs[$i]}' concretized without $word: ${roots[$i]}"
  done
done
for case in "${refused[@]}"; do
  spec=${case%%|*} reason=${case#*|}
  if spack spec "$spec" >"$work/spec-refused.log" 2>&1; then
    fail "'$spec' concretized; the recipe should refuse it ($reason)"
  fi
  grep -qF -- "$reason" "$work/spec-refused.log" ||
    fail "'$spec' refused without the recipe's reason '$reason': $(tail -5 "$work/spec-refused.log")"
done
say "   ${#accepted[@]} specs concretized as asked, ${#refused[@]} refused with the recipe's reason"

# 2. The release, made from its tag into the release mirror, staged by Spack (the checksum).
# A clone without the tag (--no-tags, --depth) cannot make it: said, and the step skipped.
say "2. the release 0.2.0: its tarball from the tag, staged by Spack against the recipe's sha256"
rm -rf "$release_mirror"
if sha=$("$root/scripts/make-release-tarball.sh" 0.2.0 "$release_mirror/ndzip-kokkos" 2>"$work/release.log"); then
  say "   ndzip-kokkos-0.2.0.tar: sha256 $sha"
  spack stage ndzip-kokkos@0.2.0 >"$work/stage-release.log" 2>&1 ||
    fail "spack stage ndzip-kokkos@0.2.0 ($work/stage-release.log): $(tail -5 "$work/stage-release.log")"
  source_dir=$(spack location -s ndzip-kokkos@0.2.0)/spack-src  # the expanded tarball
  grep -qE '^project\(ndzip-kokkos VERSION 0\.2\.0 ' "$source_dir/CMakeLists.txt" ||
    fail "the staged 0.2.0 ($source_dir) declares another version"
  for part in plugins/hdf5/CMakeLists.txt mpi/CMakeLists.txt; do
    [ -f "$source_dir/$part" ] || fail "the staged 0.2.0 has no $part (its variants build it)"
  done
  release_staged=true
else
  say "   NOT CHECKED: $(cat "$work/release.log")"
  release_staged=false
fi

# install_env NAME SOURCE SPEC...: a fresh environment installing SPEC with --test=root, where
# SOURCE is `checkout` (a copy of this working tree, tracked and untracked files git does not
# ignore, developed as ndzip-kokkos@main) or `release` (the version's tarball, from a mirror).
install_env() {
  local name=$1 source=$2 env=$work/env-$1
  shift 2
  rm -rf "$env" "$work/src-$name"
  spack env create -d "$env" >/dev/null
  spack -e "$env" add "$@" >/dev/null
  if [ "$source" = checkout ]; then
    mkdir -p "$work/src-$name"
    (cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) |
      tar -xf - -C "$work/src-$name"
    spack -e "$env" develop --no-clone --path "$work/src-$name" ndzip-kokkos@main >/dev/null
  fi
  spack -e "$env" install --test=root >"$work/install-$name.log" 2>&1 ||
    fail "spack install $* ($work/install-$name.log): $(tail -20 "$work/install-$name.log")"
  local build_log
  build_log=$(spack -e "$env" location -i ndzip-kokkos)/.spack/spack-build-out.txt
  round_trip_logged "$build_log"* ||
    fail "--test=root ran no bit-exact downstream example ($build_log)"
}

say "3. spack install --test=root ndzip-kokkos@main +openmp +mpi +hdf5 ^cli11@2.4.1 (Kokkos 3.4.01, Open MPI, HDF5: externals)"
install_env openmp checkout "ndzip-kokkos@main +openmp +mpi +hdf5 ^cli11@2.4.1"
prefix=$(spack -e "$work/env-openmp" location -i ndzip-kokkos)
[ -x "$prefix/bin/ndzip" ] || fail "no bin/ndzip in $prefix"

say "4. spack test run"
rm -rf "$work/test-stage"
spack -e "$work/env-openmp" test run ndzip-kokkos >"$work/test-run.log" 2>&1 ||
  fail "spack test run ($work/test-run.log): $(tail -20 "$work/test-run.log")"
grep -q "1 passed of 1 spec" "$work/test-run.log" ||
  fail "spack test run passed nothing ($work/test-run.log)"
round_trip_logged $(find "$work/test-stage" -name "*-test-out.txt*") ||
  fail "spack test run ran no bit-exact downstream example ($work/test-stage)"

say "5. the CLI's tests against the installed ndzip (CLI11 2.4.1)"
for test in cli_behaviour cli_walkthrough cli_limits cli_spellings cli_folding; do
  bash "$root/tools/tests/$test.sh" "$prefix/bin/ndzip" >"$work/$test.log" 2>&1 ||
    fail "$test against $prefix/bin/ndzip ($work/$test.log): $(tail -5 "$work/$test.log")"
done

say "6. the installed binaries need no xxhash at run time"
for binary in "$prefix/bin/ndzip" "$prefix"/lib*/libndzip*.so; do
  ! ldd "$binary" | grep -q xxhash || fail "$binary links xxhash: $(ldd "$binary" | grep xxhash)"
done

say "7. +mpi and +hdf5: examples/mpi_halo and mpi_transpose on 3 ranks against the install, h5py through its plugin"
check_mpi_example "+mpi" "$prefix" "$prefix;$kokkos_prefix" "$work/checks" 3
check_installed_hdf5_plugin "+hdf5" "$prefix/lib/hdf5/plugin" "$work/checks"

if $full; then
  if $release_staged; then
    say "8. the release 0.2.0 installed from its tarball, against Kokkos 4.3.01 built by Spack"
    install_env release release "ndzip-kokkos@0.2.0 +openmp ^kokkos@4.3.01"
  else
    say "8. NOT RUN: this clone cannot make the release's tarball (step 2)"
  fi
  say "9. +tests --test=root: the project's test suite built and run by Spack"
  install_env tests checkout "ndzip-kokkos@main +openmp +tests ^cli11@2.4.1"
fi
say "passed ($($full && echo "steps 1-9" || echo "steps 1-7; --full: the whole matrix, the release built, +tests"))"
