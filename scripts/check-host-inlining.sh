#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The host teams' steps are compiled into each instruction-set clone (backends/host/isa.hpp):
# every step a clone calls must be inlined into it, or the clone calls code built for the
# baseline, without the AVX2/AVX-512 paths (a decoder step left out of line once made one-core
# decompression 2.5x slower). So no clone of a Release library calls a function of ndzip::core:
# its calls are read from the disassembly (what calls the clones, the kernels' functors and team
# functions, may stay out of line: it runs once per team, outside the clones). Run by CTest
# (host_steps_inlined) on the library: prints what it finds, exits 1.
#   scripts/check-host-inlining.sh LIBRARY
set -euo pipefail
library=${1:?usage: check-host-inlining.sh LIBRARY}
command -v objdump >/dev/null ||
  { echo "check-host-inlining: objdump (binutils) is missing" >&2; exit 2; }
# Function headers look like `0000000000145d80 <void ndzip::backend::run_avx2_clone<...>(...)>:`,
# calls like `call 145d80 <bool ndzip::core::unpack_hypercube<...>(...)>` (a leading return type
# in template names). Prints each clone's callees of ndzip::core, their template arguments cut.
calls=$(objdump -d -C --no-show-raw-insn "$library" | awk '
  /^[0-9a-f]+ <.*>:$/ { clone = ($0 ~ /<([a-z_]+ )?ndzip::backend::run_[a-z0-9_]+_clone</); next }
  clone && /\t(call|jmp)[a-z]*[ \t]+[0-9a-f]+ <([a-z_]+ )?ndzip::core::/ {
    name = $0; sub(/^[^<]*<([a-z_]+ )?/, "", name); sub(/[<(].*$/, "", name); print name
  }')
clones=$(objdump -t -C "$library" | grep -c 'ndzip::backend::run_[a-z0-9_]*_clone<' || true)
if [ "$clones" -eq 0 ]; then
  echo "check-host-inlining: no instruction-set clones in $library" \
    "(not an x86-64 GCC/Clang build?)" >&2
  exit 2
fi
if [ -n "$calls" ]; then
  echo "check-host-inlining: host team steps left out of line, called from the clones of $library:"
  echo "$calls" | sort | uniq -c
  exit 1
fi
echo "check-host-inlining: $clones clones, none calls a step of ndzip::core out of line"
