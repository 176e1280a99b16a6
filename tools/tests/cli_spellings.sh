#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# What users type from other tools (issue 63, item 3): NumPy's type names (float32, f4, float64,
# f8) and f32/f64 in any case, backend and mode names in any case, X in shapes; zstd's level
# flags (-1 .. -19) refused naming --mode; a frame given to compress pointed to -d; --help that
# says which mode is the default; "1 file" where one is counted.
# Usage: cli_spellings.sh NDZIP_BINARY. Exits non-zero at the first failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_support.sh"
start_in_work_dir cli-spellings "$@"

# A 32x64 float array (8 KiB), and the same bytes as 32x32 doubles.
head -c 8192 /dev/urandom >in.raw

# ---------------------------------------------------------------------------------------------
check "type names: float/double, NumPy's float32/f4/float64/f8, f32/f64, in any case"
expect 0 -q -t float -n 32x64 -o ref.float.ndz in.raw
expect 0 -q -t double -n 32x32 -o ref.double.ndz in.raw
for name in float FLOAT Float float32 FLOAT32 f4 F4 f32 F32; do
  expect 0 -q -f -t "$name" -n 32x64 -o t.ndz in.raw
  same t.ndz ref.float.ndz
done
for name in double DOUBLE float64 Float64 f8 F8 f64 F64; do
  expect 0 -q -f -t "$name" -n 32x32 -o t.ndz in.raw
  same t.ndz ref.double.ndz
done
expect 0 -q -f -d -t FLOAT32 -o back.raw ref.float.ndz   # and when decompressing
same back.raw in.raw
for name in int f2 float16 f 4 float323; do
  expect_error 2 "unknown element type '$name' (use float, float32, f4 or double, float64, f8)" \
    -t "$name" -n 32x64 in.raw
done

check "x or X between extents; backend and mode names in any case"
for shape in 32X64 32x64 "32 64"; do
  # shellcheck disable=SC2086  # "32 64": the two-word form
  expect 0 -q -f -t float -n $shape -o t.ndz in.raw
  same t.ndz ref.float.ndz
done
expect 0 -q -f -t float -n 2X4x256 -o t3.ndz in.raw
expect 0 info t3.ndz
stdout_has "extents:     2x4x256"
mapfile -t backends < <("$ndzip" --list-backends)
for backend in "${backends[@]}"; do
  upper=$(tr a-z A-Z <<<"$backend")
  capital=$(sed -E 's/^(.)/\U\1/' <<<"$backend")
  for name in "$upper" "$capital"; do
    expect 0 -q -f -b "$name" -t float -n 32x64 -o t.ndz in.raw
    same t.ndz ref.float.ndz
  done
done
expect_error 2 "unknown backend 'Cobol'" -b Cobol -t float in.raw
expect 0 -q -f --mode high_ratio -t float -n 32x64 -o hr.ndz in.raw
expect 0 -q -f --mode HIGH_RATIO -t float -n 32x64 -o t.ndz in.raw
same t.ndz hr.ndz
expect 0 -q -f -d --mode High_Ratio -o back.raw hr.ndz
same back.raw in.raw

check "zstd's level flags -1 .. -19 are refused naming --mode, before any file is touched"
for level in -1 -3 -9 -19 -22; do
  expect_error 2 "ndzip has no compression levels ('$level')" "$level" -t float in.raw
  stderr_has "--mode high_ratio compresses smaller"
  [ ! -e in.raw.ndz ] || fail "'ndzip $level' wrote in.raw.ndz"
  expect_error 2 "no compression levels" -t float "$level" in.raw
  expect_error 2 "no compression levels" compress -t float -n 32x64 "$level" in.raw x.ndz
  expect_error 2 "no compression levels" -d "$level" ref.float.ndz
done
expect_error 2 "option -T needs a number of threads (0: one per core), got '-1'" -T -1 -t float \
  in.raw   # an option's value is no level flag
expect 0 -q -t float -n 32x64 -o -9 in.raw
same ./-9 ref.float.ndz
rm ./-9
cp in.raw ./-9   # a file so named is still reachable, as the message says
expect 0 -q -t float -n 32x64 ./-9
expect 0 -q -f -t float -n 32x64 -- -9
[ -f ./-9.ndz ] || fail "./-9 was not compressed"

check "a frame given to compress: the message points to -d"
cp ref.float.ndz frame.bin
expect_error 1 "needs the element type (-t float or -t double)" frame.bin
stderr_has "it is an ndzip frame already: to decompress it, use ndzip -d"
expect_error 1 "needs the element type" -f ref.float.ndz
stderr_has "use ndzip -d"
expect_error 1 "already ends in .ndz (to decompress it, use ndzip -d" ref.float.ndz
expect_error 1 "needs the element type" in.raw   # a raw file: no hint to -d
if grep -qF -- "ndzip -d" err.txt; then fail "a raw file drew the hint to -d: $(cat err.txt)"; fi
[ ! -e in.raw.ndz ] && [ ! -e frame.bin.ndz ] || fail "a refused input was written"

check "--help says that ndzip is the default mode, and high_ratio the other"
for cmd in "" compress; do
  expect 0 $cmd --help
  tr -s ' \n' ' ' <out.txt | grep -qF "Codec mode: ndzip (the default: upstream ndzip's stream, the fastest) or high_ratio (fewer bytes" ||
    fail "ndzip $cmd --help does not make ndzip the default mode: $(grep -A3 -- --mode out.txt)"
  if tr -s ' \n' ' ' <out.txt | grep -qF "high_ratio (the default)"; then
    fail "ndzip $cmd --help reads as if high_ratio were the default"
  fi
done
expect 0 decompress --help
tr -s ' \n' ' ' <out.txt | grep -qF "ndzip (the default) or high_ratio" ||
  fail "decompress --help does not name the default mode"

check "counts: '1 file', never '1 files'"
cp in.raw one.raw
expect 1 -t float -n 32x64 one.raw missing.raw
stderr_has "1 file compressed : "
stderr_has ", 1 failed"
rm one.raw
expect 1 -d one.raw.ndz missing.raw.ndz
stderr_has "1 file decompressed : "
expect 1 -l ref.float.ndz missing.ndz
stdout_has " 1 file, 1 failed "
expect 1 -l -v ref.float.ndz missing.ndz
stdout_has "total:       1 file, 1 failed,"
if grep -qF "1 files" out.txt err.txt; then fail "'1 files' printed"; fi

echo "cli_spellings: all checks passed"
