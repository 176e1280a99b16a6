#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Folding in the tool (issue 63, item 1; docs/FORMAT.md, "Folding"): an array with few values
# in whole hypercubes is written as a version 3 frame of the grid its slowest dimensions merge
# into, which `info` shows and -d reads back; --folding none keeps the version 1 frame; --raw
# never folds; the note where the stream stays mostly raw, once a run, naming what would help.
# Usage: cli_folding.sh NDZIP_BINARY. Exits non-zero at the first failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_support.sh"
start_in_work_dir cli-folding "$@"

# xarray's default Zarr chunk of ocean_levitus_temp, 5x90x180 floats: no whole 16^3 hypercube.
head -c $((5 * 90 * 180 * 4)) /dev/zero >chunk.raw
head -c $((30 * 30 * 4)) /dev/zero >small.raw   # 900 values: no hypercube however folded
cp small.raw small2.raw
no_note() { ! grep -q "ndzip: note" err.txt || fail "unexpected note: $(cat err.txt)"; }

# ---------------------------------------------------------------------------------------------
check "a thin 3-D array is coded folded, in a version 3 frame that info shows and -d reads"
expect 0 -t float -n 5x90x180 -o folded.ndz chunk.raw
no_note
expect 0 info folded.ndz
stdout_has "format:      ndzip-kokkos frame, version 3"
stdout_has "extents:     5x90x180 (slowest first)"
stdout_has "coded as:    81000 (folded: the slowest dimensions merged)"
expect 0 -d -o back.raw folded.ndz
same back.raw chunk.raw
[ "$(od -An -tu1 -j7 -N1 folded.ndz | tr -d ' ')" = 16 ] || fail "byte 7 is not mode 0 + 16 x 1"

check "--folding none: a version 1 frame of the array as it is, larger here"
expect 0 -t float -n 5x90x180 --folding NONE -o plain.ndz chunk.raw
stderr_has "ndzip: note: 'chunk.raw': 100% of the float 5x90x180 array lies outside whole hypercubes (4096 values) and is stored raw; --folding automatic (the default) codes it as 81000 (said once)"
expect 0 info plain.ndz
stdout_has "format:      ndzip-kokkos frame, version 1"
grep -q "coded as" out.txt && fail "an unfolded frame says 'coded as'"
expect 0 -f -d -o back.raw plain.ndz
same back.raw chunk.raw
[ "$(stat -c %s folded.ndz)" -lt $(($(stat -c %s plain.ndz) / 4)) ] || fail "folding did not pay"
expect 0 -f -t float -n 5x90x180 --folding automatic -o again.ndz chunk.raw
same again.ndz folded.ndz
# The high-ratio stream codes the border in 1-D hypercubes: no note there, folded or not.
expect 0 -t float -n 5x90x180 --high-ratio --folding none -o hr.ndz chunk.raw
no_note

check "--raw never folds: the stream of the grid -n gives"
expect 0 --raw -t float -n 5x90x180 -o raw.nd chunk.raw
stderr_has "is stored raw; a frame (no --raw) codes it folded, as 81000 (said once)"
cmp <(tail -c +49 plain.ndz) raw.nd || fail "the --raw stream is not the unfolded frame's"
expect_error 2 "--folding applies to frames" --raw --folding none -t float -n 5x90x180 chunk.raw
expect_error 2 "--folding applies to compression only" -d --folding none folded.ndz
expect_error 2 "unknown folding 'auto' (use automatic or none)" --folding auto -t float chunk.raw

check "the note where even the folded stream is mostly raw: once a run, with a shape that works"
expect 0 -t float -n 30x30 small.raw small2.raw
stderr_has "ndzip: note: 'small.raw': 100% of the float 30x30 array lies outside whole hypercubes (4096 values) and is stored raw; arrays of 64x64 values or more compress (said once)"
[ "$(grep -c "ndzip: note" err.txt)" = 1 ] || fail "the note is given more than once: $(cat err.txt)"
expect 0 -q -f -t float -n 30x30 small.raw
no_note

echo "cli_folding: all checks passed"
