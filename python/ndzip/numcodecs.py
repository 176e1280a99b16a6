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
order (a C- or F-contiguous array of the chunk, or any contiguous buffer of as many bytes).
Arrays with order="F" written by builds before this rule (issue 44) hold each chunk in C index
order: chunks written whole read back once their .zarray says "order": "C".

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


class Ndzip(Codec):
    """ndzip compression of float32/float64 chunks. `backend`: the backend this process runs the
    codec on (one of ndzip.backends(); None: the default backend, or the first that can run on
    the calling thread), not stored with the data; `mode`: "ndzip" (fast, the original format)
    or "high_ratio" (smaller, slower), stored. See the module's docstring for the order in which
    a frame records a chunk."""

    codec_id = "ndzip"

    def __init__(self, backend=None, mode="ndzip"):
        if mode not in modes:
            raise ValueError(f"ndzip: unknown mode {mode!r} (use one of: {', '.join(modes)})")
        self.backend = backend
        self.mode = mode

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
        return {"id": self.codec_id, "mode": self.mode}

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
        chunk = ensure_ndarray(buf)
        if chunk.ndim > 1 and chunk.flags.f_contiguous and not chunk.flags.c_contiguous:
            chunk = chunk.T  # its memory, in C order: the extents reversed
        return compress(chunk, backend=self._backend_here(), mode=self.mode)

    def decode(self, buf, out=None):
        frame = ensure_contiguous_ndarray(buf)
        backend = self._backend_here()
        if out is None:
            return decompress(frame, backend=backend)
        info = frame_info(frame)
        dtype, shape = info["dtype"], info["shape"]
        nbytes = dtype.itemsize * int(_np.prod(shape))
        target = ensure_ndarray(out)
        if not (target.flags.c_contiguous or target.flags.f_contiguous):
            raise ValueError("ndzip: out is not contiguous; decode() writes the chunk's bytes "
                             "into a C- or F-contiguous buffer")
        if target.nbytes != nbytes:
            raise ValueError(f"ndzip: out holds {target.nbytes} bytes, the chunk {nbytes} "
                             f"({dtype} {'x'.join(map(str, shape))})")
        # out's memory in its own order (a view, no copy), as the frame's C-ordered array.
        values = target.reshape(-1, order="A").view(_np.uint8).view(dtype).reshape(shape)
        decompress(frame, out=values, backend=backend)
        return out

    def __repr__(self):
        return f"Ndzip(backend={self._backend!r}, mode={self.mode!r})"


_numcodecs.register_codec(Ndzip)
