# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The numcodecs codec "ndzip", registered on import, for Zarr arrays of float32 or float64:

    import zarr, ndzip.numcodecs
    z = zarr.zeros((1000, 1000), chunks=(256, 256), dtype="f4",
                   compressor=ndzip.numcodecs.Ndzip())

Each chunk is stored as an ndzip frame (dtype, shape and checksum included), so a damaged chunk
is refused with ndzip.StreamError rather than decoded into other values. Chunks of any shape of
1 to 3 dimensions; other dtypes raise TypeError, other ranks ValueError.
"""

import numcodecs as _numcodecs
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ensure_ndarray, ndarray_copy

from . import compress, decompress

_MODES = ("ndzip", "high_ratio")


class Ndzip(Codec):
    """ndzip compression of float32/float64 chunks. `backend`: the library's backend name
    (ndzip.backends(); None: the default); `mode`: "ndzip" (fast, the original format) or
    "high_ratio" (smaller, slower)."""

    codec_id = "ndzip"

    def __init__(self, backend=None, mode="ndzip"):
        if mode not in _MODES:
            raise ValueError(f"ndzip: unknown mode {mode!r} (use 'ndzip' or 'high_ratio')")
        self.backend = backend
        self.mode = mode

    def encode(self, buf):
        return compress(ensure_ndarray(buf), backend=self.backend, mode=self.mode)

    def decode(self, buf, out=None):
        values = decompress(ensure_contiguous_ndarray(buf), backend=self.backend)
        return ndarray_copy(values, out)

    def get_config(self):
        return {"id": self.codec_id, "backend": self.backend, "mode": self.mode}

    def __repr__(self):
        return f"Ndzip(backend={self.backend!r}, mode={self.mode!r})"


_numcodecs.register_codec(Ndzip)
