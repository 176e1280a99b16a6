#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Checks the behaviour of the ndzip tool with inputs it makes itself: framed round trips, the
# frame layout, info, standard input/output, and that every kind of bad input or command line
# fails with the right exit status and message and leaves no output file behind. Then the file
# handling: devices and FIFOs as OUT, IN and OUT as one file, ulimit -f, SIGQUIT, endless inputs
# and the sync of OUT's directory (some parts need root, python3 or strace; each says when it is
# skipped).
# Usage: cli_behaviour.sh NDZIP_BINARY. Exits non-zero at the first failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_support.sh"

if [ $# -ne 1 ]; then
  echo "usage: $0 NDZIP_BINARY" >&2
  exit 2
fi
ndzip=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d "${TMPDIR:-/tmp}/ndzip-cli-behaviour.XXXXXX")
# Background jobs (FIFO readers and writers, an interrupted tool) end with the script too.
cleanup() {
  local pids
  pids=$(jobs -p)
  [ -z "$pids" ] || kill $pids 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# run_ndzip ARGS...: the tool; with bounded=1, limited to 20 seconds (status 124) and to 1 GiB of
# memory, far less than an endless input fills: of virtual memory (enough for the tool and two
# OpenMP threads), or, where the tool cannot even start within that (AddressSanitizer reserves
# terabytes), of resident memory through ASAN_OPTIONS.
bounded=0
if (ulimit -v $((1 << 20)) && head -c 4 /dev/zero |
  OMP_NUM_THREADS=2 "$ndzip" compress -t float -n 1 - -) >/dev/null 2>&1; then
  memory_limit=virtual
else
  memory_limit=asan-rss
fi
run_ndzip() {
  if [ "$bounded" = 0 ]; then
    "$ndzip" "$@"
  elif [ $memory_limit = virtual ]; then
    (ulimit -v $((1 << 20)) && OMP_NUM_THREADS=2 exec timeout 20 "$ndzip" "$@")
  else
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=1024" OMP_NUM_THREADS=2 \
      timeout 20 "$ndzip" "$@"
  fi
}
# no_temp FILE: no temporary file FILE.tmp.* exists.
no_temp() {
  if compgen -G "$1.tmp.*" >/dev/null; then
    fail "temporary file left behind: $(compgen -G "$1.tmp.*")"
  fi
}
# no_output FILE: neither FILE nor a temporary FILE.tmp.* exists (after a failed run).
no_output() {
  [ ! -e "$1" ] || fail "$1 exists after a failed run"
  no_temp "$1"
}
size_of() { stat -c %s "$1"; }
random_file() { head -c "$2" /dev/urandom >"$1"; }

mapfile -t backends < <("$ndzip" --list-backends)

# ---------------------------------------------------------------------------------------------
check "--help, -h, --version and COMMAND --help exit 0 and document every option"
for arg in --help -h; do
  expect 0 "$arg"
  stderr_empty
  for word in "Usage: ndzip [OPTIONS]" "ndzip -d" "ndzip -l" compress decompress info --version \
    --list-backends "-d,--decompress" "-l,--list" "-o,--output" "-c,--stdout" "-k,--keep" \
    "--rm" "-q,--quiet" "-v,--verbose" "-T,--threads" "--strict" "--no-progress" "Exit status"; do
    stdout_has "$word"
  done
done
expect 0 --version
grep -qE '^ndzip [0-9]+\.[0-9]+\.[0-9]+' out.txt || fail "--version shows no version: $(cat out.txt)"
for cmd in compress decompress; do
  expect 0 "$cmd" --help
  stderr_empty
  for word in "Usage: ndzip $cmd" "-t,--type" "-n,--extents" "--raw" "-b,--backend" \
    "-f,--force" "-h,--help" "-o,--output" "-c,--stdout" "${backends[@]}"; do
    stdout_has "$word"
  done
  # --raw says what it gives up (issue #25: every place bytes rest says what protects them).
  tr -s ' \n' ' ' <out.txt | grep -qF "a bare stream has no checksum" ||
    fail "ndzip $cmd --help does not warn that --raw has no checksum"
done
expect 0 info --help
stdout_has "Usage: ndzip info FILE"
expect 0 compress -t float --help   # help wins over an incomplete command line
stdout_has "Usage: ndzip compress"
# Help lines fit a terminal of 80 columns.
for cmd in "" compress decompress info; do
  expect 0 $cmd --help
  awk 'length > 80 { bad = 1; print } END { exit bad }' out.txt ||
    fail "ndzip $cmd --help has lines over 80 columns"
done

check "--list-backends lists the enabled backends, serial among them"
[ ${#backends[@]} -ge 1 ] || fail "--list-backends printed nothing"
printf '%s\n' "${backends[@]}" | grep -qx serial || fail "serial missing from: ${backends[*]}"

# ---------------------------------------------------------------------------------------------
check "usage errors exit 2 with a message"
random_file in.f32 20000
expect_error 2 "an empty file name" -t float ""
expect_error 2 "unknown option '--bogus'" compress --bogus -t float -n 5000 in.f32 x
grep -qF "Try 'ndzip compress --help'" err.txt || fail "no hint to compress --help: $(cat err.txt)"
# Without -t, only a .npy file's header can give the type (issue 63): per input, status 1.
expect_error 1 "needs the element type (-t float or -t double)" compress -n 5000 in.f32 x
no_output x
expect_error 1 "needs the element type (-t float or -t double)" -n 5000 in.f32
no_output in.f32.ndz
expect_error 2 "unknown element type 'int'" compress -t int -n 5000 in.f32 x
expect_error 2 "at least 1" compress -t float -n 0 in.f32 x
expect_error 2 "needs 1 to 3 extents" compress -t float -n x5 in.f32 x
expect_error 2 "needs 1 to 3 extents" -t float -n 2x3x4x5 in.f32
expect_error 2 "given twice" compress -t float -t float -n 5000 in.f32 x
expect_error 2 "does not apply to 'info'" info --raw in.f32
expect_error 2 "does not apply to '--list'" -l -t float in.f32
expect_error 2 "a raw stream does not record them" decompress --raw in.f32 x
expect_error 2 "-o takes one input, but 2 were given" -t float -o x in.f32 in.f32
expect_error 2 "-c takes one input" -t float -c in.f32 in.f32
expect_error 2 "-o and -c" -t float -o x -c in.f32
expect_error 2 "--rm with -c" -t float --rm -c in.f32
expect_error 2 "-k and --rm" -t float --rm -k in.f32
expect_error 2 "-d and -l" -d -l in.f32
expect_error 2 "option -T needs a number" -T many -t float in.f32
expect_error 2 "-q and -v" -q -v -t float in.f32
expect_error 2 "option -o needs a file name" -t float -o "" in.f32   # not "no -o given"
expect_error 2 "needs 1 to 3 extents" -t float -n "" in.f32
expect_error 2 "unknown backend ''" -t float -b "" in.f32
no_output x
no_output in.f32.ndz

check "an unknown backend is a usage error naming the enabled ones"
expect_error 2 "unknown backend 'nosuch'" compress -b nosuch -t float -n 5000 in.f32 out.nz
for b in "${backends[@]}"; do
  grep -qF "$b" err.txt || fail "backend $b not named: $(cat err.txt)"
done
no_output out.nz

# ---------------------------------------------------------------------------------------------
for type in float double; do
  width=4
  [ $type = double ] && width=8
  for shape in "5000" "70 90" "17 18 19" "4096" "64 130" "16 16 33"; do
    read -r -a n <<<"$shape"
    count=1
    for e in "${n[@]}"; do count=$((count * e)); done
    tag=${type}_${shape// /x}
    random_file "$tag.raw" $((count * width))
    head -c $((count * width)) /dev/zero >"$tag.zero"
    for backend in "${backends[@]}"; do
      check "framed round trip, $type ${shape// /x}, $backend (random and zero data)"
      for data in raw zero; do
        expect 0 compress -b "$backend" -t $type -n "${n[@]}" "$tag.$data" "$tag.$data.$backend.nz"
        stderr_empty
        [ ! -s out.txt ] || fail "compress wrote to stdout: $(head -c 200 out.txt)"
        expect 0 decompress -b "$backend" "$tag.$data.$backend.nz" "$tag.$data.$backend.back"
        same "$tag.$data.$backend.back" "$tag.$data"
        same "$tag.$data.$backend.nz" "$tag.$data.${backends[0]}.nz"  # backends agree
      done
    done

    check "frame layout, $type ${shape// /x}: header fields, then exactly the --raw stream"
    frame=$tag.raw.${backends[0]}.nz
    expect 0 compress --raw -t $type -n "${n[@]}" "$tag.raw" "$tag.raw.stream"
    [ "$(head -c 4 "$frame")" = NDZK ] || fail "$frame: no magic"
    [ "$(u8 "$frame" 4)" = 1 ] || fail "$frame: version $(u8 "$frame" 4)"
    code=1
    [ $type = double ] && code=2
    [ "$(u8 "$frame" 5)" = $code ] || fail "$frame: type code $(u8 "$frame" 5)"
    [ "$(u8 "$frame" 6)" = ${#n[@]} ] || fail "$frame: dims $(u8 "$frame" 6)"
    [ "$(u8 "$frame" 7)" = 0 ] || fail "$frame: reserved byte $(u8 "$frame" 7)"
    for a in 0 1 2; do
      want=${n[a]:-0}
      got=$(u64 "$frame" $((8 + 8 * a)))
      [ "$got" = "$want" ] || fail "$frame: extent $a is $got, not $want"
    done
    [ "$(u64 "$frame" 32)" = "$(size_of "$tag.raw.stream")" ] || fail "$frame: wrong stream length"
    [ "$(size_of "$frame")" = $(($(size_of "$tag.raw.stream") + 48)) ] || fail "$frame: wrong size"
    tail -c +49 "$frame" | cmp - "$tag.raw.stream" ||
      fail "$frame: stream differs from the --raw output"
    expect 0 decompress --raw -t $type -n "${n[@]}" "$tag.raw.stream" "$tag.raw.back2"
    same "$tag.raw.back2" "$tag.raw"
  done
done

# ---------------------------------------------------------------------------------------------
# Integer-valued floats with a border in every dimension (a 3-D grid of 16^3 hypercubes).
perl -e 'print pack("f<*", map { int(1000 * sin($_ / 300)) + $_ % 7 } 0 .. 33 * 34 * 35 - 1)' \
  >hr.f32
for backend in "${backends[@]}"; do
  check "--high-ratio: framed round trip on $backend, one stream for every backend"
  expect 0 compress --high-ratio -b "$backend" -t float -n 33x34x35 hr.f32 "hr.$backend.nz"
  expect 0 decompress -b "$backend" "hr.$backend.nz" "hr.$backend.back"
  same "hr.$backend.back" hr.f32
  same "hr.$backend.nz" "hr.${backends[0]}.nz"
done
check "--high-ratio: a version 2 frame recording the mode, smaller than the default"
expect 0 compress -t float -n 33x34x35 hr.f32 hr.default.nz
frame=hr.${backends[0]}.nz
[ "$(u8 "$frame" 4)" = 2 ] || fail "$frame: version $(u8 "$frame" 4)"
[ "$(u8 "$frame" 7)" = 1 ] || fail "$frame: mode $(u8 "$frame" 7)"
[ "$(size_of "$frame")" -lt "$(size_of hr.default.nz)" ] || fail "high-ratio frame not smaller"
expect 0 info "$frame"
stdout_has "mode:        high_ratio"
stdout_has "version 2"
check "--high-ratio --raw: the bare stream, which decompressing --raw needs --high-ratio for"
expect 0 compress --high-ratio --raw -t float -n 33x34x35 hr.f32 hr.stream
[ "$(head -c 4 hr.stream)" = NDZH ] || fail "hr.stream: no NDZH magic"
tail -c +49 "$frame" | cmp - hr.stream || fail "the frame's stream differs from the --raw output"
expect 0 decompress --raw --high-ratio -t float -n 33x34x35 hr.stream hr.raw.back
same hr.raw.back hr.f32
expect_error 1 "cannot decompress 'hr.stream'" decompress --raw -t float -n 33x34x35 hr.stream x
no_output x
check "--mode names the mode as the library, Python and numcodecs do; --high-ratio is its shorthand"
expect 0 compress --mode high_ratio -t float -n 33x34x35 hr.f32 hr.mode.nz
same hr.mode.nz "$frame"
expect 0 compress --mode ndzip -t float -n 33x34x35 hr.f32 hr.mode.default.nz
same hr.mode.default.nz hr.default.nz
expect 0 decompress --raw --mode high_ratio -t float -n 33x34x35 hr.stream hr.mode.back
same hr.mode.back hr.f32
expect_error 2 "unknown codec mode 'high-ratio' (use ndzip, high_ratio)" \
  compress --mode high-ratio -t float -n 33x34x35 hr.f32 x
no_output x
expect_error 2 "--high-ratio and --mode ndzip contradict each other" \
  compress --high-ratio --mode ndzip -t float -n 33x34x35 hr.f32 x
no_output x
check "decompressing a frame: --mode/--high-ratio contradicting the frame's mode is an error, as -t/-n"
for mode_option in "--mode=high_ratio" --high-ratio; do
  expect_error 1 "--mode high_ratio does not match 'hr.default.nz', which holds a float 33x34x35 array in the ndzip mode" \
    decompress "$mode_option" hr.default.nz x
  no_output x
done
expect_error 1 "--mode ndzip does not match '$frame', which holds a float 33x34x35 array in the high_ratio mode" \
  decompress --mode ndzip "$frame" x
no_output x
expect 0 decompress --high-ratio "$frame" hr.agreeing.back
same hr.agreeing.back hr.f32
check "info shows the version that byte 4 says: a version 2 frame of mode 0 (docs/FORMAT.md)"
cp hr.default.nz hr.v2-mode0.nz
poke hr.v2-mode0.nz 4 2
reseal hr.v2-mode0.nz
expect 0 info hr.v2-mode0.nz
stdout_has "ndzip-kokkos frame, version 2"
stdout_has "mode:        ndzip"
stdout_has "decoding:    ok"
expect 0 info hr.default.nz
stdout_has "ndzip-kokkos frame, version 1"
expect 0 decompress hr.v2-mode0.nz hr.v2-mode0.back
same hr.v2-mode0.back hr.f32
random_file hr.random 20000
expect 0 compress --high-ratio -t float -n 5000 hr.random hr.random.nz
expect 0 decompress hr.random.nz hr.random.back
same hr.random.back hr.random

# ---------------------------------------------------------------------------------------------
check "info describes a frame"
expect 0 info float_70x90.zero.serial.nz
stderr_empty
stream_bytes=$(($(size_of float_70x90.zero.serial.nz) - 48))
for line in "type:        float" "dimensions:  2" "extents:     70x90" "elements:    6300" \
  "array:       25200 bytes" "stream:      $stream_bytes bytes" "checksum:    ok" "ratio:"; do
  stdout_has "$line"
done
ratio=$(sed -n 's/^ratio: *\([0-9.]*\).*/\1/p' out.txt)
# stream bytes / array bytes, as everywhere in the docs
awk -v r="$ratio" -v s="$stream_bytes" 'BEGIN { exit !(r < 0.67 && (r * 25200 - s) ^ 2 < 4) }' ||
  fail "ratio '$ratio' is not stream bytes ($stream_bytes) / array bytes (25200)"
expect 0 info double_17x18x19.raw.serial.nz
for line in "type:        double" "dimensions:  3" "extents:     17x18x19" "elements:    5814" \
  "checksum:    ok"; do
  stdout_has "$line"
done

check "stdin and stdout ('-'), framed and raw"
stdin_file=double_70x90.raw
expect 0 compress -t double -n 70 90 - -
mv out.txt piped.nz
same piped.nz double_70x90.raw.serial.nz
stdin_file=piped.nz
expect 0 decompress - -
same out.txt double_70x90.raw
expect 0 info -
stdout_has "extents:     70x90"
stdin_file=double_70x90.raw
expect 0 compress --raw -t double -n 70 90 - piped.stream
same piped.stream double_70x90.raw.stream
stdin_file=piped.stream
expect 0 decompress --raw -t double -n 70 90 - -
same out.txt double_70x90.raw
stdin_file=/dev/null

# ---------------------------------------------------------------------------------------------
check "an existing OUT is kept unless --force"
echo old >existing
expect_error 1 "already exists" compress -t float -n 5000 float_5000.raw existing
[ "$(cat existing)" = old ] || fail "existing file was changed"
if compgen -G "existing.tmp.*" >/dev/null; then fail "temporary file left behind"; fi
expect_error 1 "already exists" decompress float_5000.raw.serial.nz existing
[ "$(cat existing)" = old ] || fail "existing file was changed"
expect 0 compress --force -t float -n 5000 float_5000.raw existing
same existing float_5000.raw.serial.nz
echo old >existing
expect 0 decompress -f float_5000.raw.serial.nz existing
same existing float_5000.raw

check "an input of the wrong size is rejected with expected and actual sizes"
expect_error 1 "has 20000 bytes, but a float 5001 array has 20004 bytes" \
  compress -t float -n 5001 float_5000.raw out.nz
no_output out.nz
expect_error 1 "has 20000 bytes, but a double 5000 array has 40000 bytes" \
  compress -t double -n 5000 float_5000.raw out.nz
no_output out.nz
expect_error 1 "has 20000 bytes" compress -t float -n 70 70 float_5000.raw out.nz
no_output out.nz

check "unreadable input and unwritable output report the system's reason"
expect_error 1 "cannot open 'missing.f32': No such file or directory" \
  compress -t float -n 5000 missing.f32 out.nz
no_output out.nz
mkdir -p adir
expect_error 1 "Is a directory" compress -t float -n 5000 adir out.nz
no_output out.nz
expect_error 1 "No such file or directory" compress -t float -n 5000 float_5000.raw nodir/out.nz
if [ -w /dev/full ]; then
  status=0
  "$ndzip" decompress float_5000.raw.serial.nz - >/dev/full 2>err.txt || status=$?
  [ $status = 1 ] || fail "writing to /dev/full exited with $status"
  grep -qF "No space left on device" err.txt || fail "no ENOSPC message: $(cat err.txt)"
fi

# ---------------------------------------------------------------------------------------------
good=float_70x90.raw.serial.nz
good_size=$(size_of $good)

check "truncated frames are rejected (decompress and info)"
head -c $((good_size - 1)) $good >cut.nz
expect_error 1 "truncated" decompress cut.nz out.raw
no_output out.raw
expect_error 1 "truncated" info cut.nz
head -c 20 $good >cut.nz
expect_error 1 "truncated header (20 of 48 bytes)" decompress cut.nz out.raw
no_output out.raw
: >cut.nz
expect_error 1 "truncated header (0 of 48 bytes)" decompress cut.nz out.raw
no_output out.raw

check "trailing data after a frame is rejected"
{ cat $good; printf 'x'; } >long.nz
expect_error 1 "1 bytes of trailing data" decompress long.nz out.raw
no_output out.raw
expect_error 1 "trailing data" info long.nz

check "a flipped stream byte or checksum byte is detected before decoding"
for offset in 48 $((48 + good_size / 2)) $((good_size - 1)) 40 47; do
  cp $good bad.nz
  flip bad.nz $offset
  expect_error 1 "checksum mismatch" decompress bad.nz out.raw
  no_output out.raw
  expect_error 1 "checksum mismatch" info bad.nz
  stdout_has "checksum:    MISMATCH"
done

check "damaged header fields are rejected"
# offset value(s) message
while IFS='|' read -r offset values message; do
  cp $good bad.nz
  # shellcheck disable=SC2086
  poke bad.nz "$offset" $values
  expect_error 1 "$message" decompress bad.nz out.raw
  no_output out.raw
  expect_error 1 "$message" info bad.nz
done <<'CASES'
0|88|does not start with "NDZK"
4|4|unsupported frame version 4
4|2 1 2 2|unknown codec mode 2
5|3|unknown element type code 3
6|0|bad dimension count 0
6|4|bad dimension count 4
7|1|reserved byte 7 is 1
16|0 0 0 0 0 0 0 0|extent N1 is 0
24|5|extent N2 is 5 in a 2-D frame
8|255 255 255 255 255 255 255 127|too large
32|0 0 0 0 0 0 0 1|inconsistent frame: a float 70x90 array compresses to 9332 to 25716 bytes, but the stream has 72057594037927936
CASES

check "the checksum covers the header: damaged extents are detected before decoding"
cp float_70x90.raw.serial.nz bad.nz   # random: one hypercube, 25716 bytes, possible for 100x100
poke bad.nz 8 100
poke bad.nz 16 100
expect_error 1 "checksum mismatch" decompress bad.nz out.raw
no_output out.raw
expect_error 1 "checksum mismatch" info bad.nz
stdout_has "checksum:    MISMATCH"

check "a frame with a valid checksum but extents its stream cannot have is rejected"
reseal bad.nz                          # now only the decoder can tell, which info runs too
expect_error 1 "cannot decompress 'bad.nz' as a float 100x100 array" info bad.nz
stdout_has "checksum:    ok"
stdout_has "decoding:    FAILED"
expect_error 1 "cannot decompress 'bad.nz' as a float 100x100 array" decompress bad.nz out.raw
no_output out.raw
cp float_4096.zero.serial.nz bad.nz   # one hypercube of zeros: a 516-byte stream
poke bad.nz 8 1 16                     # N0 = 4097: at least 520 bytes
reseal bad.nz
expect_error 1 "inconsistent frame: a float 4097 array compresses to 520 to" \
  decompress bad.nz out.raw
no_output out.raw
expect_error 1 "inconsistent frame" info bad.nz

check "-t and -n must match the frame when given"
expect_error 1 "-t double does not match" decompress -t double $good out.raw
no_output out.raw
expect_error 1 "-n 70x91 does not match" decompress -n 70 91 $good out.raw
no_output out.raw
expect_error 1 "-n 6300 does not match" decompress -n 6300 $good out.raw
no_output out.raw
expect 0 decompress -t float -n 70 90 $good out.raw
same out.raw float_70x90.raw
rm out.raw

check "raw decompress rejects trailing bytes and reports a short stream"
expect 0 compress --raw -t float -n 70 90 float_70x90.zero float_70x90.zero.stream
{ cat float_70x90.zero.stream; printf 'abcd'; } >long.stream
expect_error 1 "4 bytes of trailing data" decompress --raw -t float -n 70 90 long.stream out.raw
no_output out.raw
# Random values compress to the largest stream there is: one byte more is never read.
stream=float_70x90.raw.stream
{ cat $stream; printf 'abcd'; } >long.stream
largest=$(size_of $stream)
expect_error 1 "has $((largest + 4)) bytes, but no stream of a float 70x90 array is longer than \
$largest bytes" decompress --raw -t float -n 70 90 long.stream out.raw
no_output out.raw
head -c $(($(size_of $stream) - 4)) $stream >short.stream
expect_error 1 "cannot decompress 'short.stream' as a float 70x90 array" \
  decompress --raw -t float -n 70 90 short.stream out.raw
no_output out.raw
for backend in "${backends[@]}"; do
  expect_error 1 "cannot decompress" \
    decompress --raw -b "$backend" -t double -n 4096 float_4096.raw.stream out.raw
  no_output out.raw
done

check "arrays beyond the format's 32-bit offsets or beyond addressable memory are refused"
head -c 100 /dev/zero >zeros.bin
for backend in "${backends[@]}"; do
  expect_error 1 "too large for the ndzip format (its 32-bit offset table" \
    decompress --raw -b "$backend" -t float -n 64 70000000 zeros.bin out.raw
  no_output out.raw
done
expect_error 1 "array is too large to address" \
  decompress --raw -t float -n 4611686018427387904 zeros.bin out.raw
no_output out.raw

# ---------------------------------------------------------------------------------------------
check "character devices and FIFOs as OUT are written in place, never replaced"
frame=float_5000.raw.serial.nz
expect 0 compress -t float -n 5000 float_5000.raw /dev/null   # no --force needed, as in zstd
[ -c /dev/null ] || fail "/dev/null is no longer a character device"
if [ -w /dev/full ]; then
  expect_error 1 "cannot write '/dev/full': No space left on device" \
    decompress float_5000.raw.serial.nz /dev/full
  [ -c /dev/full ] || fail "/dev/full is no longer a character device"
fi
mkfifo out.fifo
for force in "" --force; do
  timeout 20 cat out.fifo >fifo.data 2>/dev/null &
  reader=$!
  expect 0 compress $force -t float -n 5000 float_5000.raw out.fifo
  wait $reader || fail "the reader of out.fifo failed (or the tool never opened it)"
  [ -p out.fifo ] || fail "out.fifo is no longer a FIFO after compress $force"
  same fifo.data $frame
  no_temp out.fifo
done
# Copies of /dev/null and /dev/full, so that a failure harms neither. Only root can make them,
# and only where the file system is not mounted nodev can they be opened.
if mknod null.dev c 1 3 2>/dev/null && mknod full.dev c 1 7 && : 2>/dev/null >null.dev; then
  expect 0 compress --force -t float -n 5000 float_5000.raw null.dev
  [ -c null.dev ] || fail "--force replaced the character device null.dev"
  expect_error 1 "No space left on device" decompress --force $frame full.dev
  [ -c full.dev ] || fail "--force replaced the character device full.dev"
  no_temp full.dev
else
  echo "note: no usable device nodes can be made in $work (not root, or nodev): --force on" \
    "character devices is not tested"
fi

check "directories, block devices and sockets as OUT are refused, even with --force"
mkdir -p outdir
ln -sfn outdir outdir.link
for target in outdir outdir.link; do
  expect_error 1 "is a directory; ndzip writes only to regular files, character devices and FIFOs" \
    compress --force -t float -n 5000 float_5000.raw $target
  [ -d outdir ] && [ -z "$(ls -A outdir)" ] || fail "outdir was changed"
  no_temp $target
done
if mknod block.dev b 7 0 2>/dev/null; then   # root only; never opened
  expect_error 1 "'block.dev' is a block device" compress --force -t float -n 5000 float_5000.raw \
    block.dev
  [ -b block.dev ] || fail "block.dev is no longer a block device"
  rm block.dev
fi
if command -v python3 >/dev/null; then
  python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("out.sock")'
  expect_error 1 "'out.sock' is a socket" compress --force -t float -n 5000 float_5000.raw out.sock
  [ -S out.sock ] || fail "out.sock is no longer a socket"
fi

check "--force replaces a symbolic link to a regular file, and writes through one to a device"
echo old >link.target
ln -sf link.target out.link
expect 0 compress --force -t float -n 5000 float_5000.raw out.link
[ ! -L out.link ] || fail "out.link is still a symbolic link"
same out.link $frame
[ "$(cat link.target)" = old ] || fail "the target of the replaced link was changed"
ln -sf /dev/null null.link
expect 0 compress -t float -n 5000 float_5000.raw null.link
[ -L null.link ] && [ -c /dev/null ] || fail "the link to /dev/null was replaced"

# ---------------------------------------------------------------------------------------------
check "IN and OUT that are the same file are refused before any work, input untouched"
cp float_5000.raw victim.raw
ln victim.raw victim.hard
ln -sf victim.raw victim.sym
for out in victim.raw victim.hard victim.sym ./victim.raw; do
  expect_error 1 "'victim.raw' and '$out' are the same file" \
    compress --force -t float -n 5000 victim.raw "$out"
  same victim.raw float_5000.raw
  no_temp "$out"
done
stdin_file=victim.raw
expect_error 1 "standard input and 'victim.sym' are the same file" \
  compress --force -t float -n 5000 - victim.sym
stdin_file=/dev/null
same victim.raw float_5000.raw
status=0
"$ndzip" compress --force -t float -n 5000 victim.raw - >>victim.raw 2>err.txt || status=$?
[ $status = 1 ] || fail "compress IN - >>IN exited with $status"
grep -qF "'victim.raw' and standard output are the same file" err.txt ||
  fail "no same-file message: $(cat err.txt)"
same victim.raw float_5000.raw
cp $frame victim.nz
expect_error 1 "are the same file" decompress --force victim.nz victim.nz
same victim.nz $frame

# ---------------------------------------------------------------------------------------------
check "a write beyond ulimit -f fails with 'File too large' and leaves nothing behind"
random_file big.raw 200000   # random values: the frame is larger than the 100 KiB limit
status=0
(ulimit -f 100 && exec "$ndzip" compress -t float -n 50000 big.raw big.nz) 2>err.txt ||
  status=$?
[ $status = 1 ] || fail "compress under ulimit -f 100 exited with $status (153: killed by SIGXFSZ)"
grep -qF "File too large" err.txt || fail "no EFBIG message: $(cat err.txt)"
no_output big.nz

check "SIGQUIT while OUT is written removes the temporary file"
# 256 MiB of zeros compress to a few MiB, so decompressing them spends its time writing. A try
# may miss the write (the tool finished first, or had not begun): then it must have left a
# complete OUT. At least one of five tries must catch it.
ignored=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/self/status 2>/dev/null || true)
if [ -n "$ignored" ] && (((16#$ignored >> 2) & 1)); then   # bit 2: SIGQUIT
  echo "note: this script was started with SIGQUIT ignored, which the tool keeps; not tested"
else
  zero_bytes=$((256 << 20))
  head -c $zero_bytes /dev/zero | "$ndzip" compress -t float -n 64 1024 1024 - zeros.nz
  caught=0
  for try in 1 2 3 4 5; do
    # A subshell, because bash starts a simple command in the background with SIGQUIT ignored.
    (ulimit -c 0 && exec "$ndzip" decompress zeros.nz zeros.out) 2>err.txt &
    pid=$!
    while kill -0 $pid 2>/dev/null && ! compgen -G "zeros.out.tmp.*" >/dev/null; do
      sleep 0.002
    done
    kill -QUIT $pid 2>/dev/null || true
    status=0
    { wait $pid; } 2>/dev/null || status=$?   # without bash's "Quit" report
    no_temp zeros.out
    if [ -e zeros.out ]; then
      [ "$(size_of zeros.out)" = $zero_bytes ] && cmp -s -n $zero_bytes zeros.out /dev/zero ||
        fail "try $try (status $status) left an incomplete zeros.out"
      rm zeros.out
    elif [ $status = 131 ]; then
      caught=1
      break
    else
      fail "try $try exited with status $status and left no zeros.out: $(cat err.txt)"
    fi
  done
  [ $caught = 1 ] || fail "no try was ended by SIGQUIT while writing"
  rm zeros.nz
fi

# ---------------------------------------------------------------------------------------------
check "endless inputs (/dev/zero, pipes) are read only as far as the expected size"
# Within 1 GiB and 20 seconds (run_ndzip), reading to the end would exhaust the memory ("out of
# memory", or AddressSanitizer's "hard rss limit exhausted") or the time, so only the messages
# below show that the tool stopped reading in time.
[ $memory_limit = virtual ] ||
  echo "note: the tool cannot start within 1 GiB of virtual memory; limiting its RSS instead"
bounded=1
expect 0 compress -t float -n 5000 float_5000.raw bounded.nz   # the tool runs within the limit
expect 0 decompress bounded.nz bounded.raw
same bounded.raw float_5000.raw
not_a_frame='not a valid ndzip frame: it does not start with "NDZK"'
expect_error 1 "'/dev/zero': $not_a_frame" info /dev/zero
expect_error 1 "'/dev/zero': $not_a_frame" decompress /dev/zero out.raw
no_output out.raw
expect_error 1 "'/dev/zero' has more than 64 bytes, but a float 16 array has 64 bytes" \
  compress -t float -n 16 /dev/zero out.nz
no_output out.nz
expect_error 1 "'/dev/zero' has more than 64 bytes, but no stream of a float 16 array" \
  decompress --raw -t float -n 16 /dev/zero out.raw
no_output out.raw
# feed PRODUCER...: PRODUCER writes into a pipe that is the next command's standard input.
mkfifo feed.fifo
feed() {
  "$@" >feed.fifo 2>/dev/null &
  feeder=$!
  stdin_file=feed.fifo
}
fed() {
  wait $feeder || true   # ended by SIGPIPE when the tool stops reading
  stdin_file=/dev/null
}
frame_then_zeros() { cat "$1"; cat /dev/zero; }
head_then_zeros() { head -c 48 "$1"; cat /dev/zero; }
feed cat /dev/zero
expect_error 1 "standard input: $not_a_frame" info -
fed
feed cat /dev/zero
expect_error 1 "standard input: $not_a_frame" decompress - out.raw
fed
no_output out.raw
feed cat /dev/zero
expect_error 1 "standard input has more than 64 bytes" compress -t float -n 16 - out.nz
fed
no_output out.nz
feed cat /dev/zero
expect_error 1 "standard input has more than 64 bytes, but no stream" \
  decompress --raw -t float -n 16 - out.raw
fed
no_output out.raw
feed frame_then_zeros $good   # a whole frame, then more
expect_error 1 "trailing data after the stream of $((good_size - 48)) bytes" decompress - out.raw
fed
no_output out.raw
cp $good huge.nz
poke huge.nz 32 0 0 0 0 0 0 0 1   # announces a 2^56-byte stream
feed head_then_zeros huge.nz
expect_error 1 "inconsistent frame" info -
fed
bounded=0

# ---------------------------------------------------------------------------------------------
check "the directory is synced after OUT is renamed or linked into it (strace)"
if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
  dir=$(pwd -P)
  for force in "" --force; do
    rm -f synced.nz
    # (LeakSanitizer, in a sanitizer build, cannot run under ptrace.)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
      strace -f -y -o trace.txt -e trace=fsync,fdatasync,rename,renameat,renameat2,link,linkat \
      "$ndzip" compress $force -t float -n 5000 float_5000.raw synced.nz
    same synced.nz $frame
    # The first fsync of the directory after the call that gave synced.nz its name.
    awk -v dir="$dir" '
      /(rename|link)(at2?)?\(.*synced\.nz"/ { named = 1; next }
      named && index($0, "fsync(") && index($0, "<" dir ">)") { synced = 1 }
      END { exit !synced }' trace.txt ||
      fail "no fsync of $dir after naming synced.nz ($force): $(cat trace.txt)"
  done
else
  echo "note: strace is not available; the sync of the directory is not tested"
fi

echo "PASS: cli_behaviour"
