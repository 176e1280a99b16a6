# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The array libraries' own calls that ndzip's extension makes for device arrays (not part of the
API): the stream a call runs on, new arrays of an input's library for results, and the first
bytes of a device array. CuPy and PyTorch are imported only when an array of theirs comes."""

import importlib


def _library(array):
    return type(array).__module__.partition(".")[0]


def _importable(name):
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        return False


def stream_handle(stream, array, backend, device):
    """The stream handle (an int; 0 the legacy default stream) a call on `device` runs on:
    `stream` (an int, or an object with __cuda_stream__, .cuda_stream (PyTorch) or .ptr (CuPy)),
    else the current stream of the library of `array` on that device, else 0."""
    if stream is None:
        library = _library(array)
        if library == "cupy":
            import cupy
            with cupy.cuda.Device(device):
                return cupy.cuda.get_current_stream().ptr
        if library == "torch":
            import torch
            return torch.cuda.current_stream(device).cuda_stream
        return 0
    if isinstance(stream, bool):
        raise TypeError("ndzip: stream= takes a stream or its handle, not a bool")
    if isinstance(stream, int):
        if stream < 0:
            raise ValueError(f"ndzip: stream={stream} is no stream handle")
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    for attribute in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int):
            return handle
    raise TypeError(f"ndzip: stream= takes an int handle or a CUDA/HIP stream object "
                    f"(__cuda_stream__, .cuda_stream, .ptr), not {type(stream)!r}")


def _result_library(like):
    library = _library(like)
    if library in ("cupy", "torch"):
        return library
    # Arrays of other libraries (JAX, Numba) cannot be written through their protocols.
    for fallback in ("cupy", "torch"):
        if _importable(fallback):
            return fallback
    return None


def empty(like, backend, device, dtype, shape):
    """A new C-contiguous array of `like`'s library on `device`."""
    library = _result_library(like)
    if library == "cupy":
        import cupy
        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype=dtype)
    if library == "torch":
        import torch
        kinds = {"float32": torch.float32, "float64": torch.float64, "uint8": torch.uint8}
        return torch.empty(shape, dtype=kinds[str(dtype)], device=torch.device("cuda", device))
    raise TypeError(f"ndzip: a result on {backend} device {device} needs CuPy or PyTorch to "
                    f"hold it (neither imports): pass out=")


def byte_prefix(array, size):
    """The first `size` bytes of the C-contiguous device array `array`, 1-D uint8, same library."""
    if _library(array) == "torch":
        import torch
        return array.reshape(-1).view(torch.uint8)[:size]
    import cupy
    return cupy.asarray(array).reshape(-1).view(cupy.uint8)[:size]
