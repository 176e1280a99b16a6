#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# cg_restart.sh BINARY WORKDIR: the example's promises on a small problem (32^3), for both
# checkpoint storages (ndzip frames and raw): a run stopped after a checkpoint and restarted from
# it gives the uninterrupted run's residual history and final x bit for bit; damaged, truncated
# and mismatched checkpoints are refused with a message naming the file and nothing written.
set -euo pipefail
bin=$1
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "cg_restart: FAIL: $*" >&2; exit 1; }
run=("$bin" --n 32 --max-iters 90 --every 15)

"${run[@]}" --checkpoint full.ckpt --history full.hist --x-out full.x >full.log
grep -q "checkpoint at iteration 90: .* raw bytes -> .* bytes in full.ckpt" full.log ||
  fail "the uninterrupted run did not report its checkpoints"
for storage in ndzip raw; do
  flag=()
  [ "$storage" = raw ] && flag=(--raw)
  "${run[@]}" "${flag[@]}" --checkpoint "$storage.ckpt" --stop-after 3 --history "$storage.a.hist" \
    >"$storage.a.log"
  grep -q "stopped after the checkpoint of iteration 45" "$storage.a.log" || fail "$storage: no stop at 45"
  [ "$(wc -l <"$storage.a.hist")" = 45 ] || fail "$storage: the stopped run went past iteration 45"
  "${run[@]}" --checkpoint "$storage.b.ckpt" --restart "$storage.ckpt" --history "$storage.b.hist" \
    --x-out "$storage.x" >"$storage.b.log"
  grep -q "restarting from $storage.ckpt at iteration 45" "$storage.b.log" || fail "$storage: no restart"
  cat "$storage.a.hist" "$storage.b.hist" | cmp -s - full.hist ||
    fail "$storage: the restarted residual history differs from the uninterrupted run's"
  cmp -s "$storage.x" full.x || fail "$storage: the restarted x differs from the uninterrupted run's"
  echo "cg_restart: $storage: stopped at 45, restarted, history and x bit-exact"
done
ndzip_size=$(stat -c %s ndzip.ckpt)
raw_size=$(stat -c %s raw.ckpt)
[ "$ndzip_size" -lt "$raw_size" ] || fail "the ndzip checkpoint ($ndzip_size) is not smaller than raw ($raw_size)"

# --compare-raw: each ndzip checkpoint, and beside it the same state raw, the raw file's size.
"${run[@]}" --max-iters 30 --checkpoint cmp.ckpt --compare-raw >cmp.log
[ "$(grep -c "the same state raw: $raw_size bytes in cmp.ckpt.raw" cmp.log)" = 2 ] ||
  fail "--compare-raw did not report the raw write of each checkpoint"
[ "$(stat -c %s cmp.ckpt.raw)" = "$raw_size" ] || fail "--compare-raw wrote a raw file of another size"
if "${run[@]}" --raw --compare-raw >/dev/null 2>&1; then fail "--raw --compare-raw accepted"; fi

# refused FILE PATTERN: a restart from FILE fails (status 1) naming it and PATTERN, writing nothing.
refused() {
  rm -f refused.x refused.hist
  if "${run[@]}" --restart "$1" --x-out refused.x --history refused.hist >refused.log 2>refused.err; then
    fail "a restart from $1 was accepted"
  fi
  grep -q "cannot restart from $1: .*$2" refused.err || { cat refused.err; fail "$1: unclear refusal"; }
  [ ! -e refused.x ] && [ ! -e refused.hist ] || fail "$1: output written after a refused restart"
}
cp ndzip.ckpt flipped.ckpt
printf '\x01' | dd of=flipped.ckpt bs=1 seek=$((ndzip_size / 2)) conv=notrunc status=none
refused flipped.ckpt "checksum mismatch"
head -c $((ndzip_size - 9)) ndzip.ckpt >truncated.ckpt
refused truncated.ckpt "runs past the end"
head -c 4000 raw.ckpt >short-raw.ckpt
refused short-raw.ckpt "runs past the end"
printf 'NDZCGCK9' | dd of=magic.ckpt bs=1 conv=notrunc status=none
refused magic.ckpt 'does not start with "NDZCGCK2"'
if "$bin" --n 40 --restart ndzip.ckpt >/dev/null 2>refused.err; then fail "a 32^3 checkpoint restarted a 40^3 run"; fi
grep -q "holds a 32^3 problem, --n asks for 40^3" refused.err || fail "the --n mismatch is not explained"
echo "cg_restart: OK"
