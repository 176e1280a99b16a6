#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The CLI's streaming path against its whole-array path on one large float file (issue #67,
# part 3; docs/CLI.md, "Memory"), on one host thread (-b serial, OMP_NUM_THREADS=1), in one run,
# the two paths alternating: compress with --chunked never (the array and its stream held
# whole, a version 1 frame) and with the default (--chunked auto: a chunked frame written a slab
# at a time), then decompress each frame (the version 1 frame whole, the chunked one a slab at a
# time). Each pass is timed (wall clock, the process from start to exit) and its peak RSS taken
# from /usr/bin/time -v; the median of the repetitions goes into the CSV, and the ratios
# streaming / whole-array are printed. Outputs go to files (synced, as the tool always does),
# and, unless --files-only, also to /dev/null, which leaves out the disk.
#
# Usage: scripts/bench-streaming.sh [--input FILE -n N0xN1xN2] [--reps N] [--csv OUT]
#                                   [--files-only] [--keep]
#   default input: a smooth 3-D float32 field of 1024x1024x1024 (4 GiB) generated in a
#   temporary folder (python3 with NumPy, 16 planes at a time); the tool: build/bin/ndzip (or
#   $NDZIP); the CSV: docs/bench/cli-streaming-host-YYYYMMDD.csv. Temporary files go under
#   $TMPDIR (default /tmp): the input, two frames and an output, about 11 GiB.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ndzip=${NDZIP:-$root/build/bin/ndzip}
input="" shape=1024x1024x1024 reps=3 files_only=0 keep=0
csv=$root/docs/bench/cli-streaming-host-$(date +%Y%m%d).csv
while [ $# -gt 0 ]; do
  case $1 in
    --input) input=$2; shift 2 ;;
    -n) shape=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --csv) csv=$2; shift 2 ;;
    --files-only) files_only=1; shift ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--input FILE -n N0xN1xN2] [--reps N] [--csv OUT] [--files-only] [--keep]" >&2
       exit 2 ;;
  esac
done
[ -x "$ndzip" ] || { echo "bench-streaming: no $ndzip (build it: ninja -C build ndzip-cli)" >&2; exit 1; }
[ -x /usr/bin/time ] || {
  echo "bench-streaming: needs /usr/bin/time (Debian package 'time'; scripts/install-deps.sh)" >&2
  exit 1
}
work=$(mktemp -d "${TMPDIR:-/tmp}/ndzip-bench-streaming.XXXXXX")
[ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT

if [ -z "$input" ]; then
  input=$work/field.f32
  IFS=x read -r n0 n1 n2 <<<"$shape"
  echo "bench-streaming: generating a smooth float32 field of $shape in $input"
  /usr/bin/python3 - "$input" "$n0" "$n1" "$n2" <<'EOF'
import sys
import numpy as np
path, n0, n1, n2 = sys.argv[1], *map(int, sys.argv[2:])
y, x = np.mgrid[0:n1, 0:n2].astype(np.float32)
base = np.sin(y / 61) * np.cos(x / 47) + np.sin((x + y) / 173)
with open(path, "wb") as f:
    for z0 in range(0, n0, 16):
        z = np.arange(z0, min(z0 + 16, n0), dtype=np.float32)[:, None, None]
        (base[None] * np.cos(z / 29) + z / 97 + np.sin(z / 7) * 0.25).astype(np.float32).tofile(f)
EOF
fi
bytes=$(stat -c %s "$input")
echo "bench-streaming: $input ($bytes bytes, float $shape), $reps repetitions, $("$ndzip" --version | head -1)"

# run NAME ARGS...: one pass of the tool, timed; appends "NAME seconds rss_kib" to passes.txt.
run() {
  local name=$1 start end
  shift
  sync
  start=$(date +%s.%N)
  OMP_NUM_THREADS=1 /usr/bin/time -v -o "$work/time.txt" "$ndzip" -b serial -q -f "$@"
  end=$(date +%s.%N)
  local rss
  rss=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$work/time.txt")
  echo "$name $(awk "BEGIN { print $end - $start }") $rss" | tee -a "$work/passes.txt"
}

compress_args=(-t float -n "$shape")
sinks=(file)
[ "$files_only" = 1 ] || sinks+=(null)
: >"$work/passes.txt"
for rep in $(seq "$reps"); do
  # Alternating which path goes first, so that neither always finds the caches warmer.
  if [ $((rep % 2)) = 1 ]; then paths=(in-memory streaming); else paths=(streaming in-memory); fi
  for sink in "${sinks[@]}"; do
    for path in "${paths[@]}"; do
      option=(--chunked auto)
      [ "$path" = in-memory ] && option=(--chunked never)
      frame=$work/$path.ndz
      out=$work/out.f32
      [ "$sink" = null ] && out=/dev/null
      if [ "$sink" = file ]; then
        run "$path/compress/$sink" "${compress_args[@]}" "${option[@]}" -o "$frame" "$input"
      else
        run "$path/compress/$sink" "${compress_args[@]}" "${option[@]}" -o /dev/null "$input"
      fi
      run "$path/decompress/$sink" -d -o "$out" "$frame"
      if [ "$rep" = 1 ] && [ "$sink" = file ]; then
        cmp "$out" "$input" || { echo "bench-streaming: $path did not restore the input" >&2; exit 1; }
        stat -c %s "$frame" >"$work/$path.size"
      fi
      [ "$sink" = file ] && rm -f "$out"
    done
  done
done

mkdir -p "$(dirname "$csv")"
/usr/bin/python3 - "$work" "$bytes" "$csv" <<'EOF'
import statistics, sys
work, n, csv = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = {}
for line in open(f"{work}/passes.txt"):
    name, seconds, rss = line.split()
    runs.setdefault(name, []).append((float(seconds), int(rss)))
size = {p: int(open(f"{work}/{p}.size").read()) for p in ("in-memory", "streaming")}
rows = []
with open(csv, "w") as f:
    f.write("path,direction,seconds,gb_per_s,peak_rss_mib,ratio\n")
    for name, passes in runs.items():
        path, direction, sink = name.split("/")
        seconds = statistics.median(s for s, _ in passes)
        rss = statistics.median(r for _, r in passes) / 1024
        label = path if sink == "file" else f"{path} (to /dev/null)"
        ratio = size[path] / n
        rows.append((path, direction, sink, seconds, n / seconds / 1e9, rss))
        f.write(f"{label},{direction},{seconds:.3f},{n / seconds / 1e9:.3f},{rss:.1f},{ratio:.4f}\n")
print(f"wrote {csv}")
print(f"{'path':<28} {'direction':<11} {'seconds':>8} {'GB/s':>6} {'RSS MiB':>8}")
for path, direction, sink, seconds, gbps, rss in rows:
    label = path if sink == "file" else f"{path} (to /dev/null)"
    print(f"{label:<28} {direction:<11} {seconds:8.3f} {gbps:6.3f} {rss:8.1f}")
by = {(p, d, s): (g, r) for p, d, s, _, g, r in rows}
for sink in sorted({s for _, _, s, *_ in rows}):
    for direction in ("compress", "decompress"):
        g_s, r_s = by[("streaming", direction, sink)]
        g_m, r_m = by[("in-memory", direction, sink)]
        print(f"streaming / in-memory, {direction}, to {'files' if sink == 'file' else '/dev/null'}: "
              f"GB/s {g_s / g_m:.2f}x, peak RSS {r_s / r_m:.3f}x ({r_s:.0f} / {r_m:.0f} MiB)")
EOF
