#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Checks the ndzip tool against the reference vectors, on every enabled backend: for each case of
# manifest.csv, `ndzip compress --raw` must reproduce NAME.ndz and `ndzip decompress --raw` must
# restore the input, byte for byte.
# Usage: cli_vectors.sh NDZIP_BINARY VECTORS_DIR. Exits 77 (skipped) if VECTORS_DIR has no
# manifest.csv, non-zero at the first failure.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 NDZIP_BINARY VECTORS_DIR" >&2
  exit 2
fi
ndzip=$1
vectors=$2
manifest=$vectors/manifest.csv
if [ ! -f "$manifest" ]; then
  echo "SKIP: no reference vectors at '$vectors' (set the CMake cache variable NDZIP_VECTORS_DIR)"
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ndzip-cli-vectors.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Runs the tool; on failure shows its error output and stops.
run_ndzip() {
  local status=0
  "$ndzip" "$@" 2>"$work/stderr" || status=$?
  [ $status = 0 ] || fail "ndzip $* exited with status $status: $(cat "$work/stderr")"
}

mapfile -t backends < <("$ndzip" --list-backends)
[ ${#backends[@]} -gt 0 ] || fail "ndzip --list-backends printed no backend"
echo "backends: ${backends[*]}"

have_sha256=0
command -v sha256sum >/dev/null && have_sha256=1

cases=0
while IFS=';' read -r name type dims input_sha stream_sha stream_bytes; do
  [ -n "$name" ] || continue
  case $type in
    float) input=$vectors/$name.f32 ;;
    double) input=$vectors/$name.f64 ;;
    *) fail "manifest line for '$name': unknown type '$type'" ;;
  esac
  stream=$vectors/$name.ndz
  [ -f "$input" ] || fail "missing vector file $input"
  [ -f "$stream" ] || fail "missing vector file $stream"
  # The vectors themselves must be the ones the manifest describes.
  [ "$(stat -c %s "$stream")" = "$stream_bytes" ] ||
    fail "$stream has $(stat -c %s "$stream") bytes, manifest says $stream_bytes"
  if [ $have_sha256 = 1 ]; then
    [ "$(sha256sum <"$input" | cut -d' ' -f1)" = "$input_sha" ] ||
      fail "$input does not match its sha256 in the manifest"
    [ "$(sha256sum <"$stream" | cut -d' ' -f1)" = "$stream_sha" ] ||
      fail "$stream does not match its sha256 in the manifest"
  fi
  read -r -a extents <<<"$dims"

  for backend in "${backends[@]}"; do
    echo "check: $name on $backend: compress --raw == .ndz, decompress --raw == input"
    rm -f "$work/out.ndz" "$work/out.raw"
    run_ndzip compress --raw -b "$backend" -t "$type" -n "${extents[@]}" "$input" "$work/out.ndz"
    cmp "$work/out.ndz" "$stream" ||
      fail "$name on $backend: compressed stream differs from $stream"
    run_ndzip decompress --raw -b "$backend" -t "$type" -n "${extents[@]}" "$stream" "$work/out.raw"
    cmp "$work/out.raw" "$input" ||
      fail "$name on $backend: decompressed array differs from $input"
  done
  cases=$((cases + 1))
done <"$manifest"

[ $cases -gt 0 ] || fail "$manifest lists no cases"
echo "PASS: $cases vectors x ${#backends[@]} backends, both directions"
