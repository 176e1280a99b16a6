# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Reading part of an array: ndzip.decompress(frame, region=...) and ndzip.open(), whose
FrameArray decodes a NumPy basic index of a frame's array (ints, slices, Ellipsis, None) by
decoding only the box it lies in (ndzip::decompress_frame_region: the slabs of a chunked frame
it touches, the hypercubes of each stream it touches), then taking steps and dropping axes as
NumPy does on that box."""

import builtins
import mmap
import operator
import os

import numpy as np

from . import _device, _ndzip

_INDEX_KINDS = ("only integers, slices (`:`), ellipsis (`...`) and numpy.newaxis (`None`) index "
                "an ndzip frame (basic indexing); for integer or boolean arrays, index "
                "np.asarray(frame_array) or a decoded box")


class _Selection:
    """A NumPy basic index of an array of `shape`: the box it lies in (`start`, `count`, slowest
    first), the index that takes the selection out of the box's array (`within`: steps, axes
    dropped by integers, axes added by None), and the selection's shape."""

    __slots__ = ("start", "count", "within", "shape", "unit_steps")

    def __init__(self, index, shape):
        if not isinstance(index, tuple):
            index = (index,)
        ellipses = sum(1 for i in index if i is Ellipsis)
        if ellipses > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        used = sum(1 for i in index if i is not None and i is not Ellipsis)
        if used > len(shape):
            raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                             f"but {used} were indexed")
        rest = [slice(None)] * (len(shape) - used)
        if not ellipses:
            index = index + tuple(rest)
        self.start, self.count, self.within, self.shape = [], [], [], []
        self.unit_steps = True
        axis = 0
        for entry in index:
            if entry is Ellipsis:
                entries = rest
            else:
                entries = [entry]
            for i in entries:
                if i is None:
                    self.within.append(None)
                    self.shape.append(1)
                    continue
                n = shape[axis]
                if isinstance(i, slice):
                    first, stop, step = i.indices(n)
                    length = len(range(first, stop, step))
                    last = first + (length - 1) * step
                    low = min(first, last) if length else 0
                    self.start.append(low)
                    self.count.append(abs(last - first) + 1 if length else 0)
                    self.within.append(slice(None, None, step))
                    self.shape.append(length)
                    self.unit_steps = self.unit_steps and (step == 1 or length <= 1)
                else:
                    if isinstance(i, (bool, np.bool_)):
                        raise IndexError(_INDEX_KINDS)
                    try:
                        k = operator.index(i)
                    except TypeError:
                        raise IndexError(_INDEX_KINDS) from None
                    if not -n <= k < n:
                        raise IndexError(f"index {k} is out of bounds for axis {axis} with "
                                         f"size {n}")
                    self.start.append(k + n if k < 0 else k)
                    self.count.append(1)
                    self.within.append(0)
                axis += 1
        # An Ellipsis makes an all-integer index give a 0-d array, not a scalar, as in NumPy.
        self.within = tuple(self.within) + ((Ellipsis,) if ellipses else ())
        self.shape = tuple(self.shape)

    @property
    def empty(self):
        return 0 in self.count


def _on_device(array):
    return array is not None and not isinstance(array, np.ndarray) and (
        hasattr(array, "__cuda_array_interface__") or hasattr(array, "__dlpack_device__"))


def _empty(dtype, shape, like):
    """An empty result, of like's library where like is a device array; nothing decoded."""
    library = _device._library(like) if _on_device(like) else None
    if library == "cupy":
        import cupy
        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype=dtype)
    if library == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, np.dtype(dtype).name), device=like.device)
    return np.empty(shape, dtype)


def _check_out_shape(out, selection, dtype):
    if tuple(out.shape) != selection.shape:
        raise ValueError(f"ndzip: out has shape {tuple(out.shape)}, the region "
                         f"{selection.shape} ({np.dtype(dtype).name})")
    if isinstance(out, np.ndarray):
        if out.dtype != dtype:
            raise TypeError(f"ndzip: out has dtype {out.dtype!r}, the region {np.dtype(dtype)!r}")
        if not out.flags.writeable:
            raise ValueError("ndzip: out is not writable")


def _decode(frame, selection, dtype, out, backend, stream, like):
    if selection.empty:
        if out is not None:
            _check_out_shape(out, selection, dtype)
            return out
        return _empty(dtype, selection.shape, like)
    if out is not None and not selection.unit_steps:
        # Steps: the box decoded beside out, then stepped into it.
        _check_out_shape(out, selection, dtype)
        box = _ndzip._decompress_region(frame, selection.start, selection.count,
                                        backend=backend, stream=stream,
                                        like=out if _on_device(out) else None)
        out[...] = box[selection.within]
        return out
    if out is not None:
        _ndzip._decompress_region(frame, selection.start, selection.count,
                                  indexed=selection.shape, out=out, backend=backend,
                                  stream=stream)
        return out
    box = _ndzip._decompress_region(frame, selection.start, selection.count, backend=backend,
                                    stream=stream, like=like)
    result = box[selection.within]
    if not selection.unit_steps and isinstance(result, np.ndarray):
        result = np.ascontiguousarray(result)  # the box's memory let go
    return result


def decompress(buffer, *, out=None, backend=None, stream=None, like=None, region=None):
    """The array of a frame (bytes or any buffer in host memory; any version, the chunked frame
    included), as a new NumPy array, written into `out` (exactly the frame's dtype and shape,
    C-contiguous, writable; host or device), or a new array of the library and device of
    `like`. A frame of versions 1 to 3 is checked whole first (header, length, checksum), a
    chunked one's header, index and slab heads, then each slab's checksum before it is decoded.

    region: a NumPy basic index of the array (a tuple of ints and slices, one per axis or fewer,
    Ellipsis and None allowed; negative indices and steps as NumPy takes them): only the box it
    lies in is decoded (in a chunked frame the slabs it touches, in a stream the hypercubes it
    touches), and the result is that box indexed as NumPy would (integers drop their axis, steps
    are taken in the decoded box; an all-integer index gives a NumPy scalar). With `out`, out
    has the result's shape. IndexError for an index out of range or of too many axes.
    ndzip.StreamError (a ValueError) for a damaged or inconsistent frame."""
    if region is None:
        return _ndzip.decompress(buffer, out=out, backend=backend, stream=stream, like=like)
    info = _ndzip.frame_info(buffer)
    return _decode(buffer, _Selection(region, info["shape"]), info["dtype"], out, backend,
                   stream, like)


class FrameArray:
    """FrameArray(source, backend=None): the array of a frame, read lazily: indexing decodes
    only the box the index lies in (see decompress(region=)). `source` is a path (the file is
    mapped read-only, so only the pages that are decoded are read from disk; close() or a with
    block unmaps it) or a bytes-like object in host memory (kept referenced). The header (for a
    chunked frame also its index and slab heads) is checked here: ndzip.StreamError (a
    ValueError) otherwise. The checksums are checked where decoded: of a frame of versions 1 to
    3 (one stream) its whole, on every read; of a chunked frame each slab read, so a damaged slab
    fails only the reads that touch it."""

    def __init__(self, source, backend=None):
        self._backend = backend
        self._map = None
        self._source = None
        if isinstance(source, (str, os.PathLike)):
            self._source = os.fspath(source)
            with builtins.open(self._source, "rb") as f:
                if os.fstat(f.fileno()).st_size == 0:
                    raise _ndzip.StreamError(f"ndzip: {self._source!r} is empty, not a frame")
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            self._frame = self._map
        else:
            self._frame = source
        try:
            self._info = _ndzip.frame_info(self._frame)
        except BaseException:
            self.close()
            raise
        self._shape = tuple(self._info["shape"])
        self._dtype = np.dtype(self._info["dtype"])

    shape = property(lambda self: self._shape, doc="The array's extents, slowest first.")
    dtype = property(lambda self: self._dtype, doc="float32 or float64.")
    ndim = property(lambda self: len(self._shape), doc="1 to 3.")
    size = property(lambda self: int(np.prod(self._shape, dtype=np.int64)),
                    doc="The array's number of values.")
    nbytes = property(lambda self: self.size * self._dtype.itemsize,
                      doc="The bytes of the decoded array.")
    info = property(lambda self: dict(self._info),
                    doc="ndzip.frame_info() of the frame (version, mode, slabs).")
    version = property(lambda self: self._info["version"], doc="The frame's version, 1 to 4.")
    mode = property(lambda self: self._info["mode"],
                    doc="The codec mode ('mixed' for a chunked frame whose slabs differ).")
    slab_rows = property(lambda self: self._info.get("slab_rows"),
                         doc="Rows of the slowest axis per slab (chunked frames; else None).")
    slab_count = property(lambda self: self._info.get("slab_count"),
                          doc="The chunked frame's slabs (else None).")
    backend = property(lambda self: self._backend, doc="The backend decodes run on (None: the "
                       "default).")
    closed = property(lambda self: self._frame is None, doc="Whether close() was called.")

    def _open_frame(self):
        frame = self._frame
        if frame is None:
            raise ValueError("ndzip: I/O operation on a closed FrameArray")
        return frame

    def __len__(self):
        return self._shape[0]

    def __getitem__(self, index):
        """The values at a NumPy basic index, decoded from the box it lies in."""
        return _decode(self._open_frame(), _Selection(index, self._shape), self._dtype, None,
                       self._backend, None, None)

    def read(self, region=Ellipsis, *, out=None, stream=None, like=None):
        """self[region], or written into `out` (the result's shape; host or device), or onto
        the device of `like`, as decompress(region=) places its result."""
        return _decode(self._open_frame(), _Selection(region, self._shape), self._dtype, out,
                       self._backend, stream, like)

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("ndzip: a FrameArray is decoded into a new array: copy=False "
                             "cannot be honoured")
        values = _ndzip.decompress(self._open_frame(), backend=self._backend)
        if dtype is not None and np.dtype(dtype) != values.dtype:
            values = values.astype(dtype)
        return values

    def close(self):
        """Unmaps the file (a path's FrameArray); indexing afterwards raises ValueError."""
        if self._map is not None:
            self._map.close()  # BufferError while another thread decodes from it
        self._map = None
        self._frame = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        source = f", source={self._source!r}" if self._source is not None else ""
        slabs = (f", slab_rows={self.slab_rows}, slab_count={self.slab_count}"
                 if self.slab_rows is not None else "")
        text = (f"ndzip.FrameArray(shape={self._shape}, dtype={self._dtype.name}, "
                f"version={self.version}, mode={self.mode!r}{slabs}{source})")
        return f"<closed {text}>" if self.closed else text


def open(source, backend=None):  # noqa: A001 (ndzip.open, as gzip.open)
    """The array of the frame in `source` (a path, mapped read-only, or a bytes-like object) as
    an ndzip.FrameArray: indexing decodes only what the index touches. Usable as a context
    manager (closing the file)."""
    return FrameArray(source, backend=backend)
