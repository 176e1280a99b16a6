#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Turns ndzip-bench CSV files into PNG figures with scripts/plot-bench.py, installing Debian's
# matplotlib (python3-matplotlib) for the system python first if it is missing.
#   scripts/make-plots.sh CSV [CSV...] --out DIR
# e.g. scripts/make-plots.sh cpu.csv gpu.csv sweep.csv --out plots
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if ! /usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1; then
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  echo "make-plots: installing python3-matplotlib"
  # Refresh the package lists only when the package cannot be installed from the current ones.
  if ! "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends python3-matplotlib >/dev/null; then
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends python3-matplotlib >/dev/null
  fi
  /usr/bin/python3 -c 'import matplotlib' ||
    { echo "make-plots: /usr/bin/python3 still cannot import matplotlib" >&2; exit 1; }
fi

exec /usr/bin/python3 "$root/scripts/plot-bench.py" "$@"
