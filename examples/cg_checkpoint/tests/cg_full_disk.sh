#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# cg_full_disk.sh BINARY WORKDIR: the example's outputs on a full disk (a 64 KiB tmpfs; root
# only, else skipped with status 77, saying why). --history, --x-out and the checkpoint, each
# replacing an existing file on a disk too full for the new one: the run ends with status 1 and
# a message naming the output and "No space left on device", the old file is byte for byte what
# it was, and no temporary file is left. With room again, each replaces its file whole.
# (Issue 62, rows 15 and 16: --history exited 0 without a word, keeping 785 of 2263 lines;
# --x-out truncated the old file and left 64 KiB of the new one, "cannot write FILE" without a
# reason.)
set -euo pipefail
bin=$1
work=$2
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/full_tmpfs.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work"
trap unmount_small_tmpfs EXIT
fail() { echo "cg_full_disk: FAIL: $*" >&2; exit 1; }
mount_small_tmpfs full

# refused_on_full_disk NAME OPTION RUN...: with FILE = full/NAME holding old bytes and the disk
# filled to 8 KiB free, RUN... (which writes FILE through OPTION) fails naming OPTION, FILE and
# ENOSPC; FILE keeps its bytes; no temporary file.
refused_on_full_disk() {
  local name=$1 option=$2 status=0
  shift 2
  head -c 4000 /dev/urandom >"full/$name"
  cp "full/$name" "$name.old"
  fill_tmpfs_leaving 8192
  "$@" >run.log 2>run.err || status=$?
  [ "$status" = 1 ] || { cat run.err; fail "$option on a full disk: exit status $status, not 1"; }
  grep -qF -- "$option" run.err || { cat run.err; fail "$option: the message does not name it"; }
  grep -qF "full/$name" run.err || { cat run.err; fail "$option: the message does not name the file"; }
  grep -qF "No space left on device" run.err || { cat run.err; fail "$option: ENOSPC not named"; }
  cmp -s "full/$name" "$name.old" || fail "$option: the old full/$name was not kept whole"
  no_temporary_in_tmpfs
  empty_tmpfs
  echo "cg_full_disk: $option on a full disk: status 1, '$(tail -n 1 run.err)', old file kept"
}

# 600 iterations of history (about 12 KiB), 8 KiB free.
run=("$bin" --n 16 --tol 0 --every 0)
refused_on_full_disk hist --history "${run[@]}" --max-iters 600 --history full/hist
# x of a 32^3 grid: 256 KiB, more than the whole file system.
refused_on_full_disk x --x-out "${run[@]}" --n 32 --max-iters 5 --x-out full/x
# A checkpoint (the ndzip frames of 32^3 grids: about 600 KiB).
refused_on_full_disk ckpt "checkpoint not written" \
  "$bin" --n 32 --max-iters 5 --every 5 --checkpoint full/ckpt

# With room, the files are replaced whole.
rm full/ckpt
"${run[@]}" --max-iters 600 --history full/hist --x-out full/x >run.log
[ "$(wc -l <full/hist)" = 600 ] || fail "the history holds $(wc -l <full/hist) lines, not 600"
[ "$(stat -c %s full/x)" = $((16 * 16 * 16 * 8)) ] || fail "x holds $(stat -c %s full/x) bytes"
no_temporary_in_tmpfs
echo "cg_full_disk: with room, --history and --x-out replaced whole"
echo "cg_full_disk: OK"
