#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The tool at the edges of its environment (issue #25, item 5): host thread counts beyond what
# Kokkos holds, every catchable terminating signal while OUT is written, output names as long as
# the file system allows, --rm with an output that is not a regular file, and what -l and info
# check before they call a file sound.
# Usage: cli_limits.sh NDZIP_BINARY. Exits non-zero at the first failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_support.sh"

if [ $# -ne 1 ]; then
  echo "usage: $0 NDZIP_BINARY" >&2
  exit 2
fi
ndzip=$(realpath "$1")
work=$(mktemp -d "${TMPDIR:-/tmp}/ndzip-cli-limits.XXXXXX")
cleanup() {
  local pids
  pids=$(jobs -p)
  [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
# Hundreds of OpenMP threads on a few cores: idle ones sleep instead of spinning.
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
unset KOKKOS_NUM_THREADS

# no_temporary: no temporary file of an output is left in the working folder.
no_temporary() {
  if compgen -G "*.tmp.*" >/dev/null; then fail "temporary file left: $(compgen -G "*.tmp.*")"; fi
}

head -c 40000 /dev/urandom >s.f32
"$ndzip" -q -t float -n 100x100 -o s.ndz s.f32

# ---------------------------------------------------------------------------------------------
check "-T above Kokkos' 512 host threads is a usage error; 512 is not"
expect 2 -T 520 -q -c -t float s.f32
stderr_has "at most 512"
[ ! -s out.txt ] || fail "-T 520 wrote output"
expect 2 -T 513 -d -c s.ndz
stderr_has "at most 512"
expect 0 -T 512 -q -c -t float -n 100x100 s.f32
same out.txt s.ndz

if "$ndzip" --list-backends | grep -qx openmp; then
  check "OMP_NUM_THREADS above 512 runs on 512 threads with one warning (none with -q)"
  for args in "-c -t float -n 100x100 s.f32" "-b serial -c -t float -n 100x100 s.f32"; do
    OMP_NUM_THREADS=600 expect 0 $args
    same out.txt s.ndz
    [ "$(grep -c "OMP_NUM_THREADS" err.txt)" = 1 ] || fail "ndzip $args: $(cat err.txt)"
    stderr_has "ndzip: warning: OMP_NUM_THREADS asks for 600 host threads; Kokkos holds at most 512"
    OMP_NUM_THREADS=600 expect 0 -q $args
    stderr_empty
  done
  OMP_NUM_THREADS=600 expect 0 -q -d -c s.ndz
  same out.txt s.f32
  stderr_empty
  check "KOKKOS_NUM_THREADS above 512 is an error, not a crash"
  KOKKOS_NUM_THREADS=600 expect 1 -q -d -c s.ndz
  stderr_has "KOKKOS_NUM_THREADS=600 asks for more host threads than Kokkos holds (512)"
else
  echo "note: no openmp backend in this build; OMP_NUM_THREADS is not tested"
fi

# ---------------------------------------------------------------------------------------------
check "every catchable terminating signal while OUT is written removes the temporary file"
# 64 MiB of zeros compress to a few hundred KiB, so decompressing them spends its time writing
# OUT. The tool is stopped as soon as its temporary file shows, sent the signal, and continued:
# it must die of the signal (status 128 + its number) and leave neither OUT nor the temporary
# file. A try that finds the tool already done (or the file renamed) is repeated.
head -c $((64 << 20)) /dev/zero | "$ndzip" -q -t float -n 64 512 512 -c >zeros.ndz
# interrupted_by SIGNAL: 0 once a try caught the tool writing and SIGNAL ended it as it should.
interrupted_by() {
  local signal=$1 number try pid status
  number=$(kill -l "$signal")
  for try in 1 2 3 4 5 6 7 8; do
    rm -f zeros.out
    # Core dumps off; the signal's default action restored, as bash ignores SIGINT and SIGQUIT
    # in background jobs.
    (ulimit -c 0 && exec env --default-signal "$ndzip" -q -d -o zeros.out zeros.ndz) 2>err.txt &
    pid=$!
    while kill -0 $pid 2>/dev/null && ! compgen -G "zeros.out.tmp.*" >/dev/null; do :; done
    kill -STOP $pid 2>/dev/null || { wait $pid || true; continue; }
    if ! compgen -G "zeros.out.tmp.*" >/dev/null; then
      kill -CONT $pid
      wait $pid || true
      continue
    fi
    kill "-$signal" $pid
    kill -CONT $pid
    status=0
    { wait $pid; } 2>/dev/null || status=$?
    [ $status = $((128 + number)) ] ||
      fail "SIG$signal: exit status $status, expected $((128 + number)): $(cat err.txt)"
    [ ! -e zeros.out ] || fail "SIG$signal left zeros.out"
    if compgen -G "zeros.out.tmp.*" >/dev/null; then
      fail "SIG$signal left the temporary file $(compgen -G "zeros.out.tmp.*")"
    fi
    return 0
  done
  fail "SIG$signal: no try caught the tool writing"
}
for signal in INT TERM HUP QUIT USR1 USR2 ALRM VTALRM PROF XCPU PIPE ABRT IO PWR RTMIN RTMAX; do
  interrupted_by $signal
done

check "a signal handler already in place (a profiler's SIGPROF) is kept while OUT is written"
# What profil() does in a gprof (-pg) build: a SIGPROF handler and a profiling timer, here from a
# library preloaded into the tool. Had the tool put its own handler in place of this one, the
# next tick would end it.
if cc -shared -fPIC -o profiler.so -x c - 2>/dev/null <<'EOF'; then
#include <signal.h>
#include <sys/time.h>
static void tick(int sig) { (void)sig; }
__attribute__((constructor)) static void start(void) {
  signal(SIGPROF, tick);
  struct itimerval every_ms = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_PROF, &every_ms, 0);
}
EOF
  # AddressSanitizer's runtime wants to be the first library loaded; this one does not mind.
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
    LD_PRELOAD=$PWD/profiler.so expect 0 -q -d -o zeros.out zeros.ndz
  [ "$(stat -c %s zeros.out)" = $((64 << 20)) ] || fail "zeros.out is incomplete"
  rm zeros.out
else
  echo "note: no C compiler to build a profiler's stand-in; not tested"
fi
rm zeros.ndz

# ---------------------------------------------------------------------------------------------
check "output names of 254 and 255 bytes, the most a file system allows, are written"
for length in 254 255; do
  long=$(printf "%0${length}d" 0)
  expect 0 -q -t float -n 100x100 -o "$long" s.f32
  same "$long" s.ndz
  expect 0 -q -d -f -o "$long" s.ndz
  same "$long" s.f32
  rm "$long"
  no_temporary
done
long=$(printf "%0256d" 0)
expect 1 -q -t float -n 100x100 -o "$long" s.f32
stderr_has "File name too long"
no_temporary

# ---------------------------------------------------------------------------------------------
check "--rm keeps the input unless the output is a regular file, complete and synced"
cp s.f32 in.f32
cp s.ndz in.ndz
for args in "-t float -n 100x100 -o /dev/null in.f32" "-t float -n 100x100 -o - in.f32" \
  "-d -o /dev/null in.ndz" "-d -o - in.ndz"; do
  expect 1 --rm $args
  stderr_has "not a regular file"
  stderr_has "kept"
  same in.f32 s.f32
  same in.ndz s.ndz
done
mkfifo pipe
cat pipe >/dev/null &
expect 1 --rm -t float -n 100x100 -o pipe in.f32
: >pipe  # the refusal came before the FIFO was opened: its reader still waits for a writer
wait
same in.f32 s.f32
expect 2 --rm -c -t float -n 100x100 in.f32
same in.f32 s.f32
expect 0 -q --rm -t float -n 100x100 -o in.f32.ndz in.f32
[ ! -e in.f32 ] || fail "--rm with a regular output kept the input"
same in.f32.ndz s.ndz

# ---------------------------------------------------------------------------------------------
check "-l and info decode the stream before they call a frame ok"
# A float stream relabelled as double (16384 floats have the bytes of 8192 doubles), its
# checksum recomputed: the fields agree with each other (the stream length is one a double
# array can have) and with the checksum; only decoding tells that the stream is no double
# array's.
python3 -c '
import math, struct
values = [100 * math.sin(0.01 * i) for i in range(16384)]
open("smooth.f32", "wb").write(struct.pack("<16384f", *values))'
"$ndzip" -q -t float -o smooth.ndz smooth.f32
cp smooth.ndz relabelled.ndz
poke relabelled.ndz 5 2       # element type: double
poke relabelled.ndz 8 0 32    # N0 = 8192
reseal relabelled.ndz
expect 1 -d -c relabelled.ndz
expect 1 -l s.ndz relabelled.ndz
grep -qE "^float .* ok .*s\.ndz$" out.txt || fail "-l: the sound file is not ok: $(cat out.txt)"
grep -qE "^double .* BAD .*relabelled\.ndz$" out.txt || fail "-l called relabelled.ndz ok: $(cat out.txt)"
stderr_has "relabelled.ndz"
expect 1 info relabelled.ndz
stdout_has "checksum:    ok"
stdout_has "decoding:    FAILED"
expect 0 info s.ndz
stdout_has "decoding:    ok"

check "-l's ratio is info's file ratio; info's stream ratio is labelled as such"
expect 0 -l s.ndz
list_ratio=$(awk '$NF == "s.ndz" { print $(NF - 2) }' out.txt)
expect 0 info s.ndz
stdout_has "file ratio:  $list_ratio (file bytes / array bytes, as -l)"
stdout_has "(stream bytes / array bytes)"

echo "all limits checks passed"
