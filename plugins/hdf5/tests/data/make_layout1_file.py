#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""How layout1-v0.1.0.h5 was made: with the filter of ndzip-kokkos 0.1.0 (commit f62f943), whose
chunks are bare ndzip streams (cd_values layout version 1). Kept so that every later filter is
tested against a file an older one wrote; rerunning it with a newer filter writes a newer layout.
Each dataset's attribute "sha256" is the SHA-256 of its values' bytes (C order, little endian).

    HDF5_PLUGIN_PATH=build/hdf5-plugin /usr/bin/python3 make_layout1_file.py layout1-v0.1.0.h5
"""
import hashlib
import sys

import h5py
import numpy as np

FILTER_ID = 310


def field(dtype, shape, rng):
    """Smooth values with a few that a lossless codec must keep bit for bit."""
    axes = np.meshgrid(*[np.arange(n) / 40.0 for n in shape], indexing="ij")
    # One sign and few exponents and mantissa bits: a small file.
    smooth = sum(np.sin(a * (k + 1)) for k, a in enumerate(axes)) * 100 + 1000
    values = (np.floor(smooth * 64) / 64).astype(dtype)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, np.finfo(dtype).smallest_subnormal],
                       dtype=dtype)
    values.flat[rng.choice(values.size, special.size, replace=False)] = special
    return values


def main():
    rng = np.random.default_rng(25)
    with h5py.File(sys.argv[1], "w") as f:
        # One hypercube and a border each (3-D 16^3, 2-D 64^2, 1-D 4096 elements per hypercube).
        for name, dtype, shape in [("float3d", np.float32, (18, 17, 16)),
                                   ("float2d", np.float32, (66, 70)),
                                   ("double1d", np.float64, (4200,))]:
            values = field(dtype, shape, rng)
            dset = f.create_dataset(name, data=values, chunks=shape, compression=FILTER_ID)
            dset.attrs["sha256"] = hashlib.sha256(values.tobytes()).hexdigest()


if __name__ == "__main__":
    main()
