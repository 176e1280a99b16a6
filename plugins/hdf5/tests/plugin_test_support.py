# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What the HDF5 plugin's Python tests share: their command line, the check that HDF5 finds the
filter, test arrays with the values a lossless codec must keep (NaN payloads, infinities, signed
zeros, denormals), bit-exact comparison, and the filter's expected cd_values.

The tests load the plugin like any application, through HDF5_PLUGIN_PATH (CTest sets it to the
build's plugin folder followed by HDF5's default one, where the zfp, Blosc and LZ4 filters are).
"""
import argparse
import os
import sys

import numpy as np

ELEMENT_TYPE_CODES = {np.dtype("float32"): 1, np.dtype("float64"): 2}  # cd_values[2]
CD_VALUES_LAYOUT = 3  # cd_values[0] of new datasets
CHECKSUM_FLAG = 1  # cd_values[1]
HIGH_RATIO_FLAG = 2  # cd_values[1] bits 1-3: the codec mode's code (1, high_ratio) << 1
FOLDED_RANK_SHIFT = 4  # cd_values[1] bits 4-5 (layout 3): the rank a folded chunk is coded in
# In front of the stream: in every layout-3 chunk (the checksum of the parameters, and of the
# stream where it is checksummed) and in a checksummed layout-2 chunk.
CHECKSUM_BYTES = 8


def parse_args(description, tools=(), optional_tools=()):
    """The command line: the filter id, and the programs `tools` (found on PATH unless given)
    and `optional_tools` (None unless given: the test skips what needs them)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--filter-id", type=int, required=True, help="the ndzip filter's HDF5 id")
    for tool in tools:
        parser.add_argument(f"--{tool}", default=tool, help=f"the {tool} program")
    for tool in optional_tools:
        parser.add_argument(f"--{tool}", default=None, help=f"the {tool} program, if any")
    return parser.parse_args()


def require_filter(filter_id):
    """Fails unless HDF5 finds the filter (and so the plugin) on HDF5_PLUGIN_PATH."""
    import h5py

    if not h5py.h5z.filter_avail(filter_id):
        sys.exit(
            f"HDF5 has no filter {filter_id}: is the folder holding libh5ndzip.so on "
            f"HDF5_PLUGIN_PATH? (HDF5_PLUGIN_PATH={os.environ.get('HDF5_PLUGIN_PATH')!r})"
        )


def bits(values):
    """The array's bit patterns, as unsigned integers of the same width."""
    return values.view(np.uint32 if values.dtype.itemsize == 4 else np.uint64)


def check_bit_exact(expected, got, what):
    if expected.shape != got.shape or expected.dtype != got.dtype:
        raise AssertionError(f"{what}: {got.dtype}{got.shape}, expected "
                             f"{expected.dtype}{expected.shape}")
    differ = np.flatnonzero(bits(expected) != bits(got))
    if differ.size:
        i = differ[0]
        raise AssertionError(
            f"{what}: {differ.size} elements differ, the first at flat index {i}: "
            f"{bits(got).flat[i]:#x}, expected {bits(expected).flat[i]:#x}"
        )


def smooth(dtype, shape, phase=0.0):
    """A smooth field (what ndzip compresses well)."""
    axes = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij")
    field = sum(np.sin(a * (k + 1) + phase) for k, a in enumerate(axes)) * 100
    return field.astype(dtype)


def special_values(dtype):
    """Values whose bits a lossless codec must keep exactly."""
    info = np.finfo(dtype)
    uint = np.uint32 if np.dtype(dtype).itemsize == 4 else np.uint64
    quiet_nan_with_payload = np.array([0x7FC00123 if uint is np.uint32 else 0x7FF8000000000123],
                                      dtype=uint).view(dtype)[0]
    negative_nan = np.array([0xFFC00000 if uint is np.uint32 else 0xFFF8000000000000],
                            dtype=uint).view(dtype)[0]
    return np.array([np.nan, quiet_nan_with_payload, negative_nan, np.inf, -np.inf, 0.0, -0.0,
                     info.tiny, -info.tiny, info.smallest_subnormal, -info.smallest_subnormal,
                     info.tiny / 3, info.max, info.min, info.eps, 1.0, -1.0], dtype=dtype)


def with_special_values(values, rng):
    """`values` with special values written over scattered elements."""
    out = values.copy()
    specials = special_values(values.dtype)
    where = rng.choice(out.size, size=min(out.size, 40 * specials.size), replace=False)
    out.flat[where] = np.resize(specials, where.size)
    return out


def random_bits(dtype, shape, rng):
    """Incompressible: every bit pattern, NaNs and denormals included."""
    uint = np.uint32 if np.dtype(dtype).itemsize == 4 else np.uint64
    return rng.integers(0, np.iinfo(uint).max, size=shape, dtype=uint, endpoint=True).view(dtype)


def expected_cd_values(dtype, chunks, checksum=True, high_ratio=False, layout=CD_VALUES_LAYOUT,
                       folded_rank=0):
    """The cd_values of a dataset of layout 2 or 3 (new datasets: 3); `folded_rank`: the rank a
    layout-3 chunk is coded in where it is folded (flags bits 4-5), 0 where it is not."""
    flags = ((CHECKSUM_FLAG if checksum else 0) | (HIGH_RATIO_FLAG if high_ratio else 0)
             | folded_rank << FOLDED_RANK_SHIFT)
    return (layout, flags, ELEMENT_TYPE_CODES[np.dtype(dtype)], len(chunks), *chunks)


def pipeline(dataset):
    """The dataset's filters as (id, cd_values) pairs."""
    dcpl = dataset.id.get_create_plist()
    return [dcpl.get_filter(i)[0:3:2] for i in range(dcpl.get_nfilters())]


def run(main):
    """Runs a test's main(): a failed check prints its message and exits with status 1."""
    try:
        main()
    except AssertionError as e:
        sys.exit(f"FAILED: {e}")
