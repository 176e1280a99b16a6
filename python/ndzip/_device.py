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


def _torch_raw_stream(torch):
    """The current stream's handle of a device: PyTorch's own accessor of it where it has one
    (1 us; current_stream() builds a Stream object, 3 us)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw if raw is not None else (lambda device: torch.cuda.current_stream(device).cuda_stream)


def _handle(value, what):
    """`value` checked to be a stream handle: an integer of 0 to 2**64 - 1."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"ndzip: {what} is {value!r}, not a stream handle (an integer)")
    if not 0 <= value < 2**64:
        raise ValueError(f"ndzip: {what} is no stream handle (an integer of 0 to 2**64 - 1)")
    return value


def stream_handle(stream, array, backend, device):
    """The stream handle (an int; 0 the legacy default stream) a call on `device` runs on:
    `stream` (an int, or an object with __cuda_stream__, .cuda_stream (PyTorch) or .ptr (CuPy)),
    else the current stream of the library of `array` on that device, else 0."""
    if stream is None:
        # The extension asks CuPy's and PyTorch's own array types itself; their subclasses
        # (torch.nn.Parameter) come here.
        library = _library(array)
        if library == "cupy":
            import cupy
            return cupy.cuda.get_current_stream(device).ptr
        if library == "torch":
            import torch
            return _torch_raw_stream(torch)(device)
        return 0
    if isinstance(stream, bool):
        raise TypeError("ndzip: stream= takes a stream or its handle, not a bool")
    if isinstance(stream, int):
        return _handle(stream, f"stream={stream}")
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        given = protocol()
        if not (isinstance(given, tuple) and len(given) == 2):
            raise TypeError(f"ndzip: {type(stream)!r}.__cuda_stream__() returned {given!r}, not "
                            f"a (version, handle) pair")
        return _handle(given[1], f"the handle {type(stream)!r}.__cuda_stream__() gave")
    for attribute in ("cuda_stream", "ptr"):  # torch.cuda.Stream, cupy.cuda.Stream
        handle = getattr(stream, attribute, None)
        if isinstance(handle, int) and not isinstance(handle, bool):
            return _handle(handle, f"{type(stream)!r}.{attribute}")
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


def byte_prefix(array, size, device):
    """The first `size` bytes of the C-contiguous device array `array` on `device`, 1-D uint8,
    of its library (CuPy for other libraries' arrays)."""
    if _library(array) == "torch":
        import torch
        return array.reshape(-1).view(torch.uint8)[:size]
    import cupy
    # On its device: CuPy copies an array of another device to the current one.
    with cupy.cuda.Device(device):
        return cupy.asarray(array).reshape(-1).view(cupy.uint8)[:size]
