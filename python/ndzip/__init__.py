# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ndzip-kokkos from Python: lossless compression of float32 and float64 NumPy arrays of 1 to 3
dimensions in the ndzip format, on the library's Kokkos backends (the CPU's threads, or a GPU
where the library was built for one).

    frame = ndzip.compress(array)          # bytes: a self-describing frame (dtype, shape, checksum)
    restored = ndzip.decompress(frame)     # a new array, or into out=... (checked)

An array (a chunk) with few values in whole hypercubes (4096, 64x64 or 16x16x16 values; the
others are stored raw) is coded with its slowest dimensions merged, which its frame records
(coded_shape(); folding="none" to keep it as it is); one that even so stays mostly raw draws
an ndzip.BorderWarning once per shape, with a chunk shape that would compress (suggest_chunks).
compress_raw / decompress_raw read and write the bare ndzip stream, whose dtype and shape the
caller keeps, never folded. compress(array, out=buffer) writes into a writable C-contiguous buffer of the
caller's (at least size_bound(dtype, shape) bytes, of any dtype and shape) and returns a
memoryview of exactly the bytes it wrote (format 'B', over the start of the buffer). A
Compressor(dtype, shape, backend=, mode=) is kept for many arrays of one shape: its memory is
reused, which the functions, making one per call and returning new objects, cannot do (large
arrays: up to twice as fast, the new memory's page faults saved). A damaged or inconsistent
frame or stream raises StreamError (a ValueError); an array of another dtype raises TypeError,
of another rank ValueError. Arrays that are not C-contiguous are copied into C order first (the
values are those of the array as indexed).

Part of an array: decompress(frame, region=index) and open(path or bytes)[index] decode only
the box a NumPy basic index lies in (in a chunked frame the slabs it touches, in a stream the
hypercubes it touches); open() maps a file read-only and checks its header at once.

GPU arrays (CuPy, PyTorch, JAX, Numba: __dlpack__ or __cuda_array_interface__) are compressed
on their device by a build with a GPU backend, never copied to the host: compress_raw and
decompress_raw return arrays of the input's library there, compress returns a frame in host
bytes, decompress(frame, like=array or out=array) decodes onto a device; every call takes
stream= (else the library's current stream). Non-contiguous device arrays are refused. See
docs/PYTHON.md, "GPU arrays".

Backends and threads: importing ndzip initialises Kokkos on the importing thread (unless the
process already has). Calls without backend= run on default_backend(), the first of backends(),
the same on every thread. The GIL is released while the codec runs, so threads may compress
concurrently (with Kokkos older than 4.4 the library runs one call at a time; see docs/PYTHON.md).
Kokkos 3 runs OpenMP only on the thread that initialised Kokkos: elsewhere a call or Compressor
on OpenMP (the default of a CPU build included) raises RuntimeError; pass backend="serial" there,
which writes the same bytes.

Submodules: ndzip.numcodecs (the numcodecs/Zarr codec "ndzip", found by Zarr without an import
through the package's entry point), ndzip.h5 (h5py and the HDF5 filter plugin, which HDF5 finds
once ndzip is imported), ndzip.bench (python3 -m ndzip.bench: throughput against the C++ API).
"""

import atexit as _atexit

from . import _ndzip
from ._ndzip import (
    BorderWarning,
    Compressor,
    StreamError,
    __version__,
    backends,
    coded_shape,
    compress,
    compress_raw,
    decompress_raw,
    default_backend,
    frame_info,
    modes,
    size_bound,
    suggest_chunks,
)

from ._region import FrameArray, decompress, open  # noqa: A004 (ndzip.open, as gzip.open)

# Kokkos, if this module brought it up, is finalised at interpreter exit.
_atexit.register(_ndzip._finalize)

# HDF5 finds the filter plugin once h5py loads: ndzip datasets read after `import ndzip`.
from . import h5 as _h5

_h5._register_on_h5py_import()

__all__ = [
    "BorderWarning",
    "Compressor",
    "FrameArray",
    "StreamError",
    "__version__",
    "backends",
    "coded_shape",
    "compress",
    "compress_raw",
    "decompress",
    "decompress_raw",
    "default_backend",
    "frame_info",
    "modes",
    "open",
    "size_bound",
    "suggest_chunks",
]
