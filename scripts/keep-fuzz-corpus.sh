#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Keeps the fuzz corpus across sessions and machines: merges what the fuzzer found
# (build-fuzz/corpus/TARGET, grown by scripts/run-fuzz.sh) into the kept corpus in the
# repository (fuzz/corpus/TARGET) with libFuzzer's -merge=1, which keeps only the inputs that add
# coverage, so the kept corpus stays small. CTest replays it (fuzz-replay-*), and run-fuzz.sh
# starts from it. Run after scripts/run-fuzz.sh; commit fuzz/corpus/ afterwards.
# Usage: scripts/keep-fuzz-corpus.sh [TARGET...]   (default: every target)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(decode_stream frame roundtrip hdf5_chunk)
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
for target in "${targets[@]}"; do
  binary="$root/build-fuzz/bin/ndzip-fuzz-${target//_/-}"
  [ -x "$binary" ] || { echo "keep-fuzz-corpus: no $binary (run scripts/run-fuzz.sh first)" >&2; exit 2; }
  kept="$root/fuzz/corpus/$target"
  merged="$root/build-fuzz/corpus-merge/$target"
  rm -rf "$merged"
  mkdir -p "$merged" "$kept" "$root/build-fuzz/corpus/$target"
  # The kept corpus first: its inputs stay where they add nothing new over one another.
  "$binary" -merge=1 -timeout=25 -rss_limit_mb=4096 -max_len=65536 "$merged" "$kept" \
    "$root/build-fuzz/corpus/$target" >"$root/build-fuzz/logs/$target.merge.log" 2>&1
  rm -rf "$kept"
  mv "$merged" "$kept"
  echo "keep-fuzz-corpus: $target: $(find "$kept" -type f | wc -l) inputs," \
    "$(du -sk "$kept" | cut -f1) KiB in fuzz/corpus/$target"
done
