#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A dataset's filter parameters (cd_values) edited in the file must not make its chunks read as
other values. The chunks of a float 64x128 dataset are described as those of another chunk of
as many bytes: 128x64 (the extents swapped), 32x256, and double 64x64. The parameters are
patched where HDF5 keeps them, in the dataset's filter pipeline message (found in the file as
the sequence of its cd_values, 32-bit little-endian words; h5py cannot rewrite a pipeline), and
a fresh process reads the dataset with h5py, and with h5dump where it is given.

Datasets created now (layout 3, whatever the filter's options): every chunk's checksum covers
the parameters, so every edit fails the read with the filter's "checksum mismatch", whether the
stream is checksummed or not, in both modes. Layouts 1 and 2 (files written before; made here
with a copied dataset's parameters) have no checksum over the parameters: an edit that changes
the stream's structure is refused by the stream's checks, one that keeps it reads as other
values, as docs/FORMAT.md ("HDF5 chunks") says: in the ndzip stream 128x64, which has the
hypercubes and the border of 64x128; in the high-ratio stream also 32x256, whose 8192 border
elements are coded as two hypercubes, as many blocks as 64x128's.

    HDF5_PLUGIN_PATH=build/hdf5-plugin python3 test_edited_parameters.py --filter-id 310 \\
        [--h5dump h5dump]
"""
import hashlib
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import h5py
import numpy as np

from plugin_test_support import parse_args, require_filter, run, smooth

SHAPE = (64, 128)
FLOAT, DOUBLE = 1, 2  # cd_values' element type codes

# name -> (the filter's values when the dataset is created, the edits its chunks cannot show).
# 4 values or more are a copied dataset's parameters, which give their layout and flags.
NEW_DATASETS = {
    "default": ((), set()),
    "stream_not_checksummed": ((0,), set()),
    "high_ratio": ((1, 1), set()),
}
OLD_LAYOUTS = {
    "layout2": ((2, 1, FLOAT, 1, 1), {"128x64"}),
    "layout2_bare": ((2, 0, FLOAT, 1, 1), {"128x64"}),
    "layout2_high_ratio": ((2, 3, FLOAT, 1, 1), {"128x64", "32x256"}),
    "layout1": ((1, FLOAT, 1, 1), {"128x64"}),
}

# name -> (element type code, extents) in place of float 64x128: as many bytes each.
EDITS = {
    "128x64": (FLOAT, (128, 64)),
    "32x256": (FLOAT, (32, 256)),
    "double 64x64": (DOUBLE, (64, 64)),
}

READ_FAILED_CLEANLY = 3
READER = """
import hashlib, sys, h5py
try:
    with h5py.File(sys.argv[1], "r") as f:
        values = f["d"][...]
except OSError as e:
    print(e)
    sys.exit(3)
print(hashlib.sha256(values.tobytes()).hexdigest())
"""


def edited(cd_values, element_type, extents):
    """cd_values with the element type and extents replaced (the same count: the same rank)."""
    first = 1 if cd_values[0] == 1 else 2  # after the flags in layouts 2 and 3
    return (*cd_values[:first], element_type, len(extents), *extents)


def patch_cd_values(path, stored, replacement):
    """Replaces the one occurrence of the cd_values `stored` in the file by `replacement`."""
    old = struct.pack(f"<{len(stored)}I", *stored)
    new = struct.pack(f"<{len(replacement)}I", *replacement)
    with open(path, "rb") as f:
        data = f.read()
    at = data.find(old)
    assert at >= 0 and data.find(old, at + 1) < 0, (
        f"{path}: the cd_values {stored} occur {data.count(old)} times, expected once")
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(new)


def read_in_fresh_process(path):
    return subprocess.run([sys.executable, "-c", READER, path], capture_output=True, text=True,
                          timeout=60)


def check_h5dump_refuses(h5dump, path, what):
    result = subprocess.run([h5dump, "--enable-error-stack", "-d", "/d", path],
                            capture_output=True, text=True, timeout=60)
    output = result.stdout + result.stderr
    assert result.returncode != 0, f"{what}: h5dump read the dataset:\n{output[:2000]}"
    for part in ("ndzip HDF5 filter", "checksum mismatch", "filter parameters"):
        assert part in output, f"{what}: h5dump does not say {part!r}:\n{output[:4000]}"


def main():
    args = parse_args(__doc__, optional_tools=("h5dump",))
    require_filter(args.filter_id)
    values = smooth(np.float32, SHAPE, phase=0.3)
    digest = hashlib.sha256(values.tobytes()).hexdigest()
    refused = silent = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, (options, undetectable) in {**NEW_DATASETS, **OLD_LAYOUTS}.items():
            pristine = os.path.join(tmp, f"{name}.h5")
            with h5py.File(pristine, "w") as f:
                dset = f.create_dataset("d", data=values, chunks=SHAPE,
                                        compression=args.filter_id,
                                        compression_opts=options or None)
                cd_values = dset.id.get_create_plist().get_filter(0)[2]
            result = read_in_fresh_process(pristine)
            assert result.returncode == 0 and result.stdout.strip() == digest, (
                f"{name}, unedited: {result.stdout}{result.stderr}")
            for edit, (element_type, extents) in EDITS.items():
                what = f"{name} {cd_values} edited to {edit}"
                path = os.path.join(tmp, "edited.h5")
                shutil.copyfile(pristine, path)
                patch_cd_values(path, cd_values, edited(cd_values, element_type, extents))
                result = read_in_fresh_process(path)
                output = (result.stdout + result.stderr).strip()
                if edit in undetectable:
                    assert result.returncode == 0 and output != digest, (
                        f"{what}: expected other values (the stream cannot show the edit), "
                        f"got exit status {result.returncode}: {output}")
                    print(f"{what}: other values, as documented (no checksum over them)")
                    silent += 1
                    continue
                assert result.returncode == READ_FAILED_CLEANLY, (
                    f"{what}: reader exit status {result.returncode}, expected an HDF5 error "
                    f"(OSError); output:\n{output}")
                message = output.splitlines()[0]
                assert "ndzip" in message, f"{what}: {message}"
                if name in NEW_DATASETS:
                    assert "checksum mismatch" in message, f"{what}: {message}"
                    if args.h5dump:
                        check_h5dump_refuses(args.h5dump, path, what)
                print(f"{what}: {message}")
                refused += 1
    print(f"edited filter parameters: {refused} edits refused (every one of a new dataset), "
          f"{silent} read as other values in the older layouts, as documented")


if __name__ == "__main__":
    run(main)
