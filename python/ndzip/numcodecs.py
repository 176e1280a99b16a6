# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The numcodecs codec "ndzip", registered on import, for Zarr arrays of float32 or float64:

    import zarr, ndzip.numcodecs
    z = zarr.zeros((1000, 1000), chunks=(256, 256), dtype="f4",
                   compressor=ndzip.numcodecs.Ndzip())

Each chunk is stored as an ndzip frame (dtype, shape and checksum included), so a damaged chunk
is refused with ndzip.StreamError rather than decoded into other values. Chunks of any shape of
1 to 3 dimensions, of arrays of either order (C or F); other dtypes raise TypeError, other ranks
ValueError.

Order. A numcodecs codec turns a chunk's memory into bytes and back: Zarr hands encode() the
chunk in the array's order and reads what decode() returns as the chunk's memory in that order.
So a frame records the chunk's memory: a C-contiguous chunk as itself; an F-contiguous chunk of
shape (n0, .., nk) as the C-ordered array of shape (nk, .., n0) that its memory is (its
transpose, no copy), so its frame's shape is reversed; a chunk that is neither (no memory order
to keep) as its values in C (index) order. decode() returns the frame's array, whose bytes are
then the chunk's memory; decode(buf, out) writes those bytes into `out` in out's own memory
order. Arrays with order="F" written by builds before this rule (issue 44) hold each chunk in C
index order: chunks written whole read back once their .zarray says "order": "C" (with "F",
Zarr decoding into out refuses such a chunk unless it is square, see Checks).

Checks. decode(buf, out) refuses (ValueError, naming both) a frame that is not out's chunk: an
`out` of items wider than a byte (what Zarr passes: the chunk's place in the result, of the
array's dtype and chunk shape, C- or F-contiguous) must have the frame's dtype, and its memory
the frame's shape (an F-contiguous out's shape reversed); so a chunk file of another array, or a
.zarray whose "dtype" or "chunks" was edited, is refused rather than decoded into other values.
An `out` of one-byte items (bytes, bytearray, a uint8 array) is raw memory with no dtype or
shape of the chunk: only its byte count can be checked. decode(buf) without `out` returns the
frame's array, its dtype and shape as the frame records them, and cannot check them: the codec
is not told which chunk it decodes. Zarr 2 decodes so wherever the chunk's place in the result
is not one contiguous block (part of a chunk, an edge chunk, a chunk that does not span the
array's faster dimensions, a chunk being partly rewritten) and then views the result as the
array's dtype and reshapes it to its chunks, which checks only the byte count there. The frame
does not record the order: a square chunk of a C array read as one of an F array (the same
shape either way) decodes transposed.

Folding. Zarr's default chunks are often thinner than a hypercube (16 values a side in 3-D,
64 in 2-D): xarray's (5, 90, 180) has no whole hypercube, so unfolded every value would be
stored raw. Such a chunk is coded as a grid its slowest dimensions merge into ((81000,): 96 %
in hypercubes; ndzip.coded_shape); a chunk that stays mostly raw even so draws one
ndzip.BorderWarning naming a chunk shape that compresses.

Backend. The configuration stored with the data (get_config, Zarr's .zarray) holds what the bytes
depend on, the mode, and not the backend: every backend writes the same bytes and reads any
frame. `backend` is the running process's preference; None runs on ndzip.default_backend(), or,
on a thread where that cannot run (Kokkos 3's OpenMP off the thread that imported ndzip), on the
first of ndzip.backends() that can. A "backend" in a configuration written by the previous
version is ignored.
"""

import numcodecs as _numcodecs
import numpy as _np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ensure_ndarray

from . import _ndzip, backends, compress, decompress, default_backend, frame_info, modes


def _checked_backend(backend):
    if backend is None:
        return None
    names = backends()
    if not isinstance(backend, str):
        raise TypeError(f"ndzip: backend is a name (one of {', '.join(names)}) or None, not "
                        f"{type(backend).__name__}")
    if backend not in names:
        raise ValueError(f"ndzip: unknown or disabled backend {backend!r} (this build has: "
                         f"{', '.join(names)}; None runs on the default)")
    return backend


def _as_memory(array):
    """`array`'s memory as the C-ordered array it is (a view, no copy): an F-contiguous array of
    2 or more dimensions as its transpose, its extents reversed; any other array as it is."""
    if array.ndim > 1 and array.flags.f_contiguous and not array.flags.c_contiguous:
        return array.T
    return array


def _described(dtype, shape):
    return f"{_np.dtype(dtype)} {'x'.join(map(str, shape))}"


def _described_out(out):
    """out's dtype and shape, and for an F-contiguous out the shape of its memory (a frame's)."""
    memory = _as_memory(out)
    if memory is out:
        return _described(out.dtype, out.shape)
    return (f"{_described(out.dtype, out.shape)} in F order (its memory "
            f"{'x'.join(map(str, memory.shape))})")


class Ndzip(Codec):
    """ndzip compression of float32/float64 chunks. `backend`: the backend this process runs the
    codec on (one of ndzip.backends(); None: the default backend, or the first that can run on
    the calling thread), not stored with the data; `mode`: "ndzip" (fast, the original format)
    or "high_ratio" (smaller, slower), stored. See the module's docstring for the order in which
    a frame records a chunk. `folding`: "automatic" (the default: a chunk with few values in
    whole hypercubes, as the chunks Zarr and xarray pick often have, is coded with its slowest
    dimensions merged, which its frame records; see ndzip.coded_shape) or "none"; stored. Frames
    of either are read whatever the configuration says."""

    codec_id = "ndzip"

    def __init__(self, backend=None, mode="ndzip", folding="automatic"):
        if mode not in modes:
            raise ValueError(f"ndzip: unknown mode {mode!r} (use one of: {', '.join(modes)})")
        if folding not in ("automatic", "none"):
            raise ValueError(f"ndzip: unknown folding {folding!r} (use 'automatic' or 'none')")
        self.backend = backend
        self.mode = mode
        self.folding = folding

    @property
    def backend(self):
        return self._backend

    @backend.setter
    def backend(self, backend):
        # Checked here, so that a codec is refused when made (or set), not at its first chunk.
        self._backend = _checked_backend(backend)

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        # The previous version stored the writer's backend; it describes that machine, not the
        # data, and may not exist here (a CUDA build's data read on a CPU build).
        config.pop("backend", None)
        return cls(**config)

    def get_config(self):
        return {"id": self.codec_id, "mode": self.mode, "folding": self.folding}

    def _backend_here(self):
        if self._backend is not None:
            return self._backend
        # Every backend writes the same bytes, so a thread that cannot run the default (Kokkos 3
        # runs OpenMP only on the thread that initialised Kokkos) uses one that it can: Zarr is
        # read and written from thread pools (dask) with codecs made from stored configurations.
        for name in [default_backend()] + backends():
            if _ndzip._runs_on_this_thread(name):
                return name
        return None  # none can: the call raises RuntimeError saying why

    def encode(self, buf):
        return compress(_as_memory(ensure_ndarray(buf)), backend=self._backend_here(),
                        mode=self.mode, folding=self.folding)

    def decode(self, buf, out=None):
        frame = ensure_contiguous_ndarray(buf)
        backend = self._backend_here()
        if out is None:
            return decompress(frame, backend=backend)
        info = frame_info(frame)
        dtype, shape = info["dtype"], info["shape"]
        target = ensure_ndarray(out)
        if not (target.flags.c_contiguous or target.flags.f_contiguous):
            raise ValueError("ndzip: out is not contiguous; decode() writes the chunk's bytes "
                             "into a C- or F-contiguous buffer")
        if target.dtype.itemsize == 1:
            # Raw memory: nothing in it says the chunk's dtype or shape, only its size can.
            nbytes = dtype.itemsize * int(_np.prod(shape))
            if target.nbytes != nbytes:
                raise ValueError(f"ndzip: out holds {target.nbytes} bytes, the chunk {nbytes} "
                                 f"({_described(dtype, shape)})")
            values = target.reshape(-1, order="A").view(dtype).reshape(shape)
        else:
            values = _as_memory(target)
            if values.dtype != dtype or values.shape != shape:
                raise ValueError(f"ndzip: the frame holds {_described(dtype, shape)}, out is "
                                 f"{_described_out(target)}: not this chunk's frame (a chunk of "
                                 "another array, or .zarray's dtype or chunks edited?)")
        decompress(frame, out=values, backend=backend)
        return out

    def __repr__(self):
        return f"Ndzip(backend={self._backend!r}, mode={self.mode!r}, folding={self.folding!r})"


_numcodecs.register_codec(Ndzip)
