#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Damaged chunks must fail the read with an HDF5 error (h5py's OSError), never crash the
reader or return data silently. Each damage is applied to the first chunk of a float (2-D) and
a double (1-D) dataset, in the checksummed layout (the default), with the stream not
checksummed (checksum=0: behind the checksum of the parameters alone, so the decoder's own
checks must catch damage in the stream) and in the bare streams of layout 2 without the
checksum (no head at all), either in the file's bytes where h5py's get_chunk_info finds the
chunk or with write_direct_chunk where the size changes, and a fresh reader process reads the
dataset.

Streams that are not checksummed: damage inside the encoded values that keeps the stream's
structure consistent decodes to other values there. The checksum catches it, as the last case
shows (test_checksummed_chunks.py flips every region's bits).

    HDF5_PLUGIN_PATH=build/hdf5-plugin python3 test_damaged_chunks.py --filter-id 310
"""
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

from plugin_test_support import CHECKSUM_BYTES, parse_args, require_filter, run, smooth

# Exit status of the reader when h5py raised OSError, as an HDF5 error is raised.
READ_FAILED_CLEANLY = 3
READER = """
import sys, h5py
try:
    with h5py.File(sys.argv[1], "r") as f:
        f[sys.argv[2]][...]
except OSError as e:
    print(e)
    sys.exit(3)
"""

# The filter's values for a layout-2 dataset without the checksum: a copied dataset's
# parameters, whose layout and flags the filter keeps (its type and extents are the dataset's).
LAYOUT_2_BARE = (2, 0, 1, 1, 1)

# name -> (dtype, shape, chunks, bytes of the offset table: 4 per hypercube, padded to a word,
#          the filter's values, bytes in front of the stream: its checksum or none)
DATASETS = {
    "field": (np.float32, (128, 128), (64, 64), 4, (1,), CHECKSUM_BYTES),
    "series": (np.float64, (16384,), (8192,), 8, (1,), CHECKSUM_BYTES),
    "unchecksummed_field": (np.float32, (128, 128), (64, 64), 4, (0,), CHECKSUM_BYTES),
    "unchecksummed_series": (np.float64, (16384,), (8192,), 8, (0,), CHECKSUM_BYTES),
    "bare_field": (np.float32, (128, 128), (64, 64), 4, LAYOUT_2_BARE, 0),
    "bare_series": (np.float64, (16384,), (8192,), 8, LAYOUT_2_BARE, 0),
}


def damages(rng):
    """name -> (function of (chunk bytes, stream start, offset-table bytes) -> damaged bytes,
    same size?)"""
    def set_bits(data, index, mask):
        out = bytearray(data)
        out[index] |= mask
        return bytes(out)

    def flip_bits(data, index, mask):
        out = bytearray(data)
        out[index] ^= mask
        return bytes(out)

    return {
        # The first block ends far beyond the stream.
        "offset table entry": (lambda d, start, table: set_bits(d, start + 3, 0x80), True),
        # One bit of the first chunk head: the heads no longer match the block's length.
        "chunk head": (lambda d, start, table: flip_bits(d, start + table, 0x01), True),
        "all zero": (lambda d, start, table: bytes(len(d)), True),
        "random bytes": (lambda d, start, table: rng.bytes(len(d)), True),
        "truncated": (lambda d, start, table: d[: len(d) // 2], False),
        "trailing bytes": (lambda d, start, table: d + bytes(8), False),
        # The checksum of a layout-3 chunk; the start of the offset table of a bare one.
        "first 8 bytes zeroed": (lambda d, start, table: bytes(8) + d[8:], True),
    }


def read_in_fresh_process(path, name):
    return subprocess.run([sys.executable, "-c", READER, path, name], capture_output=True,
                          text=True, timeout=60)


def damage_first_chunk(path, name, damage, start, table_bytes, same_size):
    with h5py.File(path, "r+") as f:
        dset = f[name]
        info = dset.id.get_chunk_info(0)
        _, data = dset.id.read_direct_chunk(info.chunk_offset)
        damaged = damage(data, start, table_bytes)
        if not same_size:
            dset.id.write_direct_chunk(info.chunk_offset, damaged)
            return
    assert len(damaged) == len(data)
    with open(path, "r+b") as raw:  # the chunk's bytes, where HDF5 stored them
        raw.seek(info.byte_offset)
        raw.write(damaged)


def check_read_fails(path, name, what):
    result = read_in_fresh_process(path, name)
    output = result.stdout + result.stderr
    assert result.returncode == READ_FAILED_CLEANLY, (
        f"{what}: reader exit status {result.returncode}, expected an HDF5 error "
        f"(OSError); output:\n{output}")
    return output.strip().splitlines()[0]


def main():
    args = parse_args(__doc__)
    require_filter(args.filter_id)
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        pristine = os.path.join(tmp, "pristine.h5")
        with h5py.File(pristine, "w") as f:
            for name, (dtype, shape, chunks, _, options, _) in DATASETS.items():
                f.create_dataset(name, data=smooth(dtype, shape), chunks=chunks,
                                 compression=args.filter_id, compression_opts=options)
        for name in DATASETS:
            result = read_in_fresh_process(pristine, name)
            assert result.returncode == 0, f"undamaged {name}: {result.stdout}{result.stderr}"

        cases = 0
        for damage_name, (damage, same_size) in damages(rng).items():
            for name, (dtype, shape, chunks, table_bytes, _, start) in DATASETS.items():
                path = os.path.join(tmp, "damaged.h5")
                shutil.copyfile(pristine, path)
                damage_first_chunk(path, name, damage, start, table_bytes, same_size)
                what = f"{name}, {damage_name}"
                message = check_read_fails(path, name, what)
                print(f"{what}: {message}")
                # The other chunks still read.
                with h5py.File(path, "r") as f:
                    last = tuple(slice(n - 1, n) for n in shape)
                    np.testing.assert_array_equal(f[name][last], smooth(dtype, shape)[last])
                cases += 1

        # Inside the encoded values only the checksum sees the damage.
        path = os.path.join(tmp, "damaged.h5")
        shutil.copyfile(pristine, path)
        damage_first_chunk(path, "field", lambda d, start, table: d[:600] + bytes([d[600] ^ 0x10])
                           + d[601:], CHECKSUM_BYTES, 0, True)
        print(f"field, value bits: {check_read_fails(path, 'field', 'value bits')}")
    print(f"damaged chunks: {cases + 1} cases, each an HDF5 error in the reader")


if __name__ == "__main__":
    run(main)
