#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The source tarball of a release, as the Spack recipe names it (spack/README.md, "Releases"):
# `git archive` of the annotated tag v<VERSION>, uncompressed, with every path under
# ndzip-kokkos-<VERSION>/. Uncompressed because git's tar output is the same bytes from every
# git version (it stores the commit's time, not the clock's), where a compressor's output is
# not: so the recipe's sha256 can be checked again from any clone that has the tag.
# Usage: scripts/make-release-tarball.sh VERSION OUTPUT_DIR
#   writes OUTPUT_DIR/ndzip-kokkos-VERSION.tar and prints its sha256. Refuses a tag that is
#   missing, is not annotated, or names a commit whose CMakeLists.txt declares another version.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# = 2 ] || { echo "usage: $0 VERSION OUTPUT_DIR" >&2; exit 2; }
version=$1 out=$2
tag=v$version
fail() { echo "make-release-tarball: $*" >&2; exit 1; }
# A copy of the tree inside another checkout (Spack's stage, say) is not this project's clone:
# git would answer for the checkout around it.
[ "$(git -C "$root" rev-parse --show-toplevel 2>/dev/null)" = "$root" ] ||
  fail "$root is not the top of a git clone of the project: no tag to make a release from"
git -C "$root" rev-parse --verify --quiet "refs/tags/$tag" >/dev/null ||
  fail "no tag $tag in $root (a clone made with --no-tags or --depth lacks it: git fetch --tags)"
[ "$(git -C "$root" cat-file -t "refs/tags/$tag")" = tag ] ||
  fail "$tag is a lightweight tag; releases are annotated (git tag -a $tag)"
git -C "$root" show "$tag^{commit}:CMakeLists.txt" |
  grep -qE "^project\(ndzip-kokkos VERSION ${version//./\\.} " ||
  fail "the CMakeLists.txt of $tag does not declare version $version"
mkdir -p "$out"
tarball=$out/ndzip-kokkos-$version.tar
git -C "$root" archive --format=tar --prefix="ndzip-kokkos-$version/" -o "$tarball" "$tag"
sha256sum "$tarball" | cut -d' ' -f1
