#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# check_full_disk.sh NDZIP_BENCH WORKDIR: ndzip-bench's --json and --csv --append on a full disk
# (a 64 KiB tmpfs; root only, else skipped with status 77, saying why): status 1, a message
# naming the file and "No space left on device", the previous file byte for byte as it was, no
# temporary file; with room again, --append keeps the rows already there. (Before: the files
# were written in place, truncated or appended to, and a failure said "writing 'FILE' failed".)
set -euo pipefail
bench=$1
work=$2
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../examples/cg_checkpoint/tests/full_tmpfs.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work"
trap unmount_small_tmpfs EXIT
fail() { echo "check_full_disk: FAIL: $*" >&2; exit 1; }
mount_small_tmpfs full
run=("$bench" --sweep --max-mib 1 -b serial)

# refused FILE OPTION...: with FILE holding an earlier run's rows and the disk full, the bench
# writing FILE through OPTION... fails naming FILE and ENOSPC, and FILE keeps its bytes.
refused() {
  local file=$1 status=0
  shift
  printf 'rows of an earlier run\n%.0s' {1..40} >"$file"
  cp "$file" old
  fill_tmpfs_leaving 0
  "${run[@]}" "$@" "$file" >run.log 2>run.err || status=$?
  [ "$status" = 1 ] || { cat run.err; fail "$* on a full disk: exit status $status, not 1"; }
  grep -qF "'$file' not written: " run.err || { cat run.err; fail "$*: the file is not named"; }
  grep -qF "No space left on device" run.err || { cat run.err; fail "$*: ENOSPC not named"; }
  cmp -s "$file" old || fail "$*: the previous $file was not kept whole"
  no_temporary_in_tmpfs
  empty_tmpfs
  echo "check_full_disk: $* on a full disk: status 1, '$(cat run.err)', old file kept"
}
refused full/rows.json --json
refused full/rows.csv --append --csv

"${run[@]}" --csv full/rows.csv --append >run.log
head -c "$(stat -c %s old)" full/rows.csv | cmp -s - old || fail "--append lost the earlier rows"
[ "$(grep -c '^sweep,' full/rows.csv)" = 1 ] || fail "--append did not add the run's row"
no_temporary_in_tmpfs
echo "check_full_disk: with room, --csv --append kept the earlier rows and added the new one"
echo "check_full_disk: OK"
