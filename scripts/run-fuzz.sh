#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Fuzzes the decoders with libFuzzer (CMake preset `fuzz`: Clang 14, Serial, ASan+UBSan).
# Usage: scripts/run-fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  fuzzing time per target (default 60, the CI run)
#   TARGET              decode_stream, frame, roundtrip, hdf5_chunk (default: all four, one
#                       after another)
# Installs Clang and a Clang-built Kokkos (install-deps.sh --fuzz), builds into build-fuzz/,
# replays the seeds and fuzz/regressions/ (ctest --preset fuzz), then fuzzes each target. The
# corpus grows in build-fuzz/corpus/TARGET across runs, from the kept one in fuzz/corpus/TARGET
# (scripts/keep-fuzz-corpus.sh merges it back); logs go to build-fuzz/logs/TARGET.log;
# an input that breaks a property is written to build-fuzz/findings/TARGET/ and the script
# exits 1. Keep such an input as fuzz/regressions/TARGET/NAME once it is fixed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode_stream frame roundtrip hdf5_chunk)
case "$seconds" in '' | *[!0-9]*) echo "run-fuzz: SECONDS_PER_TARGET must be a number" >&2; exit 2 ;; esac

"$root/scripts/install-deps.sh" --fuzz
cd "$root"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc 2>/dev/null || echo 2)"
ctest --preset fuzz

build="$root/build-fuzz"
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for target in "${targets[@]}"; do
  binary="$build/bin/ndzip-fuzz-${target//_/-}"
  [ -x "$binary" ] || { echo "run-fuzz: unknown target '$target'" >&2; exit 2; }
  corpus="$build/corpus/$target"
  findings="$build/findings/$target"
  log="$build/logs/$target.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  inputs=("$corpus" "$build/fuzz/seeds/$target")
  for kept in "$root/fuzz/corpus/$target" "$root/fuzz/regressions/$target"; do
    [ -d "$kept" ] && inputs+=("$kept")
  done
  echo "run-fuzz: $target for $seconds s (log $log)"
  # -timeout: an input that runs for 25 s counts as a hang; -max_len keeps inputs fast.
  if "$binary" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 -max_len=65536 \
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
