#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Fuzzes the decoders with libFuzzer (CMake preset `fuzz`: Clang 14, Serial, ASan+UBSan).
# Usage: scripts/run-fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#        scripts/run-fuzz.sh --keep [TARGET...]
#   SECONDS_PER_TARGET  fuzzing time per target (default 60, the CI run)
#   TARGET              decode_stream, frame, roundtrip, hdf5_chunk, decode_high_ratio,
#                       chunked_frame, region (default: all, one after another)
#   --keep              merge the grown corpus into the kept one, fuzz/corpus/TARGET, with
#                       libFuzzer's -merge=1 (only inputs that add coverage stay); commit it
# Installs Clang and a Clang-built Kokkos (install-deps.sh --fuzz), builds into build-fuzz/,
# replays the seeds and fuzz/regressions/ (ctest --preset fuzz), then fuzzes each target. The
# corpus grows in build-fuzz/corpus/TARGET across runs, from the kept one in fuzz/corpus/TARGET;
# logs go to build-fuzz/logs/TARGET.log; an input that breaks a property is written to
# build-fuzz/findings/TARGET/ and the script exits 1. Keep such an input as
# fuzz/regressions/TARGET/NAME once it is fixed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
keep=0
if [ "${1:-}" = --keep ]; then
  keep=1
  shift
  seconds=0
else
  seconds=${1:-60}
  shift || true
fi
targets=("$@")
default_targets=(decode_stream frame roundtrip hdf5_chunk decode_high_ratio chunked_frame region)
[ ${#targets[@]} -gt 0 ] || targets=("${default_targets[@]}")
case "$seconds" in '' | *[!0-9]*) echo "run-fuzz: SECONDS_PER_TARGET must be a number" >&2; exit 2 ;; esac

# The largest input: small inputs run fast, and a stream or frame of several hypercubes fits in
# 16 KiB; the round trip's input is the values, so 33000 bytes: one whole double hypercube
# (32 KiB) and its shape prefix.
max_len_of() { if [ "$1" = roundtrip ]; then echo 33000; else echo 16384; fi; }

"$root/scripts/install-deps.sh" --fuzz
cd "$root"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc 2>/dev/null || echo 2)"
[ "$keep" = 1 ] || ctest --preset fuzz

build="$root/build-fuzz"
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for target in "${targets[@]}"; do
  binary="$build/bin/ndzip-fuzz-${target//_/-}"
  [ -x "$binary" ] || { echo "run-fuzz: unknown target '$target'" >&2; exit 2; }
  corpus="$build/corpus/$target"
  kept="$root/fuzz/corpus/$target"
  findings="$build/findings/$target"
  log="$build/logs/$target.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  max_len=$(max_len_of "$target")
  if [ "$keep" = 1 ]; then
    merged="$build/corpus-merge/$target"
    rm -rf "$merged"
    mkdir -p "$merged" "$kept"
    "$binary" -merge=1 -timeout=25 -rss_limit_mb=4096 -max_len="$max_len" "$merged" "$kept" \
      "$corpus" >"$build/logs/$target.merge.log" 2>&1
    rm -rf "$kept"
    mv "$merged" "$kept"
    echo "run-fuzz: $target: kept $(find "$kept" -type f | wc -l) inputs," \
      "$(du -sk "$kept" | cut -f1) KiB in fuzz/corpus/$target"
    continue
  fi
  inputs=("$corpus" "$build/fuzz/seeds/$target")
  for dir in "$kept" "$root/fuzz/regressions/$target"; do
    [ -d "$dir" ] && inputs+=("$dir")
  done
  echo "run-fuzz: $target for $seconds s (log $log)"
  # -timeout: an input that runs for 25 s counts as a hang.
  if "$binary" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 -max_len="$max_len" \
       -print_final_stats=1 -artifact_prefix="$findings/" "${inputs[@]}" >"$log" 2>&1; then
    grep -E '^#[0-9]+.*(DONE|pulse)' "$log" | tail -n 1 || true
    grep -E 'stat::number_of_executed_units|stat::new_units_added' "$log" || true
  else
    echo "run-fuzz: $target FOUND AN INPUT THAT BREAKS A PROPERTY (see $log and $findings):" >&2
    grep -E 'ERROR|violated|SUMMARY|^input:' "$log" | head -n 20 >&2 || true
    status=1
  fi
done
exit "$status"
