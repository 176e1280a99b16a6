#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# On a GPU machine: unpacks the archive of scripts/build-python-gpu.sh and runs the Python tests
# with its interpreter (CuPy and PyTorch where it has them: test_device.py), then, given a
# manifest, the GPU table of ndzip.bench (Python's Compressor against the C++ API, device-resident).
#
#   scripts/test-python-gpu.sh ARCHIVE.tar.xz [--bench MANIFEST] [--csv FILE] [--python PYTHON]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
archive="$1"; shift
manifest="" csv="" python=python3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bench) manifest="$2"; shift 2 ;;
    --csv) csv="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    *) echo "test-python-gpu: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
tar -xJf "$archive" -C "$site"
# The package's libraries (libndzip, Kokkos, a carried CUDA runtime) beside the extension.
export PYTHONPATH="$site" LD_LIBRARY_PATH="$site/ndzip${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_PROC_BIND=false OMP_WAIT_POLICY=passive
"$python" -c "import ndzip; print('ndzip', ndzip.__version__, 'backends', ndzip.backends())"
# From the checkout's tests folder, against the unpacked package (not the sources).
(cd "$root/python/tests" &&
  "$python" -m pytest -q -p no:cacheprovider test_module.py test_protocols.py \
    test_hostile_intake.py test_device.py)
if [[ -n "$manifest" ]]; then
  "$python" -m ndzip.bench "$manifest" --device cuda ${csv:+--csv "$csv"}
fi
