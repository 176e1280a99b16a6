#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A flipped bit anywhere in a checksummed chunk (the default layout) must fail the read with an
HDF5 error that names ndzip and the chunk, never return other values. For chunks of several
shapes and both types (hypercubes with a border, an odd number of double hypercubes with the
offset table's padding word, a chunk that is all border, incompressible values), bits are
flipped at the start, middle and end of every region of the stored chunk: its checksum, the
offset table, the padding, the blocks' chunk heads and columns, and the border. The same flips
in chunks whose stream is not checksummed (checksum=0) are counted for comparison: most decode
silently (all but those in their head, the checksum of the parameters alone, and those that
break the stream's structure).

    HDF5_PLUGIN_PATH=build/hdf5-plugin python3 test_checksummed_chunks.py --filter-id 310
"""
import os
import subprocess
import tempfile

import h5py
import numpy as np

from plugin_test_support import (CHECKSUM_BYTES, check_bit_exact, parse_args, random_bits,
                                 require_filter, run, smooth, with_special_values)

HYPERCUBE_SIDE = {1: 4096, 2: 64, 3: 16}
BLOCK_HEADS_BYTES = 512  # every block starts with its 128 (float) or 64 (double) chunk heads

CHUNKS = {  # name -> (dtype, chunk shape, values)
    "float_3d_border": (np.float32, (20, 17, 16), "smooth"),
    "float_2d_two_cubes": (np.float32, (64, 130), "special"),
    "double_1d_odd_cubes": (np.float64, (12300,), "smooth"),  # 3 hypercubes: a padding word
    "double_3d": (np.float64, (16, 16, 33), "special"),
    "float_1d_random": (np.float32, (5000,), "random"),
    "float_2d_all_border": (np.float32, (30, 40), "smooth"),
}


def chunk_values(dtype, shape, kind, rng):
    if kind == "random":
        return random_bits(dtype, shape, rng)
    values = smooth(dtype, shape)
    return with_special_values(values, rng) if kind == "special" else values


def regions(stream, dtype, shape):
    """The byte ranges of an ndzip stream (../shared/spec/ndzip-stream-format.md, section 3)."""
    word = np.dtype(dtype).itemsize
    side = HYPERCUBE_SIDE[len(shape)]
    cubes = int(np.prod([n // side for n in shape]))
    table = 4 * cubes
    padded = -(-table // word) * word
    end = 0
    if cubes:
        end = int(np.frombuffer(stream, dtype="<u4", count=cubes)[-1]) * word
    blocks = (padded, padded + end)
    out = {"offset table": (0, table), "padding": (table, padded),
           "chunk heads": (blocks[0], blocks[0] + BLOCK_HEADS_BYTES * (cubes > 0)),
           "columns": (blocks[0] + BLOCK_HEADS_BYTES * (cubes > 0), blocks[1]),
           "border": (blocks[1], len(stream))}
    return {name: r for name, r in out.items() if r[1] > r[0]}


def flips(begin, end):
    """(byte, bit) positions: every bit of the first, middle and last byte of [begin, end)."""
    return [(i, b) for i in sorted({begin, (begin + end) // 2, end - 1}) for b in range(8)]


def read_chunk(dset):
    try:
        return dset[...], None
    except OSError as e:
        return None, str(e)


def flip_all(dset, values, head, dtype, shape):
    """Flips each position in turn; returns {region: (errors, silently different, unchanged)}
    and one error message."""
    info = dset.id.get_chunk_info(0)
    _, stored = dset.id.read_direct_chunk(info.chunk_offset)
    classes = {"checksum": (0, head)} if head else {}
    for name, (b, e) in regions(stored[head:], dtype, shape).items():
        classes[name] = (b + head, e + head)
    outcome, message = {}, None
    for name, (begin, end) in classes.items():
        counts = [0, 0, 0]
        for byte, bit in flips(begin, end):
            damaged = bytearray(stored)
            damaged[byte] ^= 1 << bit
            dset.id.write_direct_chunk(info.chunk_offset, bytes(damaged))
            got, error = read_chunk(dset)
            if error is not None:
                counts[0] += 1
                message = message or error
            elif got.view(np.uint8).tobytes() != values.view(np.uint8).tobytes():
                counts[1] += 1
            else:
                counts[2] += 1
        outcome[name] = tuple(counts)
    dset.id.write_direct_chunk(info.chunk_offset, stored)
    check_bit_exact(values, dset[...], f"{dset.name} restored")
    return outcome, message


def h5dump_message(h5dump, path, name):
    """What h5dump prints for a damaged dataset: HDF5's error stack, the filter's entry in it."""
    result = subprocess.run([h5dump, "--enable-error-stack", "-d", name, path], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0, f"h5dump read the damaged {name}"
    return result.stdout + result.stderr


def main():
    args = parse_args(__doc__, tools=("h5dump",))
    require_filter(args.filter_id)
    rng = np.random.default_rng(2511)
    totals = {True: [0, 0, 0], False: [0, 0, 0]}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "flips.h5")
        with h5py.File(path, "w") as f:
            for name, (dtype, shape, kind) in CHUNKS.items():
                values = chunk_values(dtype, shape, kind, rng)
                for checksum in (True, False):
                    dset = f.create_dataset(f"{name}_{int(checksum)}", data=values, chunks=shape,
                                            compression=args.filter_id,
                                            compression_opts=(int(checksum),))
                    # Every layout-3 chunk starts with its checksum, whatever it covers.
                    outcome, message = flip_all(dset, values, CHECKSUM_BYTES, dtype, shape)
                    for region, counts in outcome.items():
                        for i in range(3):
                            totals[checksum][i] += counts[i]
                        if checksum:
                            assert counts[1] == counts[2] == 0, (
                                f"{name}, {region}: of {sum(counts)} flipped bits "
                                f"{counts[1]} read as other values and {counts[2]} unchanged")
                    if checksum:
                        print(f"{name}: {', '.join(f'{r} {sum(c)}' for r, c in outcome.items())}"
                              " flipped bits, each a read error")
                        assert "ndzip" in message, message
                # A damaged chunk left in place for h5dump: its message names the chunk.
                dset = f[f"{name}_1"]
                info = dset.id.get_chunk_info(0)
                _, stored = dset.id.read_direct_chunk(info.chunk_offset)
                damaged = bytearray(stored)
                damaged[len(damaged) // 2] ^= 0x10
                dset.id.write_direct_chunk(info.chunk_offset, bytes(damaged))
        for name, (dtype, shape, _) in CHUNKS.items():
            text = h5dump_message(args.h5dump, path, f"{name}_1")
            described = ("float " if dtype == np.float32 else "double ") + "x".join(map(str, shape))
            for part in ("ndzip HDF5 filter", "checksum mismatch", described):
                assert part in text, f"h5dump of the damaged {name} does not say {part!r}:\n{text}"
    on, off = totals[True], totals[False]
    print(f"checksummed chunks: {sum(on)} flipped bits, {on[0]} read errors, {on[1]} other "
          f"values, {on[2]} unchanged")
    print(f"streams not checksummed (checksum=0), for comparison: {sum(off)} flipped bits, "
          f"{off[0]} read errors, {off[1]} silently other values, {off[2]} unchanged")


if __name__ == "__main__":
    run(main)
