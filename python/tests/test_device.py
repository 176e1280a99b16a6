# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPU arrays (CuPy arrays, PyTorch tensors) compressed where they lie, on a build with a GPU
backend and a GPU (scripts/test-python-gpu.sh; skipped elsewhere): streams byte-identical to
NumPy input's and the C++ API's, results of the input's library on its device, out= written in
place, the caller's stream honoured, __cuda_array_interface__-only objects, and refusals."""

import threading

import numpy as np
import pytest

import ndzip

cupy = pytest.importorskip("cupy") if "cuda" in ndzip.backends() else None
if cupy is None or cupy.cuda.runtime.getDeviceCount() == 0:
    pytest.skip("no CUDA backend or no GPU", allow_module_level=True)
try:
    import torch
except ImportError:
    torch = None


def field(dtype, shape, seed=5):
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.standard_normal(int(np.prod(shape)))).astype(dtype).reshape(shape)


def to_cupy(a):
    return cupy.asarray(a)


def to_torch(a):
    return torch.from_numpy(a).to("cuda")


def host(x):
    if torch is not None and isinstance(x, torch.Tensor):
        return x.cpu().numpy()
    return cupy.asnumpy(x)


LIBRARIES = [pytest.param(to_cupy, id="cupy"),
             pytest.param(to_torch, id="torch",
                          marks=pytest.mark.skipif(torch is None, reason="no PyTorch"))]
CASES = [(np.float32, (40, 70, 33)), (np.float64, (100003,)), (np.float32, (300, 257)),
         (np.float64, (17, 9, 65))]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("to_device", LIBRARIES)
@pytest.mark.parametrize("dtype,shape", CASES)
def test_device_streams_and_frames(to_device, dtype, shape):
    a = field(dtype, shape)
    d = to_device(a)
    want_stream = np.frombuffer(ndzip.compress_raw(a, backend="cuda"), np.uint8)
    # Bare streams: on the device, of the input's library, the bytes of NumPy input.
    stream = ndzip.compress_raw(d)
    assert type(stream) is type(d)
    assert same_bits(host(stream), want_stream)
    restored = ndzip.decompress_raw(stream, dtype, shape)
    assert type(restored) is type(d) and tuple(restored.shape) == shape
    assert same_bits(host(restored), a)
    # Frames are host bytes, the same as NumPy input's; decoded onto the device with like=.
    frame = ndzip.compress(d)
    assert isinstance(frame, bytes) and frame == ndzip.compress(a, backend="cuda")
    on_device = ndzip.decompress(frame, like=d)
    assert type(on_device) is type(d) and same_bits(host(on_device), a)
    assert same_bits(ndzip.decompress(frame), a)  # NumPy without like=


@pytest.mark.parametrize("to_device", LIBRARIES)
def test_regions_onto_the_device(to_device):
    # ndzip.decompress(region=) and FrameArray.read: the box decoded on the device (like=,
    # out=), steps taken there by the array's library.
    a = field(np.float32, (40, 70, 33))
    frame = ndzip.compress(a)
    d = to_device(np.zeros(1, np.float32))
    index = (slice(3, 20), 5)
    got = ndzip.decompress(frame, region=index, like=d)
    assert type(got) is type(d) and same_bits(host(got), a[index])
    out = to_device(np.zeros(a[index].shape, np.float32))
    assert ndzip.decompress(frame, region=index, out=out) is out
    assert same_bits(host(out), a[index])
    stepped = (slice(None, None, 3), slice(1, None, 2))  # PyTorch takes no negative steps
    out = to_device(np.zeros(a[stepped].shape, np.float32))
    assert ndzip.open(frame).read(stepped, out=out) is out
    assert same_bits(host(out), a[stepped])
    got = ndzip.open(frame).read(stepped, like=d)
    assert type(got) is type(d) and same_bits(np.ascontiguousarray(host(got)), a[stepped])
    with pytest.raises(ValueError):
        ndzip.decompress(frame, region=index, out=to_device(np.zeros((17, 2), np.float32)))


@pytest.mark.parametrize("to_device", LIBRARIES)
def test_kept_compressor_writes_in_place(to_device):
    a = field(np.float32, (64, 64, 64))
    d = to_device(a)
    kept = ndzip.Compressor(np.float32, a.shape)
    out = to_device(np.zeros(kept.size_bound, np.uint8))
    written = kept.compress_raw(d, out=out)
    assert same_bits(host(written), np.frombuffer(ndzip.compress_raw(a, backend="cuda"),
                                                  np.uint8))
    assert same_bits(host(out)[:len(written)], host(written))  # a view of out's first bytes
    target = to_device(np.zeros_like(a))
    result = kept.decompress_raw(written, out=target)
    assert result is target and same_bits(host(target), a)
    # A frame into a host buffer of the caller's; decoded into a device out.
    frame_out = bytearray(kept.frame_size_bound)
    view = kept.compress(d, out=frame_out)
    target = to_device(np.zeros_like(a))
    kept.decompress(bytes(view), out=target)
    assert same_bits(host(target), a)
    # Many calls, alternating streams: the compressor follows the stream of each call.
    for _ in range(3):
        with cupy.cuda.Stream(non_blocking=True):
            assert same_bits(host(kept.compress_raw(d)), host(written))
        assert same_bits(host(kept.compress_raw(d)), host(written))


def test_cupy_current_stream_and_stream_argument():
    a = field(np.float64, (200, 300))
    d = to_cupy(a)
    want = ndzip.compress_raw(a, backend="cuda")
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        # Written on s: the values are the work queued just before on the same stream.
        e = d * 1.0
        got = ndzip.compress_raw(e)
        assert same_bits(cupy.asnumpy(got), np.frombuffer(want, np.uint8))
    other = cupy.cuda.Stream(non_blocking=True)
    for stream in (other, other.ptr):
        got = ndzip.compress_raw(d, stream=stream)
        assert same_bits(cupy.asnumpy(got), np.frombuffer(want, np.uint8))
        assert same_bits(cupy.asnumpy(ndzip.decompress_raw(got, np.float64, a.shape,
                                                           stream=stream)), a)


@pytest.mark.skipif(torch is None, reason="no PyTorch")
def test_torch_current_stream():
    a = field(np.float32, (128, 1000))
    want = np.frombuffer(ndzip.compress_raw(a, backend="cuda"), np.uint8)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.from_numpy(a).to("cuda", non_blocking=False) * 1.0
        got = ndzip.compress_raw(t)
        assert same_bits(got.cpu().numpy(), want)
        assert same_bits(ndzip.decompress_raw(got, np.float32, a.shape).cpu().numpy(), a)
    got = ndzip.compress_raw(to_torch(a), stream=s)
    assert same_bits(got.cpu().numpy(), want)


class CudaArrayInterfaceOnly:
    """A device array that says only __cuda_array_interface__ (as Numba's do)."""

    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = array.__cuda_array_interface__


def test_cuda_array_interface_only():
    a = field(np.float32, (50, 60))
    d = to_cupy(a)
    want = np.frombuffer(ndzip.compress_raw(a, backend="cuda"), np.uint8)
    got = ndzip.compress_raw(CudaArrayInterfaceOnly(d))
    assert isinstance(got, cupy.ndarray)  # results of other libraries' arrays: CuPy
    assert same_bits(cupy.asnumpy(got), want)
    target = cupy.zeros_like(d)
    ndzip.decompress_raw(CudaArrayInterfaceOnly(got), np.float32, a.shape,
                         out=CudaArrayInterfaceOnly(target))
    assert same_bits(cupy.asnumpy(target), a)


def test_device_refusals():
    d = to_cupy(field(np.float32, (64, 64)))
    with pytest.raises(ValueError, match="not C-contiguous"):
        ndzip.compress_raw(d[:, ::2])
    with pytest.raises(ValueError, match="not C-contiguous"):
        ndzip.compress_raw(d.T)
    with pytest.raises(ValueError, match="'cuda' backend"):
        ndzip.compress(d, backend="serial")
    with pytest.raises(TypeError, match="float32 and float64"):
        ndzip.compress_raw(cupy.zeros(64, cupy.int32))
    stream = ndzip.compress_raw(d)
    with pytest.raises(ValueError, match="frames"):
        ndzip.decompress(stream)
    with pytest.raises(ndzip.StreamError):
        ndzip.decompress_raw(stream[:-1], np.float32, (64, 64))
    with pytest.raises(ndzip.StreamError):
        ndzip.decompress_raw(cupy.concatenate([stream, stream[:8]]), np.float32, (64, 64))
    with pytest.raises(ValueError, match="host memory"):
        ndzip.decompress_raw(stream, np.float32, (64, 64), out=np.zeros((64, 64), np.float32))
    with pytest.raises(ValueError, match="holds"):
        ndzip.decompress_raw(stream, np.float32, (64, 64), out=cupy.zeros((64, 65), cupy.float32))
    too_small = cupy.zeros(16, cupy.uint8)
    with pytest.raises(ValueError):
        ndzip.compress_raw(d, out=too_small)
    damaged = stream.copy()
    damaged[:8] = 255
    with pytest.raises(ndzip.StreamError):
        ndzip.decompress_raw(damaged, np.float32, (64, 64))


def test_other_device_refused_or_honoured():
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("one GPU")
    a = field(np.float32, (64, 64))
    want = np.frombuffer(ndzip.compress_raw(a, backend="cuda"), np.uint8)
    with cupy.cuda.Device(1):
        d = cupy.asarray(a)
    current = cupy.cuda.runtime.getDevice()
    try:
        got = ndzip.compress_raw(d)
    except ValueError as refused:  # a Kokkos that runs on one device per process
        assert "device 1" in str(refused)
        return
    assert cupy.cuda.runtime.getDevice() == current  # the call left the current device alone
    assert got.__dlpack_device__() == (2, 1)
    assert same_bits(cupy.asnumpy(got), want)
    restored = ndzip.decompress_raw(got, np.float32, a.shape)
    assert restored.__dlpack_device__() == (2, 1) and same_bits(cupy.asnumpy(restored), a)
    if torch is not None:
        t = torch.from_numpy(a).to("cuda:1")
        got = ndzip.compress_raw(t)
        assert got.device == torch.device("cuda", 1) and same_bits(got.cpu().numpy(), want)


def test_threads_on_their_own_streams():
    arrays = [to_cupy(field(np.float32, (64, 128, 128), seed=s)) for s in range(4)]
    wants = [ndzip.compress_raw(cupy.asnumpy(a), backend="cuda") for a in arrays]
    results = [None] * len(arrays)

    def run(i):
        with cupy.cuda.Stream(non_blocking=True):
            for _ in range(5):
                results[i] = cupy.asnumpy(ndzip.compress_raw(arrays[i]))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(arrays))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, wants):
        assert same_bits(got, np.frombuffer(want, np.uint8))
