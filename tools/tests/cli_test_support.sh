# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# What the tool's test scripts share (sourced, not run): named checks and how they fail, the
# tool run with its output captured, and byte-level edits of files. The sourcing script sets
# `ndzip` to the binary first (start_in_work_dir does); it may redefine run_ndzip (to bound a run's time and memory, say)
# and set stdin_file.

# start_in_work_dir NAME ARGS...: the script's usage (one argument, the binary), `ndzip` set to
# it, and the working directory a fresh temporary one, removed at exit.
start_in_work_dir() {
  local name=$1
  shift
  if [ $# -ne 1 ]; then
    echo "usage: $0 NDZIP_BINARY" >&2
    exit 2
  fi
  ndzip=$(realpath "$1")
  work=$(mktemp -d "${TMPDIR:-/tmp}/ndzip-$name.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  cd "$work"
}

check() { echo "check: $*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# run_ndzip ARGS...: the tool.
run_ndzip() { "$ndzip" "$@"; }
# expect STATUS ARGS...: runs ndzip ARGS (stdin from $stdin_file, else /dev/null) with stdout in
# out.txt and stderr in err.txt, and fails unless it exits with STATUS.
stdin_file=/dev/null
expect() {
  local want=$1 status=0
  shift
  run_ndzip "$@" <"$stdin_file" >out.txt 2>err.txt || status=$?
  [ "$status" = "$want" ] ||
    fail "'ndzip $*' exited with status $status, expected $want; stderr: $(cat err.txt)"
}
# expect_error STATUS MESSAGE ARGS...: as expect, and stderr must hold "ndzip: error:" and MESSAGE.
expect_error() {
  local want=$1 message=$2
  shift 2
  expect "$want" "$@"
  grep -qF "ndzip: error:" err.txt || fail "'ndzip $*': no 'ndzip: error:' line: $(cat err.txt)"
  grep -qF -- "$message" err.txt || fail "'ndzip $*': stderr lacks '$message': $(cat err.txt)"
}
stderr_has() { grep -qF -- "$1" err.txt || fail "stderr lacks '$1': $(cat err.txt)"; }
stdout_has() { grep -qF -- "$1" out.txt || fail "stdout lacks '$1': $(cat out.txt)"; }
stderr_empty() { [ ! -s err.txt ] || fail "unexpected stderr: $(cat err.txt)"; }
same() { cmp "$1" "$2" || fail "$1 and $2 differ"; }

# u8 FILE OFFSET / u64 FILE OFFSET: the byte / little-endian uint64 at OFFSET.
u8() { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }
u64() { od --endian=little -An -tu8 -j "$2" -N8 "$1" | tr -d ' '; }
# poke FILE OFFSET BYTE...: overwrites bytes (decimal values) in place.
poke() {
  local file=$1 offset=$2 b
  shift 2
  for b in "$@"; do
    printf %b "\\0$(printf %03o "$b")" | dd of="$file" bs=1 seek="$offset" conv=notrunc status=none
    offset=$((offset + 1))
  done
}
flip() { poke "$1" "$2" $(($(u8 "$1" "$2") ^ 1)); }
# reseal FILE: rewrites the checksum of a frame whose header was edited, as a writer with a bug
# or a forger would (xxhsum from Debian's xxhash package prints XXH3-64 most significant byte
# first).
reseal() {
  local hex i bytes=()
  hex=$({ head -c 40 "$1"; tail -c +49 "$1"; } | xxhsum -H3 | sed -E 's/.*= ([0-9a-f]{16})$/\1/')
  [[ $hex =~ ^[0-9a-f]{16}$ ]] || fail "xxhsum printed '$hex'"
  for i in 7 6 5 4 3 2 1 0; do bytes+=($((16#${hex:$((2 * i)):2}))); done
  poke "$1" 40 "${bytes[@]}"
}
