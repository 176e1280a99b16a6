#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The host teams' steps are compiled into each instruction-set clone (backends/host/isa.hpp):
# every step a clone calls must be inlined into it, or the clone calls code built for the
# baseline, without the AVX2/AVX-512 paths (a decoder step left out of line once made one-core
# decompression 2.5x slower). So a Release library exports no function of ndzip::core that is
# instantiated for the host lane-ops, beyond the members of the codec classes that launch the
# kernels. Run by CTest (host_steps_inlined) on the library: prints what it finds, exits 1.
#   scripts/check-host-inlining.sh LIBRARY
set -euo pipefail
library=${1:?usage: check-host-inlining.sh LIBRARY}
command -v nm >/dev/null || { echo "check-host-inlining: nm (binutils) is missing" >&2; exit 2; }
# Demangled function symbols naming the host lane-ops; strip a leading return type, keep those
# that are free functions of ndzip::core (not members of codec or batch_codec).
found=$(nm -C --defined-only "$library" | awk '$2 ~ /^[tTwW]$/' | cut -d' ' -f3- |
  grep 'ndzip::backend::host_lane_ops' |
  sed -E 's/^([a-z_:]+ )?//' |
  grep -E '^ndzip::core::' | grep -Ev '^ndzip::core::(batch_)?codec<' || true)
if [ -n "$found" ]; then
  echo "check-host-inlining: host team steps left out of line in $library:"
  echo "$found" | sed -E 's/<.*//' | sort | uniq -c
  exit 1
fi
echo "check-host-inlining: every host team step is inlined into its clones"
