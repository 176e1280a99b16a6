# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The numcodecs codec: registered on import, Zarr arrays of float32/float64 with chunks of any
shape written and read back bit for bit, its configuration round trip, and a damaged chunk
refused."""

import numcodecs
import numpy as np
import pytest
import zarr

import ndzip
import ndzip.numcodecs
from ndzip.numcodecs import Ndzip


def field(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    values = np.cumsum(rng.standard_normal(int(np.prod(shape)))).astype(dtype).reshape(shape)
    values.flat[::97] = np.nan
    values.flat[5::101] = -0.0
    return values


def same_bits(a, b):
    unsigned = np.uint32 if a.dtype == np.float32 else np.uint64
    return a.shape == b.shape and np.array_equal(a.view(unsigned), b.view(unsigned))


def test_registered_on_import():
    codec = numcodecs.get_codec({"id": "ndzip"})
    assert isinstance(codec, Ndzip)
    assert codec.get_config() == {"id": "ndzip", "backend": None, "mode": "ndzip"}
    again = numcodecs.get_codec(Ndzip(backend="serial", mode="high_ratio").get_config())
    assert (again.backend, again.mode) == ("serial", "high_ratio")
    config = again.get_config()
    config.pop("id")
    assert Ndzip.from_config(config) == again
    with pytest.raises(ValueError, match="unknown mode"):
        Ndzip(mode="fast")


@pytest.mark.parametrize(
    "dtype, shape, chunks",
    [
        (np.float32, (1000,), (100,)),
        (np.float64, (10007,), (4096,)),
        (np.float32, (300, 200), (256, 64)),
        (np.float64, (37, 41), (3, 5)),  # chunks far smaller than a hypercube
        (np.float32, (70, 40, 50), (32, 32, 32)),
        (np.float64, (20, 20, 20), (20, 20, 20)),
    ],
)
@pytest.mark.parametrize("mode", ["ndzip", "high_ratio"])
def test_zarr_array_round_trip(tmp_path, dtype, shape, chunks, mode):
    data = field(dtype, shape)
    z = zarr.open(str(tmp_path / "a.zarr"), mode="w", shape=shape, chunks=chunks, dtype=dtype,
                  compressor=Ndzip(mode=mode))
    z[...] = data
    back = zarr.open(str(tmp_path / "a.zarr"), mode="r")
    assert isinstance(back.compressor, Ndzip) and back.compressor.mode == mode
    assert same_bits(back[...], data)
    # A partial read decodes the chunks it touches.
    region = tuple(slice(1, min(n, 7)) for n in shape)
    assert same_bits(back[region], data[region])


def test_chunk_is_a_frame_and_damage_is_refused(tmp_path):
    data = field(np.float32, (64, 64))
    store = zarr.DirectoryStore(str(tmp_path / "d.zarr"))
    z = zarr.open(store, mode="w", shape=data.shape, chunks=(32, 32), dtype=np.float32,
                  compressor=Ndzip())
    z[...] = data
    key = "0.1"
    chunk = bytearray(store[key])
    assert ndzip.frame_info(chunk)["shape"] == (32, 32)
    chunk[len(chunk) // 2] ^= 0x01
    store[key] = bytes(chunk)
    with pytest.raises(ndzip.StreamError, match="checksum mismatch"):
        zarr.open(store, mode="r")[...]


def test_other_dtypes_are_refused(tmp_path):
    z = zarr.open(str(tmp_path / "i.zarr"), mode="w", shape=(10,), chunks=(5,), dtype=np.int32,
                  compressor=Ndzip())
    with pytest.raises(TypeError, match="float32 and float64"):
        z[...] = np.arange(10, dtype=np.int32)
