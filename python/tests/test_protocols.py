# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Arrays that reach ndzip through DLPack and __cuda_array_interface__, on any machine: host
arrays that speak only DLPack (NumPy's __dlpack__ behind them, with and without DLPack 1.0's
max_version) give the bytes NumPy input gives and are written in place as out=; mock
__cuda_array_interface__ objects (no GPU needed: they are refused before any memory is touched)
get TypeError or ValueError for what they are not."""

import numpy as np
import pytest

import ndzip


class DLPackOnly:
    """A host array that speaks only DLPack."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class LegacyDLPack(DLPackOnly):
    """A producer from before DLPack 1.0, which takes no max_version."""

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__(stream=stream)


def field(dtype, shape, seed=3):
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.standard_normal(int(np.prod(shape)))).astype(dtype).reshape(shape)


CASES = [(np.float32, (20, 33, 17)), (np.float64, (1000,)), (np.float32, (64, 70))]


@pytest.mark.parametrize("wrapper", [DLPackOnly, LegacyDLPack])
@pytest.mark.parametrize("dtype,shape", CASES)
def test_dlpack_host_input_gives_numpys_bytes(wrapper, dtype, shape):
    a = field(dtype, shape)
    backend = "serial"
    frame = ndzip.compress(a, backend=backend)
    assert ndzip.compress(wrapper(a), backend=backend) == frame
    assert ndzip.compress_raw(wrapper(a), backend=backend) == ndzip.compress_raw(a,
                                                                                backend=backend)
    kept = ndzip.Compressor(dtype, shape, backend=backend)
    assert kept.compress(wrapper(a)) == frame
    # A strided view through DLPack: its values as indexed, as for NumPy input.
    if len(shape) > 1:
        view = a[..., ::2]
        assert (ndzip.compress(wrapper(view), backend=backend)
                == ndzip.compress(np.ascontiguousarray(view), backend=backend))


@pytest.mark.parametrize("wrapper", [DLPackOnly, LegacyDLPack])
def test_dlpack_host_out_is_written_in_place(wrapper):
    a = field(np.float32, (30, 40))
    frame = ndzip.compress(a, backend="serial")
    target = np.full_like(a, np.nan)
    result = ndzip.decompress(frame, out=wrapper(target), backend="serial")
    assert np.array_equal(target.view(np.uint32), a.view(np.uint32))
    assert np.shares_memory(result, target)
    stream = ndzip.compress_raw(a, backend="serial")
    target[:] = 0
    ndzip.Compressor(np.float32, a.shape, backend="serial").decompress_raw(
        stream, out=wrapper(target))
    assert np.array_equal(target.view(np.uint32), a.view(np.uint32))


def test_dlpack_host_out_checked():
    a = field(np.float64, (50,))
    frame = ndzip.compress(a, backend="serial")
    with pytest.raises(TypeError, match="dtype"):
        ndzip.decompress(frame, out=DLPackOnly(np.zeros(50, np.float32)), backend="serial")
    with pytest.raises(ValueError, match="shape"):
        ndzip.decompress(frame, out=DLPackOnly(np.zeros(51)), backend="serial")
    with pytest.raises(ValueError, match="C-contiguous"):
        ndzip.decompress(frame, out=DLPackOnly(np.zeros(100)[::2]), backend="serial")
    read_only = np.zeros(50)
    read_only.setflags(write=False)
    # NumPy before 2 refuses to export it (BufferError); later NumPy flags it read-only.
    with pytest.raises((ValueError, BufferError)):
        ndzip.decompress(frame, out=DLPackOnly(read_only), backend="serial")
    with pytest.raises(TypeError, match="not a NumPy array"):
        ndzip.decompress(frame, out=[0.0] * 50, backend="serial")


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.uint8])
def test_dlpack_other_dtypes_refused(dtype):
    with pytest.raises(TypeError, match="float32 and float64"):
        ndzip.compress(DLPackOnly(np.zeros(64, dtype)), backend="serial")


class ElsewhereDLPack:
    """DLPack memory of a device type ndzip does not read (14: oneAPI)."""

    def __dlpack__(self, **kwargs):
        raise AssertionError("not to be exported")

    def __dlpack_device__(self):
        return (14, 0)


def test_dlpack_unknown_device_type_refused():
    with pytest.raises(TypeError, match="DLPack device memory of type 14"):
        ndzip.compress(ElsewhereDLPack())


class MockCudaArray:
    """What __cuda_array_interface__ (version 3) says of a CUDA array, at an address nothing
    reads: every refusal comes before the memory is touched."""

    def __init__(self, shape, typestr="<f4", strides=None, read_only=False, mask=None):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (0x7f0000000000, read_only),
            "version": 3, "strides": strides, "stream": None, "mask": mask}


@pytest.mark.parametrize("typestr", ["<i4", "<f2", "|u1", "<c8"])
def test_cuda_array_other_dtypes_refused(typestr):
    with pytest.raises(TypeError, match="float32 and float64"):
        ndzip.compress(MockCudaArray((16, 16), typestr))
    with pytest.raises(TypeError, match="float32 and float64"):
        ndzip.compress_raw(MockCudaArray((16, 16), typestr))


def test_cuda_array_rank_refused():
    with pytest.raises(ValueError, match="1 to 3 dimensions"):
        ndzip.compress(MockCudaArray((2, 2, 2, 2)))
    with pytest.raises(ValueError, match="1 to 3 dimensions"):
        ndzip.compress(MockCudaArray(()))


def test_cuda_array_strides_refused():
    # A transposed 4x5 float32 array, and every second row: device arrays are not copied.
    for strides in [(4, 16), (40, 4), (20, 8)]:
        with pytest.raises(ValueError, match="not C-contiguous"):
            ndzip.compress(MockCudaArray((4, 5), strides=strides))
    # C strides spelled out, and any stride along an extent of 1, are C order: refused only for
    # the backend (below), not for their layout.
    for strides in [(20, 4), (999, 4)]:
        with pytest.raises(ValueError) as refused:
            ndzip.compress(MockCudaArray((1 if strides[0] == 999 else 4, 5), strides=strides),
                           backend="serial")
        assert "C-contiguous" not in str(refused.value)


def test_cuda_array_mask_refused():
    with pytest.raises(ValueError, match="mask"):
        ndzip.compress(MockCudaArray((8,), mask=MockCudaArray((8,), "|b1")))


def test_cuda_array_out_checked():
    values = MockCudaArray((64, 64))
    with pytest.raises(ValueError, match="read-only"):
        ndzip.compress_raw(values, out=MockCudaArray((100000,), "|u1", read_only=True))
    with pytest.raises(ValueError, match="not C-contiguous"):
        ndzip.compress_raw(values, out=MockCudaArray((100, 100), "|u1", strides=(1, 100)))
    with pytest.raises(ValueError, match="host memory"):
        ndzip.compress_raw(values, out=bytearray(100000))
    kept = ndzip.Compressor(np.float32, (64, 64), backend="serial")
    stream = MockCudaArray((5000,), "|u1")
    with pytest.raises(ValueError, match="read-only"):
        kept.decompress_raw(stream, out=MockCudaArray((64, 64), read_only=True))
    with pytest.raises(TypeError, match="double 64x64"):
        kept.decompress_raw(stream, out=MockCudaArray((64, 64), "<f8"))
    with pytest.raises(ValueError, match="64x65"):
        kept.decompress_raw(stream, out=MockCudaArray((64, 65)))
    with pytest.raises(ValueError, match="host memory"):
        kept.decompress_raw(stream, out=np.zeros((64, 64), np.float32))


def test_cuda_array_with_a_host_backend_refused():
    with pytest.raises(ValueError, match="run on the 'cuda' backend"):
        ndzip.compress(MockCudaArray((64, 64)), backend="serial")
    with pytest.raises(ValueError, match="run on the 'cuda' backend"):
        ndzip.Compressor(np.float32, (64, 64), backend="serial").compress(MockCudaArray((64, 64)))


def test_device_frames_refused():
    with pytest.raises(ValueError, match="frames"):
        ndzip.decompress(MockCudaArray((100,), "|u1"))
    with pytest.raises(ValueError, match="frames"):
        ndzip.frame_info(MockCudaArray((100,), "|u1"))
    with pytest.raises(ValueError, match="frames"):
        ndzip.compress(MockCudaArray((64, 64)), out=MockCudaArray((100000,), "|u1"),
                       backend="serial")


def test_stream_argument_checked():
    with pytest.raises(TypeError, match="stream="):
        ndzip.compress(MockCudaArray((64,)), stream="default")
    with pytest.raises(ValueError, match="stream=-1"):
        ndzip.compress(MockCudaArray((64,)), stream=-1)
    with pytest.raises(TypeError, match="stream="):
        ndzip.compress(MockCudaArray((64,)), stream=True)


@pytest.mark.skipif("cuda" in ndzip.backends(), reason="this build runs CUDA arrays")
def test_cuda_array_in_a_build_without_cuda():
    with pytest.raises(ValueError, match="backend 'cuda'"):
        ndzip.compress(MockCudaArray((64, 64)))
