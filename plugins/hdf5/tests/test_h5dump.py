#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""h5dump, a C application that loads the plugin through HDF5_PLUGIN_PATH: `h5dump -pH` shows
the filter of each dataset (its id, its name as the COMMENT, the cd_values set_local stored:
the chunk layout and whether chunks are checksummed),
and `h5dump -d` decompresses the data, printing the values h5py wrote and nothing from Kokkos.

    HDF5_PLUGIN_PATH=build/hdf5-plugin python3 test_h5dump.py --filter-id 310 --h5dump h5dump
"""
import os
import re
import subprocess
import tempfile

import h5py
import numpy as np

from plugin_test_support import expected_cd_values, parse_args, require_filter, run

DATASETS = {  # name -> (dtype, shape, chunks, checksummed chunks)
    "float_3d": (np.float32, (20, 30, 40), (16, 16, 32), True),
    "double_1d": (np.float64, (10000,), (4096,), True),
    "double_1d_bare": (np.float64, (10000,), (4096,), False),
}


def h5dump(tool, *args):
    result = subprocess.run([tool, *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"h5dump {' '.join(args)}: {result.stdout}{result.stderr}"
    return result.stdout


def check_properties(tool, path, filter_id):
    out = h5dump(tool, "-pH", path)
    for name, (dtype, shape, chunks, checksum) in DATASETS.items():
        block = re.search(rf'DATASET "{name}" {{(.*?)\n      }}\n   }}', out, re.S)
        assert block, f"h5dump -pH shows no dataset {name}:\n{out}"
        filters = re.search(r"USER_DEFINED_FILTER {\s*FILTER_ID (\d+)\s*COMMENT (.*?)\n\s*"
                            r"PARAMS {([\d ]*)}", block.group(1))
        assert filters, f"{name}: no user-defined filter in h5dump -pH:\n{block.group(1)}"
        assert int(filters.group(1)) == filter_id, filters.group(0)
        assert filters.group(2).startswith("ndzip"), f"{name}: filter named {filters.group(2)!r}"
        params = tuple(int(v) for v in filters.group(3).split())
        # The chunk layout is the first value, its flags (1: checksummed) the second.
        assert params == expected_cd_values(dtype, chunks, checksum), f"{name}: PARAMS {params}"


def check_values(tool, path, values):
    """Values printed with 9 / 17 significant digits read back as exactly h5py's numbers."""
    for name, array in values.items():
        fmt = "%.9g" if array.dtype == np.float32 else "%.17g"
        out = h5dump(tool, "-d", f"/{name}", "-m", fmt, "-y", "-w", "0", path)
        assert "Kokkos" not in out, f"h5dump output holds Kokkos messages:\n{out[:2000]}"
        data = re.search(r"DATA {(.*?)}", out, re.S)
        assert data, f"h5dump -d /{name} printed no data:\n{out[:2000]}"
        printed = np.array(data.group(1).replace(",", " ").split(), dtype=array.dtype)
        np.testing.assert_array_equal(printed, array.ravel(), f"h5dump -d /{name}")


def main():
    args = parse_args(__doc__, tools=("h5dump",))
    require_filter(args.filter_id)
    rng = np.random.default_rng(3)
    values = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "dump.h5")
        with h5py.File(path, "w") as f:
            for name, (dtype, shape, chunks, checksum) in DATASETS.items():
                values[name] = np.cumsum(rng.normal(size=shape), axis=-1).astype(dtype)
                f.create_dataset(name, data=values[name], chunks=chunks,
                                 compression=args.filter_id, compression_opts=(int(checksum),))
        check_properties(args.h5dump, path, args.filter_id)
        check_values(args.h5dump, path, values)
    print(f"h5dump: filter {args.filter_id} with its name and cd_values shown for "
          f"{len(DATASETS)} datasets; their values printed exactly")


if __name__ == "__main__":
    run(main)
