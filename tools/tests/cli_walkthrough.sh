#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# What a zstd user tries first, scripted: several files at once, -d and unndzip, pipes with -c,
# -k/--rm/-f, -o, --list and info, the extents' two forms, -T, -q/-v, the shape warning and
# --strict, refusals, and the progress bar (on a pseudo-terminal made by script(1), not on a
# pipe).
# Usage: cli_walkthrough.sh NDZIP_BINARY   (unndzip is the link beside it)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_support.sh"

ndzip=$(realpath "$1")
unndzip=$(dirname "$ndzip")/unndzip
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# A smooth 2-D field (rows of 384 floats, 256 rows): read with swapped extents, every row breaks
# in the middle, which compresses much worse. Besides, two more arrays of the same shape.
python3 - <<'EOF'
import math, struct
rows, cols = 256, 384
for name, phase in (("a", 0.0), ("b", 1.0), ("c", 2.0)):
    values = [math.sin(0.05 * i + phase) * 40 + math.cos(0.031 * j) * 25 + 0.001 * i * j
              for i in range(rows) for j in range(cols)]
    with open(name + ".f32", "wb") as f:
        f.write(struct.pack("<%df" % len(values), *values))
EOF
for f in a b c; do cp $f.f32 $f.orig; done

# ---------------------------------------------------------------------------------------------
check "several files at once: FILE -> FILE.ndz, inputs kept, a summary per file and a total"
expect 0 -t float -n 256x384 a.f32 b.f32 c.f32
for f in a b c; do
  [ -f $f.f32.ndz ] || fail "$f.f32.ndz not written"
  same $f.f32 $f.orig  # kept, as zstd keeps its inputs
  grep -qE "^$f\.f32 : [0-9]+\.[0-9]{2}% \([0-9.]+ [kKMG]?B => [0-9.]+ [kKMG]?B, $f\.f32\.ndz\)$" err.txt ||
    fail "no zstd-like summary for $f.f32: $(cat err.txt)"
done
stderr_has "3 files compressed : "
[ ! -s out.txt ] || fail "compressing files wrote to stdout"

check "the two forms of -n give the same file"
expect 0 -t float -n 256 384 -o spaced.ndz a.f32
same spaced.ndz a.f32.ndz
expect 0 compress -t float -n 256 384 a.f32 legacy.ndz   # the first releases' IN OUT form
same legacy.ndz a.f32.ndz

check "-d restores the original names; unndzip and 'decompress FILE' do the same"
rm a.f32 b.f32 c.f32
expect 0 -d a.f32.ndz b.f32.ndz
same a.f32 a.orig
same b.f32 b.orig
stderr_has "2 files decompressed : "
[ -f a.f32.ndz ] || fail "-d removed its input"
"$unndzip" c.f32.ndz 2>err.txt || fail "unndzip failed: $(cat err.txt)"
same c.f32 c.orig
rm c.f32
expect 0 decompress c.f32.ndz
same c.f32 c.orig

check "pipes: -c | ndzip -d -c, and no FILE at all (stdin to stdout)"
"$ndzip" -t float -n 256x384 -c a.f32 2>err.txt | "$ndzip" -d -c >piped.f32 2>>err.txt ||
  fail "-c | -d -c failed: $(cat err.txt)"
same piped.f32 a.orig
"$ndzip" -q -t float -n 256x384 <a.f32 | "$ndzip" -q -d | cmp - a.orig || fail "stdin to stdout"
"$ndzip" -t float -n 256x384 -c a.f32 2>/dev/null | cmp - a.f32.ndz || fail "-c differs from the file"

check "an existing output is kept without -f (and the other inputs go on); -f replaces it"
rm a.f32.ndz c.f32.ndz
printf 'precious' >b.f32.ndz
expect 1 -t float -n 256x384 a.f32 b.f32 c.f32
stderr_has "'b.f32.ndz' already exists"
[ "$(cat b.f32.ndz)" = precious ] || fail "b.f32.ndz was overwritten without -f"
[ -f c.f32.ndz ] || fail "the input after the failed one was not compressed"
grep -qF "2 files compressed" err.txt && grep -qF "1 failed" err.txt ||
  fail "the total does not count 2 done and 1 failed: $(cat err.txt)"
expect 0 -f -t float -n 256x384 b.f32
"$ndzip" -q -d -c b.f32.ndz | cmp - b.orig || fail "-f did not replace b.f32.ndz"

check "--rm removes an input only after its output is complete; -k keeps (the default)"
cp a.orig rm_me.f32
expect 0 --rm -t float -n 256x384 rm_me.f32
[ ! -e rm_me.f32 ] || fail "--rm kept rm_me.f32"
expect 0 -k -d rm_me.f32.ndz
same rm_me.f32 a.orig
[ -f rm_me.f32.ndz ] || fail "-k removed the input"
expect 1 --rm -t float -n 256x384 rm_me.f32   # rm_me.f32.ndz exists: nothing written
[ -f rm_me.f32 ] || fail "--rm removed an input whose output failed"

check "-o names the output; compressed data is refused to a terminal and -d needs .ndz"
expect 0 -t float -n 256x384 -o custom.bin a.f32
expect 1 -d custom.bin
stderr_has "does not end in .ndz"
mkdir -p dir && cp a.f32.ndz dir/.ndz
expect 1 -d dir/.ndz
stderr_has "has no name before .ndz"
expect 0 -d custom.bin -o custom.f32
same custom.f32 a.orig
expect 1 -t float a.f32.ndz
stderr_has "already ends in .ndz"
expect 1 -t float -n 256x384 missing.f32 a.f32 -f
stderr_has "cannot open 'missing.f32'"
same a.f32.ndz spaced.ndz   # the input after the missing one was still compressed
# script(1) gives ndzip a terminal as standard output: it must refuse to write binary there.
if command -v script >/dev/null; then
  script -qec "'$ndzip' -t float -n 256x384 -c a.f32; echo status=\$?" /dev/null >tty.txt
  grep -qF "refusing to write binary data to a terminal" tty.txt || fail "no refusal: $(cat tty.txt)"
  grep -qF "status=1" tty.txt || fail "binary to a terminal did not fail: $(cat tty.txt)"
fi

check "--list: a line per file and a total; info: every field; a damaged file is reported"
expect 0 -l a.f32.ndz b.f32.ndz
stdout_has "Type"
stdout_has "Ratio"
stdout_has "256x384"
stdout_has "2 files"
[ "$(grep -c 'float *256x384 .* ok ' out.txt)" = 2 ] || fail "--list rows: $(cat out.txt)"
expect 0 info a.f32.ndz b.f32.ndz
[ "$(grep -c '^checksum:    ok' out.txt)" = 2 ] || fail "info blocks: $(cat out.txt)"
stdout_has "total:       2 files"
cp a.f32.ndz broken.ndz
printf '\xff' | dd of=broken.ndz bs=1 seek=1000 conv=notrunc status=none
expect 1 -l a.f32.ndz broken.ndz b.f32.ndz
stdout_has "BAD"
stderr_has "broken.ndz"
[ "$(grep -c ' ok ' out.txt)" = 2 ] || fail "the sound files were not listed: $(cat out.txt)"

check "-T sets the host threads; -q is silent; -v adds timings"
expect 0 -q -T 2 -t float -n 256x384 -c a.f32
cmp out.txt a.f32.ndz || fail "-T 2 changed the stream"
[ ! -s err.txt ] || fail "-q printed: $(cat err.txt)"
expect 0 -v -t float -n 256x384 -c a.f32
stderr_has "GB/s"

check "swapped extents draw a warning; --strict makes it an error and writes nothing"
expect 0 -t float -n 256x384 -o right.ndz a.f32
grep -qF "warning" err.txt && fail "a warning for the right shape: $(cat err.txt)"
expect 0 -t float -n 384x256 -o swapped.ndz a.f32
stderr_has "warning: 'a.f32': -t float -n 384x256 compresses a sample to"
stderr_has "-t float -n 256x384 to"
expect 1 --strict -t float -n 384x256 -o strict.ndz a.f32
stderr_has "--strict: not compressed"
[ ! -e strict.ndz ] || fail "--strict wrote strict.ndz"
expect 0 --strict -t float -n 256x384 -o strict.ndz a.f32
# A file size that does not match the extents stays an error, with the sizes and the shapes
# near the given one that would fit.
expect 1 -t float -n 256x385 -o wrong.ndz a.f32
stderr_has "but a float 256x385 array has"
expect 1 -t float -n 200x384 -o wrong.ndz a.f32
stderr_has "; -t float -n 256x384 would fit"
expect 1 -t double -n 256x384 -o wrong.ndz a.f32
stderr_has "; -t float -n 256x384 or -t double -n 128x384 would fit"
[ ! -e wrong.ndz ] || fail "wrong.ndz written for a wrong size"

check "the progress bar: shown on a terminal for an input that takes over a second, not on a pipe"
slow_input="(sleep 1.6; cat a.f32)"
if command -v script >/dev/null; then
  script -qec "$slow_input | '$ndzip' -t float -n 256x384 >slow.ndz" /dev/null >tty.txt
  grep -qF "stdin : reading" tty.txt || fail "no progress bar on a terminal: $(cat -v tty.txt)"
  grep -qF $'\r\e[K' tty.txt || fail "the progress line is not redrawn in place"
  same slow.ndz a.f32.ndz
  script -qec "$slow_input | '$ndzip' -q -t float -n 256x384 >slow.ndz" /dev/null >tty.txt
  [ ! -s tty.txt ] || fail "-q showed progress: $(cat -v tty.txt)"
else
  echo "script(1) missing: progress on a terminal not checked" >&2
fi
eval "$slow_input" | "$ndzip" -t float -n 256x384 >slow.ndz 2>err.txt
grep -qF "reading" err.txt && fail "progress on a pipe: $(cat -v err.txt)"
grep -qF $'\r' err.txt && fail "carriage returns on a pipe: $(cat -v err.txt)"
stderr_has "stdin : "  # the summary still is there

echo "PASS: cli_walkthrough"
