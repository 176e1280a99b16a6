#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""h5py writes float and double datasets of rank 1-3 with the ndzip filter (compression=<id>),
in chunk shapes that leave partial chunks at the edges and mix hypercubes with border elements,
and reads them back bit-exact after reopening the file: whole, in hyperslabs, and after a partial
overwrite. Smooth data must take less room than raw. Datasets the filter cannot compress are
refused when the filter is mandatory and stored uncompressed when it is optional.

    HDF5_PLUGIN_PATH=build/hdf5-plugin python3 test_h5py_roundtrip.py --filter-id 310
"""
import os
import tempfile

import h5py
import numpy as np

from plugin_test_support import (CHECKSUM_BYTES, check_bit_exact, expected_cd_values, parse_args,
                                 pipeline, random_bits, require_filter, run, smooth,
                                 with_special_values)

# (shape, chunks): ndzip hypercubes are 4096 elements (1-D), 64x64 (2-D), 16x16x16 (3-D); the
# elements of a chunk outside them are its border.
LAYOUTS = [
    ((21000,), (5000,)),          # 1 hypercube + 904 border per chunk; partial last chunk
    ((3000,), (3000,)),           # border only
    ((150, 200), (64, 96)),       # partial chunks on both axes
    ((130, 70), (130, 70)),       # one chunk, 2 hypercubes + border
    ((40, 37, 50), (16, 32, 20)),
    ((33, 33, 33), (32, 32, 32)),  # 8 hypercubes per chunk, then mostly-fill edge chunks
]
DTYPES = [np.float32, np.float64]
HYPERCUBE_SIDE = {1: 4096, 2: 64, 3: 16}


def has_hypercubes(chunks):
    """Whether ndzip compresses anything of such a chunk: the border is stored verbatim."""
    return all(n >= HYPERCUBE_SIDE[len(chunks)] for n in chunks)


def uncompressed_chunk_bytes(array, chunks):
    """What the dataset's chunks take uncompressed: edge chunks are stored whole."""
    count = np.prod([-(-n // c) for n, c in zip(array.shape, chunks)])
    return int(count * np.prod(chunks) * array.itemsize)


def datasets(rng):
    """name -> (array, chunks) for every type, layout and kind of data."""
    out = {}
    for dtype in DTYPES:
        for shape, chunks in LAYOUTS:
            tag = f"{np.dtype(dtype).name}_{'x'.join(map(str, shape))}"
            base = smooth(dtype, shape)
            out[f"smooth_{tag}"] = (base, chunks)
            out[f"special_{tag}"] = (with_special_values(base, rng), chunks)
            out[f"noise_{tag}"] = (random_bits(dtype, shape, rng), chunks)
    return out


def check_written(path, arrays, filter_id):
    with h5py.File(path, "r") as f:
        for name, (array, chunks) in arrays.items():
            dset = f[name]
            got = pipeline(dset)
            want = [(filter_id, expected_cd_values(array.dtype, chunks))]
            assert got == want, f"{name}: filter pipeline {got}, expected {want}"
            check_bit_exact(array, dset[...], name)
            # A hyperslab across chunk boundaries decompresses parts of several chunks.
            window = tuple(slice(n // 3, n // 3 + max(1, n // 2)) for n in array.shape)
            check_bit_exact(array[window], dset[window], f"{name}{window}")
            if name.startswith("smooth") and has_hypercubes(chunks):
                stored = dset.id.get_storage_size()
                raw = uncompressed_chunk_bytes(array, chunks)
                assert stored < raw, f"{name}: {stored} bytes stored, {raw} uncompressed"


def check_overwrite(path, filter_id):
    """A partial write decompresses the chunks it touches and compresses them again."""
    values = smooth(np.float64, (90, 100))
    with h5py.File(path, "w") as f:
        f.create_dataset("field", data=values, chunks=(64, 64), compression=filter_id)
    patch = np.full((20, 30), -1.5)
    with h5py.File(path, "r+") as f:
        f["field"][50:70, 40:70] = patch
    values[50:70, 40:70] = patch
    with h5py.File(path, "r") as f:
        check_bit_exact(values, f["field"][...], "partially overwritten dataset")


def check_filter_options(path, filter_id):
    """What the filter was added with decides the chunk layout; set_local records the chunk:
    no value (checksummed), checksum=1 or 0, then high_ratio=1 or 0, a copied dataset's
    parameters (layout and flags kept, extents recomputed). Anything else is refused when the
    dataset is created. Integer-valued data, where the high-ratio stream is smaller."""
    values = np.round(smooth(np.float32, (100, 100)) * 1000).astype(np.float32)
    cases = {  # name -> (values the filter is added with, cd_values stored)
        "default": ((), expected_cd_values(np.float32, (64, 64))),
        "checksum_on": ((1,), expected_cd_values(np.float32, (64, 64))),
        "checksum_off": ((0,), expected_cd_values(np.float32, (64, 64), checksum=False)),
        "ndzip_mode": ((1, 0), expected_cd_values(np.float32, (64, 64))),
        "high_ratio": ((1, 1), expected_cd_values(np.float32, (64, 64), high_ratio=True)),
        "high_ratio_bare": ((0, 1), expected_cd_values(np.float32, (64, 64), False, True)),
        "copied_high_ratio": ((2, 3, 1, 2, 5, 5),
                              expected_cd_values(np.float32, (64, 64), True, True, layout=2)),
        "copied_layout_3": ((3, 0, 1, 2, 5, 5), expected_cd_values(np.float32, (64, 64), False)),
        "copied_layout_2": ((2, 0, 1, 2, 5, 5),
                            expected_cd_values(np.float32, (64, 64), False, layout=2)),
        "copied_layout_1": ((1, 1, 2, 5, 5), (1, 1, 2, 64, 64)),
    }
    with h5py.File(path, "w") as f:
        for name, (given, _) in cases.items():
            f.create_dataset(name, data=values, chunks=(64, 64), compression=filter_id,
                             compression_opts=given or None)
        # (1, 1, 2): folding 2; (3, 65, ...): a flag bit past the folded rank's; (3, 33, ...): a
        # 2-D chunk "folded" to rank 2.
        for given in [(9, 9, 9), (2,), (1, 2), (1, 1, 2), (1, 0, 1, 0), (4, 0, 1, 2, 64, 64),
                      (2, 4, 1, 2, 64, 64), (3, 65, 1, 2, 5, 5), (3, 33, 1, 2, 5, 5)]:
            try:
                f.create_dataset("refused", data=values, chunks=(64, 64), compression=filter_id,
                                 compression_opts=given)
            except (ValueError, OSError):
                pass
            else:
                raise AssertionError(f"dataset created with the filter's values {given}")
    with h5py.File(path, "r") as f:
        stored = {}
        for name, (_, want) in cases.items():
            assert pipeline(f[name]) == [(filter_id, want)], f"{name}: {pipeline(f[name])}"
            check_bit_exact(values, f[name][...], f"dataset {name}")
            stored[name] = f[name].id.get_chunk_info(0).size
    # The same stream in every layout, behind its 8-byte checksum where there is one: in every
    # layout-3 chunk (checksummed or not), in a checksummed layout-2 chunk.
    assert stored["default"] == stored["checksum_off"] == stored["copied_layout_3"], stored
    assert stored["default"] == stored["copied_layout_2"] + CHECKSUM_BYTES, stored
    assert stored["copied_layout_1"] == stored["copied_layout_2"], stored
    assert stored["ndzip_mode"] == stored["default"], stored
    assert stored["high_ratio"] == stored["high_ratio_bare"] == stored["copied_high_ratio"], stored
    assert stored["high_ratio"] < stored["default"], stored


def check_folding(path, filter_id):
    """Chunks with few values in whole hypercubes are folded by the rule (docs/FORMAT.md,
    "Folding"), recorded in the flags: h5py's chunks=True for a (20, 180, 360) float array is
    (3, 23, 90), no hypercube as it is, coded as (69, 90); (10, 1000) chunks of a 2-D array as
    (10000,). Bit-exact either way, smaller than unfolded; folding 0 keeps them as they are,
    and a copy's folding is decided for its own chunk shape."""
    cases = {  # name -> (shape, chunks, filter values, folded rank recorded)
        "folded_3d": ((20, 180, 360), (3, 23, 90), (), 2),
        "folded_2d": ((40, 3000), (10, 1000), (1, 0, 1), 1),
        "unfolded_3d": ((20, 180, 360), (3, 23, 90), (1, 0, 0), 0),
        "whole_hypercubes": ((64, 64), (64, 64), (), 0),
        "copied_folded_to_whole": ((64, 64), (64, 64), (3, 33, 1, 3, 3, 23, 90), 0),
        "copied_whole_to_folded": ((20, 180, 360), (3, 23, 90), (3, 1, 1, 2, 64, 64), 2),
        "copied_unfolded": ((20, 180, 360), (3, 23, 90), (3, 1, 1, 3, 3, 23, 90), 0),
    }
    arrays = {name: smooth(np.float32, shape) for name, (shape, _, _, _) in cases.items()}
    with h5py.File(path, "w") as f:
        for name, (_, chunks, given, _) in cases.items():
            f.create_dataset(name, data=arrays[name], chunks=chunks, compression=filter_id,
                             compression_opts=given or None)
    with h5py.File(path, "r") as f:
        for name, (_, chunks, _, folded_rank) in cases.items():
            want = expected_cd_values(np.float32, chunks, folded_rank=folded_rank)
            assert pipeline(f[name]) == [(filter_id, want)], f"{name}: {pipeline(f[name])}"
            check_bit_exact(arrays[name], f[name][...], f"dataset {name}")
            window = (slice(2, 9), slice(20, 71), slice(80, 95))[:arrays[name].ndim]
            check_bit_exact(arrays[name][window], f[name][window], f"dataset {name}{window}")
        folded = f["folded_3d"].id.get_storage_size()
        unfolded = f["unfolded_3d"].id.get_storage_size()
        assert folded < 0.9 * unfolded, f"folded {folded} bytes, unfolded {unfolded}"


def check_refusals(path, filter_id):
    ints = np.arange(1000, dtype=np.int32)
    with h5py.File(path, "w") as f:
        # Optional (h5py's compression=<id>): created, its chunks stored uncompressed.
        dset = f.create_dataset("ints", data=ints, chunks=(100,), compression=filter_id)
        assert pipeline(dset) == [(filter_id, ())], pipeline(dset)
        assert dset.id.get_storage_size() == ints.nbytes, dset.id.get_storage_size()
        # Mandatory: refused, with the filter's reason.
        refused = [
            ("int32", h5py.h5t.STD_I32LE, (100,), "not float or double"),
            ("big-endian float", h5py.h5t.IEEE_F32BE, (100,), "not little-endian IEEE 754"),
            ("rank 4", h5py.h5t.IEEE_F32LE, (4, 4, 4, 4), "rank 4"),
        ]
        for what, file_type, chunks, reason in refused:
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_chunk(chunks)
            dcpl.set_filter(filter_id, h5py.h5z.FLAG_MANDATORY)
            space = h5py.h5s.create_simple(tuple(2 * n for n in chunks))
            try:
                h5py.h5d.create(f.id, what.encode(), file_type, space, dcpl=dcpl)
            except (ValueError, OSError) as e:
                assert reason in str(e), f"{what}: refused with {e!r}, expected {reason!r}"
            else:
                raise AssertionError(f"{what}: created with the mandatory ndzip filter")
    with h5py.File(path, "r") as f:
        check_bit_exact(ints.view(np.float32), f["ints"][...].view(np.float32), "int dataset")


def main():
    args = parse_args(__doc__)
    require_filter(args.filter_id)
    rng = np.random.default_rng(20261124)
    arrays = datasets(rng)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "roundtrip.h5")
        with h5py.File(path, "w") as f:
            for name, (array, chunks) in arrays.items():
                f.create_dataset(name, data=array, chunks=chunks, compression=args.filter_id)
        check_written(path, arrays, args.filter_id)

        # A file of smooth datasets in whole chunks is smaller than the raw arrays.
        smooth_path = os.path.join(tmp, "smooth.h5")
        raw = 0
        with h5py.File(smooth_path, "w") as f:
            for dtype in DTYPES:
                for shape, chunks in [((16384,), (4096,)), ((128, 192), (64, 64)),
                                      ((32, 48, 32), (16, 16, 32))]:
                    array = smooth(dtype, shape)
                    f.create_dataset(f"{np.dtype(dtype).name}_{len(shape)}d", data=array,
                                     chunks=chunks, compression=args.filter_id)
                    raw += array.nbytes
        size = os.path.getsize(smooth_path)
        assert size < raw, f"file of smooth datasets: {size} bytes, raw {raw}"

        check_overwrite(os.path.join(tmp, "overwrite.h5"), args.filter_id)
        check_filter_options(os.path.join(tmp, "options.h5"), args.filter_id)
        check_folding(os.path.join(tmp, "folding.h5"), args.filter_id)
        check_refusals(os.path.join(tmp, "refusals.h5"), args.filter_id)
    print(f"h5py round trip: {len(arrays)} datasets bit-exact (float/double, ranks 1-3, partial "
          f"chunks); smooth file {size} of {raw} raw bytes; partial overwrite; filter "
          "options and layouts; folded chunks; refusals")


if __name__ == "__main__":
    run(main)
