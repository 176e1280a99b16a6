#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# `ndzip -d --region` (issue 67, part 3): boxes of a 3-D float field decoded from a version 1
# frame and from a chunked frame of small slabs (and a version 2 and a folded version 3 frame)
# equal NumPy's slicing of the field bit for bit, as raw values and as .npy files, from a file
# (mapped), a pipe and on every backend; bad spellings, boxes outside the array, empty ones and
# too many axes are refused before any output exists; a damaged slab fails only the boxes that
# touch it, which name it.
# Usage: cli_region.sh NDZIP_BINARY. Exits non-zero at the first failure; 77: no NumPy.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_support.sh"
start_in_work_dir cli-region "$@"

# One host thread: some 60 short runs, each of which would otherwise start and stop a thread
# pool (the backend loop below runs two).
export OMP_NUM_THREADS=1
python=/usr/bin/python3
if ! "$python" -c "import numpy" 2>/dev/null; then
  echo "skipped: $python has no NumPy"
  exit 77
fi
size_of() { stat -c %s "$1"; }
no_output() {
  [ ! -e "$1" ] || fail "$1 exists after a failed run"
  if compgen -G "$1.tmp.*" >/dev/null; then fail "temporary file left: $(compgen -G "$1.tmp.*")"; fi
}

# A smooth float field of 40x50x60, with a few special values; a 2-D and a thin 3-D one.
"$python" - <<'EOF'
import numpy as np
z, y, x = np.meshgrid(np.arange(40), np.arange(50), np.arange(60), indexing="ij")
a = (np.sin(x / 7.0) * np.cos(y / 5.0) + z / 10.0).astype("<f4")
a[3, 4, 5], a[30, 40, 50], a[0, 0, 1] = np.nan, -np.inf, -0.0
a.tofile("field.raw")
np.arange(30 * 70, dtype="<f8").reshape(30, 70).tofile("plane.raw")
(np.arange(5 * 90 * 180, dtype="<f4") % 251).tofile("thin.raw")
EOF
shape=(-t float -n 40x50x60)
expect 0 "${shape[@]}" --chunked never --folding none -o v1.ndz field.raw
expect 0 "${shape[@]}" --slab-rows 7 -o chunked.ndz field.raw
expect 0 "${shape[@]}" --chunked never --folding none --mode high_ratio -o v2.ndz field.raw
expect 0 -t double -n 30x70 -o plane.ndz plane.raw
expect 0 -t float -n 5x90x180 -o thin.ndz thin.raw
for pair in v1:1 chunked:4 v2:2 thin:3; do
  [ "$(u8 "${pair%:*}.ndz" 4)" = "${pair#*:}" ] || fail "${pair%:*}.ndz is not version ${pair#*:}"
done
[ "$(u64 chunked.ndz 40)" = 6 ] || fail "chunked.ndz does not have 6 slabs"

# ---------------------------------------------------------------------------------------------
check "boxes of a version 1 and a chunked frame equal NumPy's slicing, raw and .npy"
# REGION and the NumPy index that gives the same box (a single index keeping its axis).
regions=(
  "0,0,0|0:1,0:1,0:1"          # a corner element
  "39,49,59|39:40,49:50,59:60" # the opposite corner
  "10|10:11"                   # a 2-D slice along each axis
  ":,20|:,20:21"
  ":,:,30|:,:,30:31"
  "5:23,10:40,7:50|5:23,10:40,7:50"  # across slabs 0 to 3 (of 7 rows)
  "13:15,:,59:|13:15,:,59:"    # across a slab boundary, the last column
  ":20,3:|:20,3:"
  ":|:"                        # the whole array
  ":,:,:|:,:,:"
)
cases=()
for frame in v1 chunked v2; do
  i=0
  for entry in "${regions[@]}"; do
    region=${entry%%|*}
    expect 0 -d -q --region "$region" -o "$frame.$i.raw" "$frame.ndz"
    expect 0 -d -q --region="$region" -o "$frame.$i.npy" "$frame.ndz"
    cases+=("field.raw|float32|40,50,60|${entry#*|}|$frame.$i.raw|$frame.$i.npy")
    i=$((i + 1))
  done
done
# A folded version 3 frame and a 2-D double one.
expect 0 -d -q --region 2:4,10:80,100: -o thin.box.raw thin.ndz
cases+=("thin.raw|float32|5,90,180|2:4,10:80,100:|thin.box.raw|")
expect 0 -d -q --region 7:29,1 -o plane.box.npy plane.ndz
cases+=("plane.raw|float64|30,70|7:29,1:2||plane.box.npy")
# -d's other outputs: -c, --npy -c, IN OUT, the name derived from FILE.ndz.
"$ndzip" -d -q --region 5:23,10:40,7:50 -c chunked.ndz >stdout.raw
"$ndzip" -d -q --npy --region 5:23,10:40,7:50 -c v1.ndz >stdout.npy
cases+=("field.raw|float32|40,50,60|5:23,10:40,7:50|stdout.raw|stdout.npy")
expect 0 decompress --region :,20 chunked.ndz in_out.npy
cp chunked.ndz named.ndz
expect 0 -d -q --region :,20 named.ndz
cases+=("field.raw|float32|40,50,60|:,20:21|named|in_out.npy")
stderr_empty
# From a pipe (read whole first): the same bytes.
cat chunked.ndz | "$ndzip" -d -q --region 5:23,10:40,7:50 -c - | cmp - stdout.raw ||
  fail "a region from a pipe (chunked frame) differs"
"$ndzip" -d -q --region 5:23,10:40,7:50 -c - <v1.ndz | cmp - stdout.raw ||
  fail "a region from standard input (version 1 frame) differs"
cat v1.ndz | "$ndzip" -d -q --region 5:23,10:40,7:50 -o piped.raw -
same piped.raw stdout.raw
# Every backend, and -t/-n that match the frame.
for backend in $("$ndzip" --list-backends); do
  "$ndzip" -d -q -T 2 -b "$backend" "${shape[@]}" --region 5:23,10:40,7:50 -c chunked.ndz |
    cmp - stdout.raw || fail "-b $backend --region differs"
done
"$python" - "${cases[@]}" <<'EOF'
import sys
import numpy as np
def index_of(text):
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition(":")
        out.append(slice(int(lo) if lo else None, int(hi) if hi else None))
    return tuple(out)
for case in sys.argv[1:]:
    source, dtype, shape, index, raw, npy = case.split("|")
    shape = tuple(int(n) for n in shape.split(","))
    want = np.fromfile(source, dtype="<" + {"float32": "f4", "float64": "f8"}[dtype]).reshape(shape)
    want = want[index_of(index)]
    if raw:
        got = open(raw, "rb").read()
        assert got == want.tobytes(), f"{raw}: not the values of [{index}]"
    if npy:
        got = np.load(npy)
        assert got.shape == want.shape and got.dtype == want.dtype, f"{npy}: {got.shape} {got.dtype}"
        assert got.tobytes() == want.tobytes(), f"{npy}: not the values of [{index}]"
print(f"{len(sys.argv) - 1} boxes equal NumPy's slicing")
EOF
# The summary names the box and the array.
expect 0 -d --region 10 -o summary.raw chunked.ndz
stderr_has "([10:11, 0:50, 0:60] of the float 40x50x60 array, summary.raw)"
expect 0 -d -v --region 10 -o verbose.raw -f chunked.ndz
stderr_has "a 1x50x60 box on"
stderr_has "slab 1 of 6 slabs of 7 rows (the last 5) decoded"

# ---------------------------------------------------------------------------------------------
check "refusals: bad spellings (usage, exit 2), boxes outside or empty, too many axes; nothing left"
for bad in "1-2" "a" "0:10:2" "1,,2" "0:5;3" "1.5" "99999999999999999999"; do
  expect_error 2 "option --region" -d --region="$bad" -o bad.raw chunked.ndz
  no_output bad.raw
done
expect_error 2 "option --region needs START:STOP for each axis" -d --region 1-2 -o bad.raw v1.ndz
expect_error 2 "negative indices are not supported ('-1:5')" -d --region -1:5 -o bad.raw v1.ndz
expect_error 2 "negative indices are not supported ('5:-1' in '0,5:-1')" -d --region=0,5:-1 \
  -o bad.raw v1.ndz
expect_error 2 "steps are not supported" -d --region ::2 -o bad.raw v1.ndz
expect_error 2 "option --region names 4 axes in '1,2,3,4'; ndzip arrays have 1 to 3" \
  -d --region 1,2,3,4 -o bad.raw v1.ndz
no_output bad.raw
for frame in v1 chunked; do
  expect_error 1 "--region '40': axis 0 (40:41) lies outside the array: '$frame.ndz' holds a 3-D float 40x50x60 array (slowest first), whose axis 0 has indices 0 to 39" \
    -d --region 40 -o bad.raw $frame.ndz
  expect_error 1 "--region ':,0:51': axis 1 (0:51) lies outside the array" \
    -d --region :,0:51 -o bad.raw $frame.ndz
  expect_error 1 "--region ':,:,60:': axis 2 (60:) lies outside the array" \
    -d --region :,:,60: -o bad.raw $frame.ndz
  expect_error 1 "--region '5:5': axis 0 (5:5) is empty (STOP must exceed START); '$frame.ndz' holds a 3-D float 40x50x60 array" \
    -d --region 5:5 -o bad.raw $frame.ndz
  expect_error 1 "axis 1 (9:3) is empty" -d --region :,9:3 -o bad.raw $frame.ndz
  no_output bad.raw
  expect_error 1 "lies outside the array" -d --region 40 -c $frame.ndz
  [ ! -s out.txt ] || fail "a refused region wrote to standard output"
done
expect_error 1 "--region '1,2,3' names 3 axes, but 'plane.ndz' holds a 2-D double 30x70 array" \
  -d --region 1,2,3 -o bad.raw plane.ndz
no_output bad.raw
expect_error 1 "-t double does not match 'v1.ndz'" -d -t double --region 1 -o bad.raw v1.ndz
expect_error 1 "--mode ndzip does not match 'v2.ndz'" -d --mode ndzip --region 1 -o bad.raw v2.ndz
no_output bad.raw
expect_error 2 "--rm with --region" -d --rm --region 1 -o bad.raw v1.ndz
expect_error 2 "--region applies to decompression only" --region 1 "${shape[@]}" field.raw
expect_error 2 "--region does not apply to '--list'" -l --region 1 v1.ndz
expect_error 2 "--region reads frames" -d --raw "${shape[@]}" --region 1 -o bad.raw v1.ndz
no_output bad.raw
[ -e v1.ndz ] && [ ! -e field.raw.ndz ] || fail "a refused command changed the files"
# An existing output is kept, as -d keeps it.
echo keep >kept.raw
expect_error 1 "already exists" -d --region 1 -o kept.raw v1.ndz
[ "$(cat kept.raw)" = keep ] || fail "kept.raw was replaced"
# -l and info are unaffected: they take no --region.
expect 0 -l chunked.ndz
stdout_has " ok "

# ---------------------------------------------------------------------------------------------
check "a damaged slab: boxes that do not touch it decode, those that do fail naming it"
cp chunked.ndz bad.ndz
index=$(($(size_of bad.ndz) - 8 * 6 - 32))
slab_at() { u64 bad.ndz $((index + 8 * $1)); }
flip bad.ndz $(($(slab_at 3) + 32 + 40))   # inside slab 3's stream (rows 21-27)
expect_error 1 "'bad.ndz': chunked frame, slab 3: checksum mismatch" -d -o bad.raw bad.ndz
no_output bad.raw
expect 0 -d -q --region 0:21,:,5:9 -o good.raw bad.ndz       # slabs 0-2
expect 0 -d -q --region 0:21,:,5:9 -o want.raw chunked.ndz
same good.raw want.raw
expect 0 -d -q --region 28:,7 -o good2.raw bad.ndz           # slabs 4-5
expect 0 -d -q --region 28:,7 -o want2.raw chunked.ndz
same good2.raw want2.raw
for box in 21 27,49,59 20:22 0:40 :; do
  expect_error 1 "'bad.ndz': chunked frame, slab 3: checksum mismatch" \
    -d --region "$box" -o bad.raw bad.ndz
  no_output bad.raw
done
stdin_file=bad.ndz  # a regular file: mapped, as a named one
expect_error 1 "standard input: chunked frame, slab 3: checksum mismatch" -d --region 24 -c -
[ ! -s out.txt ] || fail "a damaged slab's region wrote to standard output"
stdin_file=/dev/null
cat bad.ndz | "$ndzip" -d --region 24 -c - >out.txt 2>err.txt && fail "a damaged slab decoded"
stderr_has "standard input: chunked frame, slab 3: checksum mismatch"
[ ! -s out.txt ] || fail "a damaged slab's region wrote to standard output"
cat bad.ndz | "$ndzip" -d -q --region 28:,7 -c - | cmp - want2.raw ||
  fail "a region beside the damaged slab differs from a pipe"
# A version 1 frame is checked whole by its checksum: any damage fails every box.
cp v1.ndz bad1.ndz
flip bad1.ndz $(($(size_of bad1.ndz) - 100))
expect_error 1 "'bad1.ndz': " -d --region 0 -o bad.raw bad1.ndz
stderr_has "checksum"
no_output bad.raw

# ---------------------------------------------------------------------------------------------
check "a mapped file: a box in one slab reads about that slab (fincore), not the file"
# 16 MiB of random floats (incompressible) in 16 slabs of 1 MiB; the file is dropped from the
# page cache first (dd iflag=nocache), which a tmpfs cannot do: skipped there.
head -c $((64 * 256 * 256 * 4)) /dev/urandom >random.raw
expect 0 -t float -n 64x256x256 --slab-rows 4 -o random.ndz random.raw
resident() { fincore --bytes --noheadings --output RES "$1" | tr -d " "; }
if command -v fincore >/dev/null && dd if=random.ndz iflag=nocache count=0 status=none &&
  [ "$(resident random.ndz)" = 0 ]; then
  expect 0 -d -q --region 9 -o slice.raw random.ndz
  read_bytes=$(resident random.ndz)
  echo "  $read_bytes of $(size_of random.ndz) bytes read for a box in one slab of 1 MiB"
  [ "$read_bytes" -le $((3 << 20 >> 1)) ] ||
    fail "a box in one slab read $read_bytes bytes of the $(size_of random.ndz)-byte file"
  cmp slice.raw <(tail -c +$((9 * 256 * 256 * 4 + 1)) random.raw | head -c $((256 * 256 * 4))) ||
    fail "the slice of random.ndz differs"
else
  echo "  skipped: fincore is missing, or the page cache of $work cannot be dropped"
fi

echo "cli_region: all checks passed"
