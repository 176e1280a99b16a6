#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# cg_hostile.sh BINARY WORKDIR: the example under hostile use (issue 44), on a 32^3 problem.
# - --help and -h print the example's usage (exit 0), not Kokkos' help and "unknown option".
# - Forged checkpoints are refused, with the reason, before memory of the size they claim is
#   allocated (under a 1 GiB memory limit and a timeout): a grid side of 1024 in a 690 KB file
#   (checksum recomputed), NaN or negative r.r, |b| = 0, iterations and grid sides that are not
#   whole numbers in range, sections swapped, /dev/zero, a FIFO fed without end, a directory,
#   bytes after the last section. A checkpoint read from a pipe still restarts bit for bit.
# - The checkpoint writer never follows a symbolic link planted at FILE.tmp or FILE.raw.tmp, and
#   concurrent runs writing the same FILE all succeed, leaving a valid checkpoint and no
#   temporary file.
set -euo pipefail
bin=$1
work=$2
forge=(/usr/bin/python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/forge_checkpoint.py")
rm -rf "$work" && mkdir -p "$work" && cd "$work"
writers=()
cleanup() { for pid in "${writers[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
fail() { echo "cg_hostile: FAIL: $*" >&2; exit 1; }
run=("$bin" --n 32 --max-iters 30 --every 15)

# --help: the example's usage on standard output, status 0, Kokkos never asked (before: Kokkos'
# help, then "unknown option --help", status 2).
for flag in --help -h; do
  status=0
  "$bin" "$flag" >help.out 2>help.err || status=$?
  [ "$status" = 0 ] || fail "$flag: exit status $status"
  grep -q "^usage: ndzip-cg-checkpoint .*--restart FILE" help.out || fail "$flag: no usage line"
  grep -q -- "--every K .*checkpoint every K iterations" help.out || fail "$flag: no options"
  if grep -q "unknown option" help.out help.err; then fail "$flag: 'unknown option'"; fi
  if grep -qi "kokkos command line arguments" help.out help.err; then fail "$flag: Kokkos' help"; fi
done
# --kokkos-help: Kokkos' help, and nothing run (before: the default 160^3 solve, into cg.ckpt).
status=0
timeout 60 "$bin" --kokkos-help >help.out 2>&1 || status=$?
[ "$status" = 0 ] || fail "--kokkos-help: exit status $status"
grep -q -- "--kokkos-threads" help.out || fail "--kokkos-help: no Kokkos help"
if grep -q "^CG on" help.out || [ -e cg.ckpt ]; then fail "--kokkos-help ran the solver"; fi
echo "cg_hostile: --help and -h print the example's usage, --kokkos-help Kokkos' help"

# bounded COMMAND...: at most 60 seconds and 1 GiB of memory, far below the 8 GiB that a claimed
# 1024^3 grid would take: of virtual memory where the example starts within that, else (under
# AddressSanitizer, which reserves terabytes) of resident memory through ASAN_OPTIONS.
if (ulimit -v $((1 << 20)) && OMP_NUM_THREADS=2 "$bin" --n 2 --max-iters 1 --every 0) \
  >/dev/null 2>&1; then
  bounded() { (ulimit -v $((1 << 20)) && OMP_NUM_THREADS=2 exec timeout 60 "$@"); }
else
  bounded() {
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=1024" OMP_NUM_THREADS=2 \
      timeout 60 "$@"
  }
fi

# refused FILE MESSAGE: a restart from FILE (without --n: the file's n counts) ends with status
# 1 (not a timeout, not a crash) within the limits, saying "cannot restart from FILE: " and
# MESSAGE, and writes nothing.
refused() {
  rm -f refused.x refused.hist
  local status=0
  bounded "$bin" --max-iters 30 --every 15 --restart "$1" --x-out refused.x \
    --history refused.hist >refused.log 2>refused.err || status=$?
  [ "$status" = 1 ] || { cat refused.err; fail "$1: exit status $status, not 1"; }
  grep -qF "cannot restart from $1: " refused.err || { cat refused.err; fail "$1: unnamed"; }
  grep -qF -- "$2" refused.err || { cat refused.err; fail "$1: the message lacks '$2'"; }
  [ ! -e refused.x ] && [ ! -e refused.hist ] || fail "$1: output written after a refused restart"
}

"${run[@]}" --max-iters 15 --checkpoint good.ckpt >/dev/null
"${run[@]}" --max-iters 15 --checkpoint good-raw.ckpt --raw >/dev/null
"${run[@]}" --restart good.ckpt --x-out good.x >/dev/null

# A grid side of 1024 with the checksum recomputed: refused from the frames' headers, before
# 3 x 8 GiB are allocated (before the fix: allocated and zero-filled, then refused).
"${forge[@]}" scalars good.ckpt n1024.ckpt --n 1024
refused n1024.ckpt \
  'section 1 ("x") holds a double 32x32x32 array, not the double 1024x1024x1024 grid'
"${forge[@]}" scalars good-raw.ckpt n1024-raw.ckpt --n 1024
refused n1024-raw.ckpt 'section 1 ("x") is not 1073741824 doubles'
# Scalars the solver cannot continue from (before: NaN and |b| = 0 restarted, printing -nan).
"${forge[@]}" scalars good.ckpt nan-rr.ckpt --rr nan
refused nan-rr.ckpt "its r.r nan is not a finite number >= 0"
"${forge[@]}" scalars good-raw.ckpt negative-rr.ckpt --rr -1
refused negative-rr.ckpt "its r.r -1 is not a finite number >= 0"
"${forge[@]}" scalars good.ckpt zero-b.ckpt --bnorm 0
refused zero-b.ckpt "its |b| 0 is not a finite number > 0"
"${forge[@]}" scalars good-raw.ckpt inf-b.ckpt --bnorm inf
refused inf-b.ckpt "its |b| inf is not a finite number > 0"
"${forge[@]}" scalars good.ckpt half-iteration.ckpt --iteration 15.5
refused half-iteration.ckpt "its iteration 15.5 is not a whole number from 1 to 100000000"
"${forge[@]}" scalars good-raw.ckpt huge-iteration.ckpt --iteration 1e300
refused huge-iteration.ckpt "its iteration 1.0000000000000001e+300 is not a whole number"
"${forge[@]}" scalars good.ckpt fraction-n.ckpt --n 32.5
refused fraction-n.ckpt "its grid side 32.5 is not a whole number from 2 to 1024"
# x and r swapped (each a valid frame of the right shape), and r and p in a raw checkpoint.
"${forge[@]}" swap good.ckpt x-r.ckpt 1 2
refused x-r.ckpt 'section 1 is named "r", not "x" (its sections are out of place)'
"${forge[@]}" swap good-raw.ckpt r-p-raw.ckpt 2 3
refused r-p-raw.ckpt 'section 2 is named "p", not "r"'
# The layout before the sections had names.
{ printf 'NDZCGCK1'; head -c 1000 /dev/zero; } >old-layout.ckpt
refused old-layout.ckpt "layout NDZCGCK1 of an earlier version of this example"
{ cat good.ckpt; printf 'x'; } >trailing.ckpt
refused trailing.ckpt "1 bytes after the last section"

# Endless inputs and what is not a file (before: /dev/zero and a FIFO were read without bound,
# a directory gave "cannot read" without a reason).
refused /dev/zero 'it does not start with "NDZCGCK2"'
mkdir checkpoint-dir
refused checkpoint-dir "cannot read checkpoint-dir: Is a directory"
mkfifo zeros.fifo
timeout 60 cat /dev/zero >zeros.fifo 2>/dev/null &
writers+=($!)
refused zeros.fifo 'it does not start with "NDZCGCK2"'
# A valid head and scalars, then x's name and length and zeros without end: x's bytes are read
# only up to its length (a frame's length at most), then refused.
x_end=$((24 + 16 + 80 + 16))  # header, the scalars' name, length and 80-byte frame, x's head
mkfifo endless.fifo
timeout 60 sh -c "head -c $x_end good.ckpt; cat /dev/zero" >endless.fifo 2>/dev/null &
writers+=($!)
refused endless.fifo 'not a valid ndzip frame: it does not start with "NDZK"'
mkfifo trailing.fifo
timeout 60 sh -c 'cat good.ckpt; cat /dev/zero' >trailing.fifo 2>/dev/null &
writers+=($!)
refused trailing.fifo "more bytes after the last section"
# A valid checkpoint through a pipe restarts as from the file.
mkfifo good.fifo
timeout 60 cat good.ckpt >good.fifo &
writers+=($!)
bounded "${run[@]}" --restart good.fifo --x-out pipe.x >pipe.log || fail "a FIFO did not restart"
cmp -s pipe.x good.x || fail "the restart from a FIFO differs from the restart from the file"
echo "cg_hostile: forged checkpoints, endless inputs and a directory refused, a FIFO read"

# Symbolic links planted where the old writer put its temporary files: never followed.
printf 'the victim, unchanged\n' >victim
cp victim victim.orig
ln -s victim planted.ckpt.tmp
ln -s victim planted.ckpt.raw.tmp
"${run[@]}" --checkpoint planted.ckpt --compare-raw >planted.log 2>&1 ||
  { cat planted.log; fail "a run beside planted links failed"; }
cmp -s victim victim.orig || fail "a checkpoint was written through a symbolic link"
[ "$(readlink planted.ckpt.tmp)" = victim ] && [ "$(readlink planted.ckpt.raw.tmp)" = victim ] ||
  fail "a planted link was replaced"
[ ! -L planted.ckpt ] && [ ! -L planted.ckpt.raw ] || fail "the checkpoint is a link"
"${run[@]}" --every 0 --x-out full.x >/dev/null  # x after 30 iterations, no checkpoints
"${run[@]}" --restart planted.ckpt --x-out planted.x >/dev/null
cmp -s planted.x full.x || fail "the checkpoint written beside planted links does not restart"
if compgen -G "planted.ckpt*.tmp.*" >/dev/null; then fail "temporary files left behind"; fi

# Concurrent runs writing the same checkpoint (before: one's rename took the other's temporary
# file, which then failed with "cannot rename ... No such file or directory"). One thread
# each, the reference too: a reduction over other thread counts may round differently.
OMP_NUM_THREADS=1 "${run[@]}" --every 0 --x-out same-reference.x >/dev/null
pids=()
for i in 1 2 3; do
  OMP_NUM_THREADS=1 "$bin" --n 32 --max-iters 30 --every 1 --checkpoint same.ckpt >"same.$i.log" \
    2>&1 &
  pids+=($!)
done
for i in 1 2 3; do
  wait "${pids[$((i - 1))]}" || { cat "same.$i.log"; fail "concurrent run $i failed"; }
done
OMP_NUM_THREADS=1 "${run[@]}" --restart same.ckpt --x-out same.x >/dev/null
cmp -s same.x same-reference.x || fail "the concurrent runs' checkpoint does not restart exactly"
if compgen -G "same.ckpt.tmp*" >/dev/null; then fail "temporary files left behind"; fi

# A checkpoint that cannot be renamed into place (a directory is there): the run fails, saying
# why, and removes its temporary file.
mkdir -p blocked.ckpt/inside
if "${run[@]}" --checkpoint blocked.ckpt >blocked.log 2>&1; then fail "a blocked rename passed"; fi
grep -q "checkpoint not written: cannot rename 'blocked.ckpt.tmp.*' to 'blocked.ckpt': Is a directory" \
  blocked.log || { cat blocked.log; fail "the blocked rename is not explained"; }
if compgen -G "blocked.ckpt.tmp*" >/dev/null; then fail "temporary file left after a failure"; fi
echo "cg_hostile: planted links not followed, concurrent writers all succeed"
echo "cg_hostile: OK"
