#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""h5repack converts files between filters through the plugin: files written by h5py with
hdf5plugin's zfp (reversible, so lossless) and Blosc (zstd) filters become ndzip files
(`-f UD=<id>,0,0`: no cd_values needed, set_local records the chunk), and those become files
without a filter, with gzip or with Blosc (lz4) again; the unfiltered ones become checksummed
ndzip files again, then bare-stream ones (`UD=<id>,0,1,0`: checksum off), then checksummed ones
(`UD=<id>,0,1,1`). Every dataset is bit-exact at each step, and carries exactly the filter and
chunk layout asked for.

    HDF5_PLUGIN_PATH=build/hdf5-plugin:<HDF5's default plugin folder> \\
        python3 test_h5repack.py --filter-id 310 --h5repack h5repack
"""
import os
import subprocess
import tempfile

import h5py
import hdf5plugin
import numpy as np

from plugin_test_support import (check_bit_exact, expected_cd_values, parse_args, pipeline,
                                 require_filter, run, smooth)

DATASETS = {  # name -> (dtype, shape, chunks)
    "float_3d": (np.float32, (40, 50, 60), (16, 32, 32)),
    "double_2d": (np.float64, (150, 200), (64, 96)),
    "float_1d": (np.float32, (30000,), (8192,)),
}
DEFLATE_ID = 1
SOURCES = {  # file -> (h5py filter options, its filter id)
    "zfp": (hdf5plugin.Zfp(reversible=True), hdf5plugin.ZFP_ID),
    "blosc": (hdf5plugin.Blosc(cname="zstd", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE),
              hdf5plugin.BLOSC_ID),
}
# Blosc's own cd_values [0-3] are set by its set_local; then level 5, byte shuffle, lz4 (1).
BLOSC_LZ4 = f"UD={hdf5plugin.BLOSC_ID},0,7,0,0,0,0,5,1,1"


def arrays(rng):
    return {name: smooth(dtype, shape) + rng.normal(scale=0.01, size=shape).astype(dtype)
            for name, (dtype, shape, _) in DATASETS.items()}


def h5repack(tool, filter_option, source, target):
    result = subprocess.run([tool, "-f", filter_option, source, target], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, f"h5repack -f {filter_option}: {result.stdout}{result.stderr}"


def check_file(path, values, filter_id, cd_values_of):
    """Every dataset bit-exact, with `filter_id` as its only filter (None: no filter) and the
    cd_values cd_values_of(name) (None: not checked)."""
    with h5py.File(path, "r") as f:
        for name, array in values.items():
            got = pipeline(f[name])
            ids = [fid for fid, _ in got]
            assert ids == ([] if filter_id is None else [filter_id]), f"{path}:{name}: {got}"
            if cd_values_of and filter_id is not None:
                assert got[0][1] == cd_values_of(name), f"{path}:{name}: cd_values {got[0][1]}"
            check_bit_exact(array, f[name][...], f"{os.path.basename(path)}:{name}")


def main():
    args = parse_args(__doc__, tools=("h5repack",))
    require_filter(args.filter_id)
    for fid in (hdf5plugin.ZFP_ID, hdf5plugin.BLOSC_ID):
        assert h5py.h5z.filter_avail(fid), (
            f"HDF5 has no filter {fid}: HDF5_PLUGIN_PATH must also hold the folder of the zfp "
            "and Blosc plugins (Debian: hdf5-filter-plugin-zfp-serial, "
            "hdf5-filter-plugin-blosc-serial)")
    values = arrays(np.random.default_rng(11))

    def ndzip_cd_values(name):
        dtype, _, chunks = DATASETS[name]
        return expected_cd_values(dtype, chunks)

    steps = 0
    with tempfile.TemporaryDirectory() as tmp:
        for source_name, (options, source_id) in SOURCES.items():
            source = os.path.join(tmp, f"{source_name}.h5")
            with h5py.File(source, "w") as f:
                for name, array in values.items():
                    f.create_dataset(name, data=array, chunks=DATASETS[name][2], **options)
            check_file(source, values, source_id, None)

            ndzip = os.path.join(tmp, f"{source_name}_to_ndzip.h5")
            h5repack(args.h5repack, f"UD={args.filter_id},0,0", source, ndzip)
            check_file(ndzip, values, args.filter_id, ndzip_cd_values)
            steps += 1

            for target_name, option, target_id in [("none", "NONE", None),
                                                   ("gzip", "GZIP=6", DEFLATE_ID),
                                                   ("blosc_lz4", BLOSC_LZ4, hdf5plugin.BLOSC_ID)]:
                target = os.path.join(tmp, f"{source_name}_to_ndzip_to_{target_name}.h5")
                h5repack(args.h5repack, option, ndzip, target)
                check_file(target, values, target_id, None)
                steps += 1

            # Checksummed chunks to unfiltered ones and back; to bare streams (checksum=0) and
            # back. Each step bit-exact, with the layout asked for.
            unfiltered = os.path.join(tmp, f"{source_name}_to_ndzip_to_none.h5")
            back = os.path.join(tmp, f"{source_name}_back_to_ndzip.h5")
            h5repack(args.h5repack, f"UD={args.filter_id},0,0", unfiltered, back)
            check_file(back, values, args.filter_id, ndzip_cd_values)
            bare = os.path.join(tmp, f"{source_name}_to_bare_ndzip.h5")
            h5repack(args.h5repack, f"UD={args.filter_id},0,1,0", back, bare)
            check_file(bare, values, args.filter_id, lambda name: expected_cd_values(
                DATASETS[name][0], DATASETS[name][2], checksum=False))
            checksummed_again = os.path.join(tmp, f"{source_name}_to_checksummed_again.h5")
            h5repack(args.h5repack, f"UD={args.filter_id},0,1,1", bare, checksummed_again)
            check_file(checksummed_again, values, args.filter_id, ndzip_cd_values)
            steps += 3
    print(f"h5repack: zfp (reversible) and Blosc-zstd files to ndzip, and on to no filter, gzip "
          f"and Blosc-lz4; unfiltered back to ndzip, to bare streams and to checksummed chunks "
          f"again: {steps} conversions of {len(values)} datasets, all bit-exact")


if __name__ == "__main__":
    run(main)
