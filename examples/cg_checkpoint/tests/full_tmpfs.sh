# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# A small file system to fill (sourced, not run), for the tests that writers on a full disk
# fail with ENOSPC named, keep the file they would have replaced whole, and leave no temporary
# file: the example's here, and the ndzip tool's and ndzip-bench's
# (tools/tests/cli_full_disk.sh, perf_tests/check_full_disk.sh), all of which write through
# durable_file.hpp. A test that cannot mount one exits with status 77, which its CTest
# registration counts as skipped, saying why; it never passes silently.

small_tmpfs=""
# mount_small_tmpfs DIR: a 64 KiB tmpfs mounted on DIR (created), unmounted by
# unmount_small_tmpfs, which the sourcing script's EXIT trap must call.
mount_small_tmpfs() {
  mkdir -p "$1"
  local why
  if [ "$(id -u)" != 0 ]; then
    why="not root"
  elif ! why=$(mount -t tmpfs -o size=64k,mode=0755 tmpfs "$1" 2>&1); then
    why="mount -t tmpfs failed: $why"
  else
    small_tmpfs=$1
    return 0
  fi
  echo "SKIPPED: the full-disk checks need a small tmpfs, and none can be mounted here ($why)"
  exit 77
}
unmount_small_tmpfs() {
  if [ -n "$small_tmpfs" ]; then
    umount "$small_tmpfs" || umount -l "$small_tmpfs" || true
    small_tmpfs=""
  fi
}
# fill_tmpfs_leaving BYTES: fills the small tmpfs (a file `filler` in it) until about BYTES
# (a multiple of 4096) are free, so that a write larger than that fails part way.
fill_tmpfs_leaving() {
  cat /dev/zero >"$small_tmpfs/filler" 2>/dev/null || true
  truncate -s "-$1" "$small_tmpfs/filler"
}
# empty_tmpfs: the filler removed again.
empty_tmpfs() { rm -f "$small_tmpfs/filler"; }
# no_temporary_in_tmpfs: nothing but the expected files, no FILE.tmp.* left behind.
no_temporary_in_tmpfs() {
  if compgen -G "$small_tmpfs/*.tmp.*" >/dev/null; then
    echo "FAIL: temporary file left behind: $(compgen -G "$small_tmpfs/*.tmp.*")" >&2
    exit 1
  fi
}
