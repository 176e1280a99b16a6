#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Checks that the ndzip tool keeps an existing OUT whole when a full disk stops the file meant to
# replace it (a 64 KiB tmpfs; root only, else skipped with status 77, saying why): compress and
# decompress --force onto OUT and a new OUT beside it, each failing part way with status 1 and
# "No space left on device", OUT byte for byte as it was, no temporary file left; with room, OUT
# replaced. The tool writes through examples/cg_checkpoint/durable_file.hpp, as the example
# and ndzip-bench do (their full-disk tests: example-cg-full-disk, bench-full-disk).
# Usage: cli_full_disk.sh NDZIP_BINARY.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_support.sh"
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../../examples/cg_checkpoint/tests/full_tmpfs.sh"

if [ $# -ne 1 ]; then
  echo "usage: $0 NDZIP_BINARY" >&2
  exit 2
fi
ndzip=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d "${TMPDIR:-/tmp}/ndzip-cli-full-disk.XXXXXX")
cleanup() {
  unmount_small_tmpfs
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
mount_small_tmpfs full

# 96 KiB of random floats (incompressible: the frame is larger than the whole file system).
head -c 98304 /dev/urandom >values.f32
expect 0 compress -t float values.f32 values.nz
for operation in "compress -t float values.f32" "decompress values.nz"; do
  check "$operation onto an existing OUT on a full disk: OUT kept whole, ENOSPC named"
  head -c 4000 /dev/urandom >full/out
  cp full/out out.old
  fill_tmpfs_leaving 8192
  # shellcheck disable=SC2086  # the operation's words apart
  expect 1 $operation --force full/out
  stderr_has "No space left on device"
  stderr_has "full/out"
  same full/out out.old
  no_temporary_in_tmpfs
  check "$operation to a new OUT on a full disk: nothing left"
  # shellcheck disable=SC2086
  expect 1 $operation full/new
  stderr_has "No space left on device"
  [ ! -e full/new ] || fail "full/new exists after a failed run"
  no_temporary_in_tmpfs
  empty_tmpfs
done
check "with room, --force replaces OUT"
head -c 4000 values.f32 >small.f32
expect 0 compress -t float --force small.f32 full/out
expect 0 decompress -c full/out
cmp out.txt small.f32 || fail "full/out does not decompress to what was compressed"
no_temporary_in_tmpfs
echo "PASS: cli_full_disk"
