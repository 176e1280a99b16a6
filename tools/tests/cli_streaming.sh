#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Streaming in the tool (issue 67, part 3): arrays larger than one default slab are compressed
# into chunked frames (version 4) a slab at a time, from files and pipes, and chunked frames
# are decompressed a slab at a time (stdin to stdout too); the frame is the same from a file, a
# pipe, a .npy file and every backend; -l lists the slabs from the index and heads; a damaged
# slab is named, a truncated frame and an index that disagrees with the slabs are refused, with
# no output left; and a 256 MiB file is compressed and decompressed within 128 MiB of virtual
# memory, which the whole-array path cannot do.
# Usage: cli_streaming.sh NDZIP_BINARY. Exits non-zero at the first failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_support.sh"
start_in_work_dir cli-streaming "$@"

size_of() { stat -c %s "$1"; }
no_output() {
  [ ! -e "$1" ] || fail "$1 exists after a failed run"
  if compgen -G "$1.tmp.*" >/dev/null; then fail "temporary file left: $(compgen -G "$1.tmp.*")"; fi
}
# frame_version FILE: byte 4.
frame_version() { u8 "$1" 4; }

# A smooth float field of 64x128x128 (4 MiB), written without NumPy.
python3 - <<'EOF'
import array, math
n0, n1, n2 = 64, 128, 128
row = [math.sin(y / 11.0) * math.cos(x / 13.0) for y in range(n1) for x in range(n2)]
with open("field.raw", "wb") as f:
    for z in range(n0):
        c = math.cos(z / 7.0)
        array.array("f", [v * c + z / 50.0 for v in row]).tofile(f)
EOF
shape=(-t float -n 64x128x128)

# ---------------------------------------------------------------------------------------------
check "--slab-rows: a chunked frame, version 4, restored by -d; info and -l list its slabs"
expect 0 "${shape[@]}" --slab-rows 4 -o field.ndz field.raw
[ "$(frame_version field.ndz)" = 4 ] || fail "field.ndz is not version 4"
[ "$(u64 field.ndz 32)" = 4 ] && [ "$(u64 field.ndz 40)" = 16 ] || fail "not 16 slabs of 4 rows"
expect 0 -d -o back.raw field.ndz
same back.raw field.raw
expect 0 info field.ndz
stdout_has "format:      ndzip-kokkos chunked frame, version 4"
stdout_has "slabs:       16 slabs of 4 rows"
stdout_has "checking:    ok"
grep -qE "^  15 +60-63 +ndzip +512x128 \(2-D, folded\) +[0-9]+ +0\.[0-9]{4}$" out.txt ||
  fail "info lacks slab 15's line: $(cat out.txt)"
expect 0 -l field.ndz
[ "$(grep -cE '^    [0-9]+ ' out.txt)" = 16 ] || fail "-l does not list 16 slabs: $(cat out.txt)"
grep -qE "^float +64x128x128 .* ok +field.ndz$" out.txt || fail "-l's line: $(cat out.txt)"
# The slab lines come from the index and the heads: the same from a pipe, read in order.
cp out.txt listed.txt
cat field.ndz | "$ndzip" -l - >out.txt
diff <(sed 's/field.ndz$/stdin/' listed.txt) out.txt || fail "-l differs on a pipe"

check "pipes: stdin to stdout both ways, the same frame as from a file, on every backend"
cat field.raw | "$ndzip" -q "${shape[@]}" --slab-rows 4 -c - >piped.ndz
same piped.ndz field.ndz
"$ndzip" -q "${shape[@]}" --slab-rows 4 <field.raw >redirected.ndz
same redirected.ndz field.ndz
"$ndzip" -q -d -c <field.ndz >restored.raw
same restored.raw field.raw
cat field.ndz | "$ndzip" -q -d -c - | cat >restored2.raw
same restored2.raw field.raw
for backend in $("$ndzip" --list-backends); do
  "$ndzip" -q -b "$backend" "${shape[@]}" --slab-rows 4 -c field.raw >"$backend.ndz"
  same "$backend.ndz" field.ndz
  "$ndzip" -q -b "$backend" -d -c field.ndz | cmp - field.raw || fail "-b $backend -d differs"
done
# A .npy file's values (header written here by hand): the frame of the raw values.
python3 - <<'EOF'
text = "{'descr': '<f4', 'fortran_order': False, 'shape': (64, 128, 128), }"
text += " " * (117 - len(text)) + "\n"  # 128 bytes with the preamble
with open("field.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode())
    f.write(open("field.raw", "rb").read())
EOF
expect 0 --slab-rows 4 -o npy.ndz field.npy
same npy.ndz field.ndz
cat field.npy | "$ndzip" -q --slab-rows 4 -c - >npy_piped.ndz
same npy_piped.ndz field.ndz
expect 0 -d -o back.npy npy.ndz
tail -c 4194304 back.npy | cmp - field.raw || fail "back.npy does not hold the values"

check "the high-ratio mode, and --chunked always for an array of one slab"
expect 0 "${shape[@]}" --slab-rows 16 --high-ratio -o hr.ndz field.raw
expect 0 -d -c hr.ndz
same out.txt field.raw
expect 0 info hr.ndz
stdout_has "high_ratio"
expect 0 "${shape[@]}" --chunked always -o one.ndz field.raw
[ "$(frame_version one.ndz)" = 4 ] && [ "$(u64 one.ndz 40)" = 1 ] || fail "not one slab"
expect 0 "${shape[@]}" -o plain.ndz field.raw
[ "$(frame_version plain.ndz)" = 1 ] || fail "a small array is not written as version 1"

check "--chunked auto: chunked above one default slab (64 MiB of values), version 1 up to it"
head -c $((64 << 20)) /dev/zero >slab.raw
{ cat slab.raw; head -c 16384 /dev/zero; } >above.raw
expect 0 -q -t float slab.raw above.raw
[ "$(frame_version slab.raw.ndz)" = 1 ] || fail "64 MiB is not written as version 1"
[ "$(frame_version above.raw.ndz)" = 4 ] || fail "64 MiB + 16 KiB is not written as version 4"
[ "$(u64 above.raw.ndz 40)" = 2 ] || fail "64 MiB + 16 KiB is not two slabs"
expect 0 -q -t float --chunked never -o never.ndz above.raw
[ "$(frame_version never.ndz)" = 1 ] || fail "--chunked never did not write version 1"
expect 0 -q -d -c above.raw.ndz
same out.txt above.raw
# A pipe without -n is read whole (its length is its extent), then written alike.
cat above.raw | "$ndzip" -q -t float -c - >above_piped.ndz
same above_piped.ndz above.raw.ndz
rm slab.raw above.raw slab.raw.ndz above.raw.ndz never.ndz above_piped.ndz

check "usage: --slab-rows and --chunked take compression into frames only"
expect_error 2 "option --slab-rows needs a number of rows, at least 1" "${shape[@]}" --slab-rows 0 field.raw
expect_error 2 "--slab-rows applies to compression only" -d --slab-rows 4 field.ndz
expect_error 2 "a --raw stream is one stream" --raw "${shape[@]}" --slab-rows 4 field.raw
expect_error 2 "unknown value 'sometimes' for --chunked" "${shape[@]}" --chunked sometimes field.raw
expect_error 2 "--slab-rows and --chunked never contradict" "${shape[@]}" --chunked never --slab-rows 4 field.raw
expect_error 1 "--slab-rows 65: 'field.raw' holds a float 64x128x128 array, whose slowest dimension has 64 rows" \
  "${shape[@]}" --slab-rows 65 -o x.ndz field.raw
no_output x.ndz
expect_error 1 "'field.raw' has 4194304 bytes, but a float 65x128x128 array has" \
  -t float -n 65x128x128 --slab-rows 4 -o x.ndz field.raw
no_output x.ndz
# From a pipe, the size shows only at its end: nothing is left behind either.
mkfifo short.fifo
head -c $((4194304 - 4096)) field.raw >short.fifo &
stdin_file=short.fifo
expect_error 1 "standard input has 4190208 bytes, but a float 64x128x128 array" \
  "${shape[@]}" --slab-rows 4 -o x.ndz -
stdin_file=/dev/null
wait
no_output x.ndz

# ---------------------------------------------------------------------------------------------
index=$(($(size_of field.ndz) - 8 * 16 - 32))
slab_at() { u64 field.ndz $((index + 8 * $1)); }

check "a damaged slab is named, and leaves no output (or, on stdout, an error after the bytes)"
cp field.ndz bad.ndz
flip bad.ndz $(($(slab_at 5) + 100))
expect_error 1 "'bad.ndz': chunked frame, slab 5: checksum mismatch" -d -o bad.raw bad.ndz
no_output bad.raw
expect_error 1 "slab 5: checksum mismatch" -d -c bad.ndz
stderr_has "bytes written to standard output before are incomplete"
[ "$(size_of out.txt)" = $((5 * 4 * 128 * 128 * 4)) ] || fail "stdout did not get slabs 0-4"
cat bad.ndz | "$ndzip" -d -o bad.raw - 2>err.txt && fail "a damaged slab from a pipe was decoded"
stderr_has "standard input: chunked frame, slab 5: checksum mismatch"
no_output bad.raw
# -l reads no stream: the damage shows only to -d.
expect 0 -l bad.ndz

check "a truncated frame is refused, naming what is missing, with no output"
head -c $(($(size_of field.ndz) - 100)) field.ndz >cut.ndz
expect_error 1 "'cut.ndz': not a valid chunked ndzip frame: truncated: the index and trailer of 16 slabs take 160 bytes, 60 are there" \
  -d -o cut.raw cut.ndz
no_output cut.raw
expect_error 1 "not a valid chunked ndzip frame" -l cut.ndz
stdout_has "BAD"
head -c $(($(slab_at 3) + 1000)) field.ndz >cut3.ndz
expect_error 1 "'cut3.ndz': chunked frame, slab 3: truncated" -d -o cut.raw cut3.ndz
no_output cut.raw
cat cut3.ndz | "$ndzip" -l - >out.txt 2>err.txt && fail "-l of a cut pipe succeeded"
stderr_has "standard input: chunked frame, slab 3: truncated"
head -c 40 field.ndz >cut_header.ndz
expect_error 1 "truncated header (40 of 64 bytes)" -d -o cut.raw cut_header.ndz
no_output cut.raw
{ cat field.ndz; printf x; } >longer.ndz
stdin_file=longer.ndz
expect_error 1 "trailing data after its trailer" -d -c -
stdin_file=/dev/null

check "an index that disagrees with the slabs: refused by -d (in order) and -l (by the index)"
cp field.ndz moved.ndz
# Slab 1 said to lie 8 bytes further on, the trailer's checksum resealed (xxhsum prints XXH3-64
# most significant byte first).
at=$((index + 8))
value=$(($(slab_at 1) + 8))
poke moved.ndz $at $((value & 255)) $(((value >> 8) & 255)) $(((value >> 16) & 255)) 0 0 0 0 0
hex=$(tail -c $((8 * 16 + 32)) moved.ndz | head -c $((8 * 16 + 24)) | xxhsum -H3 |
  sed -E 's/.*= ([0-9a-f]{16})$/\1/')
[[ $hex =~ ^[0-9a-f]{16}$ ]] || fail "xxhsum printed '$hex'"
bytes=()
for i in 7 6 5 4 3 2 1 0; do bytes+=($((16#${hex:$((2 * i)):2}))); done
poke moved.ndz $(($(size_of moved.ndz) - 8)) "${bytes[@]}"
expect_error 1 "the index puts slab 1 at $value, but it lies at $(slab_at 1) (the index disagrees with the slabs)" \
  -d -o moved.raw moved.ndz
no_output moved.raw
expect_error 1 "slab 0: its head and stream take" -l moved.ndz

# ---------------------------------------------------------------------------------------------
check "a 256 MiB file compressed and decompressed within 128 MiB of virtual memory"
# Measured on the host build (Kokkos 3.4, -b serial, one thread): the tool itself runs within
# 16 MiB of virtual memory (ulimit -v), slabs of 1 MiB (--slab-rows 16) within 24 MiB; the
# whole-array path needs 536 MiB to compress this file (input, a stream buffer of its bound and
# the encoder's scratch are reserved at once) and 456 MiB to decompress it. 128 MiB lets the
# streaming path through with room to spare (OpenMP's thread stacks, glibc's arenas) and cannot
# even hold the input. Kokkos backends that reserve address space of their own (CUDA reserves
# gigabytes; AddressSanitizer terabytes) cannot run under any such limit: then this is skipped.
limit_kib=$((128 << 10))
limited() { (ulimit -v $limit_kib && OMP_NUM_THREADS=1 exec "$ndzip" -b serial "$@"); }
if ! limited -q -f "${shape[@]}" -c field.raw >/dev/null 2>&1; then
  echo "note: the tool cannot run within $limit_kib KiB of virtual memory here; not tested"
else
  for i in $(seq 64); do cat field.raw; done >big.raw
  big=(-t float -n 4096x128x128)
  limited -q "${big[@]}" --slab-rows 16 -o big.ndz big.raw 2>err.txt || fail "streaming compress failed: $(cat err.txt)"
  [ "$(frame_version big.ndz)" = 4 ] || fail "big.ndz is not chunked"
  limited -q -d -o big.out big.ndz 2>err.txt || fail "streaming decompress failed: $(cat err.txt)"
  same big.out big.raw
  rm big.out
  limited -q -d -c big.ndz 2>err.txt | cmp - big.raw || fail "streaming to stdout failed: $(cat err.txt)"
  cat big.raw | limited -q "${big[@]}" --slab-rows 16 -c - >big_piped.ndz
  same big_piped.ndz big.ndz
  # The whole-array path, under the same limit, runs out of memory.
  limited -q "${big[@]}" --chunked never -o never.ndz big.raw 2>err.txt &&
    fail "the whole-array path compressed 256 MiB within $limit_kib KiB"
  stderr_has "out of memory"
  no_output never.ndz
  rm big.raw big.ndz big_piped.ndz
fi

echo "cli_streaming: all checks passed"
