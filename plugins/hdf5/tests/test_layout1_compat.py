#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Files written by the 0.1.0 filter (chunk layout 1: bare ndzip streams, no checksum) still
read bit-exact, and h5dump -pH shows their layout (PARAMS { 1 ... }). Rewriting a chunk of such
a dataset keeps its layout; h5repack keeps it too unless the filter is given anew, which gives
the checksummed layout 3. data/layout1-v0.1.0.h5 was written by the 0.1.0 filter
(data/make_layout1_file.py).

    HDF5_PLUGIN_PATH=build/hdf5-plugin python3 test_layout1_compat.py --filter-id 310 \\
        --h5dump h5dump --h5repack h5repack
"""
import hashlib
import os
import re
import shutil
import subprocess
import tempfile

import h5py
import numpy as np

from plugin_test_support import (CHECKSUM_BYTES, expected_cd_values, parse_args, pipeline,
                                 require_filter, run)

FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "layout1-v0.1.0.h5")
LAYOUT_1 = {  # name -> (dtype, chunks, cd_values written by 0.1.0)
    "float3d": (np.float32, (18, 17, 16), (1, 1, 3, 18, 17, 16)),
    "float2d": (np.float32, (66, 70), (1, 1, 2, 66, 70)),
    "double1d": (np.float64, (4200,), (1, 2, 1, 4200)),
}


def check_values(path, filter_id, cd_values_of):
    """Every dataset's values hash to the SHA-256 0.1.0 wrote beside them."""
    with h5py.File(path, "r") as f:
        for name, (dtype, chunks, _) in LAYOUT_1.items():
            dset = f[name]
            assert pipeline(dset) == [(filter_id, cd_values_of(name))], (
                f"{path}:{name}: {pipeline(dset)}")
            values = dset[...]
            assert values.dtype == dtype and values.shape == chunks, f"{name}: {values.shape}"
            digest = hashlib.sha256(values.tobytes()).hexdigest()
            assert digest == dset.attrs["sha256"], f"{path}:{name}: values differ from 0.1.0's"


def tool(*command):
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{' '.join(command)}: {result.stdout}{result.stderr}"
    return result.stdout


def main():
    args = parse_args(__doc__, tools=("h5dump", "h5repack"))
    require_filter(args.filter_id)
    layout_1 = lambda name: LAYOUT_1[name][2]  # noqa: E731
    check_values(FILE, args.filter_id, layout_1)

    shown = tool(args.h5dump, "-pH", FILE)
    for name, (_, _, cd_values) in LAYOUT_1.items():
        block = re.search(rf'DATASET "{name}" {{.*?PARAMS {{([\d ]*)}}', shown, re.S)
        assert block and tuple(map(int, block.group(1).split())) == cd_values, (
            f"h5dump -pH of {name}:\n{shown}")

    with tempfile.TemporaryDirectory() as tmp:
        # A chunk rewritten by this filter keeps the dataset's layout 1 (a bare stream): the
        # stream of a new dataset's chunk, without its checksum.
        copy = os.path.join(tmp, "rewritten.h5")
        shutil.copyfile(FILE, copy)
        with h5py.File(copy, "r+") as f:
            dset = f["float2d"]
            values = dset[...]
            values[10:20, 30:40] = -2.5
            dset[...] = values
            new = f.create_dataset("new", data=values, chunks=values.shape,
                                   compression=args.filter_id, compression_opts=(0,))
            stored = dset.id.read_direct_chunk((0, 0))[1]
            assert stored == new.id.read_direct_chunk((0, 0))[1][CHECKSUM_BYTES:], (
                "a rewritten layout-1 chunk is not the bare stream of its values")
        with h5py.File(copy, "r") as f:
            np.testing.assert_array_equal(f["float2d"][...].view(np.uint32),
                                          values.view(np.uint32))
            assert pipeline(f["float2d"]) == [(args.filter_id, LAYOUT_1["float2d"][2])]

        kept = os.path.join(tmp, "repacked.h5")
        tool(args.h5repack, FILE, kept)
        check_values(kept, args.filter_id, layout_1)

        upgraded = os.path.join(tmp, "upgraded.h5")
        tool(args.h5repack, "-f", f"UD={args.filter_id},0,0", FILE, upgraded)
        check_values(upgraded, args.filter_id,
                     lambda name: expected_cd_values(LAYOUT_1[name][0], LAYOUT_1[name][1]))
    print(f"layout 1 (0.1.0): {len(LAYOUT_1)} datasets read bit-exact and shown by h5dump -pH; "
          "a rewritten chunk keeps layout 1; h5repack keeps it, or gives layout 3 with -f")


if __name__ == "__main__":
    run(main)
