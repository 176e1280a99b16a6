# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Array descriptions as a hostile or broken producer hands them over, on any machine: DLPack
capsules built field by field with ctypes (versioned and legacy), and __cuda_array_interface__
dicts, each refused with an error naming the field before anything reads the memory it points
at (issue 62, rows 1-7: before, several of these killed the interpreter with SIGSEGV or SIGFPE,
or compressed uninitialised memory). The addresses of refused arrays point at nothing: a read
would crash the test run."""

import ctypes as C

import numpy as np
import pytest

import ndzip
import ndzip.h5


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32),
                ("dtype", DLDataType), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class DLManagedTensor(C.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", C.c_void_p), ("deleter", C.c_void_p)]


class DLManagedTensorVersioned(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32), ("manager_ctx", C.c_void_p),
                ("deleter", C.c_void_p), ("flags", C.c_uint64), ("dl_tensor", DLTensor)]


_capsule_new = C.pythonapi.PyCapsule_New
_capsule_new.restype = C.py_object
_capsule_new.argtypes = [C.c_void_p, C.c_char_p, C.c_void_p]
# The capsules keep pointers to their names: module-level, they outlive every capsule.
_VERSIONED_NAME = b"dltensor_versioned"
_LEGACY_NAME = b"dltensor"

CPU, CUDA = 1, 2
NOWHERE = 0x10  # an address no process maps: reading it is SIGSEGV
ANNOUNCED = object()  # __dlpack_device__ says what the capsule says


class Producer:
    """A DLPack producer whose capsule says exactly what it is told to. `data`: a NumPy array
    (its memory), an address, or None (a null pointer); `shape` None: a null shape pointer with
    `ndim`; `device`: the capsule's (type, id); `announced`: what __dlpack_device__ returns
    (ANNOUNCED: the capsule's device). Every export is counted."""

    def __init__(self, data, shape, *, ndim=None, code=2, bits=32, lanes=1, strides=None,
                 byte_offset=0, device=(CPU, 0), announced=ANNOUNCED, versioned=True,
                 one_capsule=False):
        self.data, self.device, self.versioned = data, device, versioned
        self.announced = device if announced is ANNOUNCED else announced
        self.ndim = len(shape) if ndim is None else ndim
        self.shape = None if shape is None else (C.c_int64 * max(len(shape), 1))(*shape)
        self.strides = None if strides is None else (C.c_int64 * len(strides))(*strides)
        self.dtype = DLDataType(code, bits, lanes)
        self.byte_offset = byte_offset
        self.one_capsule = one_capsule
        self.kept = []  # the structs behind every capsule handed out
        self.exports = 0

    def _capsule(self):
        address = (self.data.ctypes.data if isinstance(self.data, np.ndarray) else self.data)
        tensor = DLTensor(address, DLDevice(*self.device), self.ndim, self.dtype,
                          C.cast(self.shape, C.POINTER(C.c_int64)) if self.shape else None,
                          C.cast(self.strides, C.POINTER(C.c_int64)) if self.strides else None,
                          self.byte_offset)
        if self.versioned:
            managed = DLManagedTensorVersioned(1, 0, None, None, 0, tensor)
            name = _VERSIONED_NAME
        else:
            managed = DLManagedTensor(tensor, None, None)
            name = _LEGACY_NAME
        self.kept.append(managed)
        return _capsule_new(C.addressof(managed), name, None)

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        if max_version is not None and not self.versioned:
            raise TypeError("a producer from before DLPack 1.0 takes no max_version")
        self.exports += 1
        if self.one_capsule:  # hands out one capsule, whoever asks
            if not hasattr(self, "_the_capsule"):
                self._the_capsule = self._capsule()
            return self._the_capsule
        return self._capsule()

    def __dlpack_device__(self):
        return self.announced


class WithoutDevice(Producer):
    """A producer without __dlpack_device__ (taken for host memory)."""

    def __getattribute__(self, name):
        if name == "__dlpack_device__":
            raise AttributeError(name)
        return super().__getattribute__(name)


def floats(shape=(64, 96), dtype=np.float32):
    rng = np.random.default_rng(7)
    return np.cumsum(rng.standard_normal(int(np.prod(shape)))).astype(dtype).reshape(shape)


VERSIONS = [pytest.param(True, id="versioned"), pytest.param(False, id="legacy")]
# Every way a host array comes in: compressed (both functions and a Compressor), and written as
# out= of a decompression (the function and a Compressor).
def intake_calls(frame, shape):
    kept = ndzip.Compressor(np.float32, shape)
    return [
        ("compress", lambda p: ndzip.compress(p)),
        ("compress_raw", lambda p: ndzip.compress_raw(p)),
        ("Compressor.compress", lambda p: kept.compress(p)),
        ("decompress(out=)", lambda p: ndzip.decompress(frame, out=p)),
        ("Compressor.decompress(out=)", lambda p: kept.decompress(frame, out=p)),
    ]


@pytest.fixture(scope="module")
def frame():
    return ndzip.compress(floats())


@pytest.mark.parametrize("versioned", VERSIONS)
def test_honest_producer_round_trips(versioned, frame):
    # The harness itself: a capsule over real memory gives NumPy's bytes and is written in place.
    a = floats()
    produced = Producer(a, a.shape, versioned=versioned)
    assert ndzip.compress(produced) == ndzip.compress(a)
    assert produced.exports == 1
    target = np.zeros_like(a)
    ndzip.decompress(frame, out=Producer(target, a.shape, versioned=versioned))
    assert np.array_equal(target.view(np.uint32), a.view(np.uint32))


@pytest.mark.parametrize("versioned", VERSIONS)
@pytest.mark.parametrize("case,error,message", [
    # Row 2: the shape copied before ndim was looked at (SIGSEGV).
    (dict(shape=None, ndim=2), ValueError, "ndim 2 but a null shape pointer"),
    (dict(shape=(64, 96), ndim=2_000_000_000), ValueError, "ndim 2000000000"),
    # Row 7: ndim -1 was "cannot create std::vector larger than max_size()".
    (dict(shape=(64, 96), ndim=-1), ValueError, "ndim -1"),
    # Row 4: a null data pointer with 6144 items (compressed uninitialised memory; out= wrote a
    # fresh array, not the caller's).
    (dict(data=None), ValueError, "null data pointer for 6144 items"),
    (dict(data=None, byte_offset=4096), ValueError, "null data pointer"),
    # Row 5: float bits 33-39 and 65-71 were taken as float32 and float64.
    (dict(bits=33), TypeError, "dtype code 2 with 33 bits"),
    (dict(bits=39), TypeError, "dtype code 2 with 39 bits"),
    (dict(bits=65), TypeError, "dtype code 2 with 65 bits"),
    (dict(bits=71), TypeError, "dtype code 2 with 71 bits"),
    # Row 7: bits 8 was NumPy's "'f1' not understood"; lanes 2 "type code 2, not floats".
    (dict(bits=8), TypeError, "dtype code 2 with 8 bits"),
    (dict(lanes=2), TypeError, "2 lanes"),
    (dict(code=9), TypeError, "dtype code 9"),
    # Extents and strides that no memory can hold.
    (dict(shape=(64, -96)), ValueError, "extent -96 in dimension 1"),
    (dict(shape=(2**40, 2**40)), ValueError, "more items than an address space holds"),
    (dict(strides=(2**62, 1)), ValueError, "stride 4611686018427387904"),
    (dict(data=NOWHERE + 2), ValueError, "not aligned"),
    (dict(data=2**64 - 64), ValueError, "past the end of the address space"),
])
def test_dlpack_description_refused(versioned, case, error, message, frame):
    args = dict(data=NOWHERE, shape=(64, 96))
    args.update(case)
    data, shape = args.pop("data"), args.pop("shape")
    for name, call in intake_calls(frame, (64, 96)):
        with pytest.raises(error, match=message):
            call(Producer(data, shape, versioned=versioned, **args))


@pytest.mark.parametrize("versioned", VERSIONS)
def test_capsule_device_must_be_the_announced_one(versioned, frame):
    # Row 3: the capsule's own device was never read, its CUDA address read as host memory.
    for name, call in intake_calls(frame, (64, 96)):
        lying = Producer(NOWHERE, (64, 96), device=(CUDA, 0), announced=(CPU, 0),
                         versioned=versioned)
        with pytest.raises(ValueError, match="lies in CUDA device 0, but its __dlpack_device__"
                                             r"\(\) says CPU memory"):
            call(lying)
        silent = WithoutDevice(NOWHERE, (64, 96), device=(CUDA, 0), versioned=versioned)
        with pytest.raises(ValueError, match="CUDA device 0, but it has no __dlpack_device__"):
            call(silent)


@pytest.mark.parametrize("versioned", VERSIONS)
@pytest.mark.skipif("cuda" in ndzip.backends(), reason="a CUDA build reads CUDA arrays")
def test_device_path_of_a_cpu_build_checks_the_description_first(versioned):
    # Row 2, through the CUDA path of a CPU build (SIGSEGV before the refusal of the backend).
    for case, message in [(dict(shape=None, ndim=3), "null shape pointer"),
                          (dict(shape=(8,), ndim=2_000_000_000), "ndim 2000000000"),
                          (dict(shape=(8,), bits=33), "33 bits")]:
        shape = case.pop("shape")
        device_array = Producer(NOWHERE, shape, device=(CUDA, 0), versioned=versioned, **case)
        with pytest.raises((ValueError, TypeError), match=message):
            ndzip.compress_raw(device_array)
        with pytest.raises((ValueError, TypeError), match=message):
            ndzip.compress(device_array)
    # Another device than announced, on the device path.
    moved = Producer(NOWHERE, (8,), device=(CUDA, 1), announced=(CUDA, 0), versioned=versioned)
    with pytest.raises(ValueError, match="CUDA device 1, but its __dlpack_device__"):
        ndzip.compress_raw(moved)


@pytest.mark.parametrize("versioned", VERSIONS)
def test_one_export_per_call(versioned):
    # Row 6: the one-shot functions exported twice ("capsule named 'used_dltensor'").
    a = floats((30, 50))
    for function in (ndzip.compress, ndzip.compress_raw):
        produced = Producer(a, a.shape, versioned=versioned, one_capsule=True)
        assert function(produced) == function(a)
        assert produced.exports == 1


@pytest.mark.parametrize("announced", ["cuda", (1,), ("one", 0), (1, -1), (2**40, 0), None,
                                       [1, 0], (True, 0)])
def test_dlpack_device_checked(announced):
    # Row 7: pybind11's "Unable to cast Python instance ..." before.
    with pytest.raises(TypeError, match=r"__dlpack_device__\(\) returned .*, not a \(device "
                                        r"type, device id\) pair of integers"):
        ndzip.compress(Producer(NOWHERE, (64,), announced=announced))


class CudaArray:
    """__cuda_array_interface__ as a producer gives it: `interface` the dict (or anything)."""

    def __init__(self, interface):
        self.interface = interface

    @property
    def __cuda_array_interface__(self):
        return self.interface


def interface(**fields):
    d = {"shape": (64, 64), "typestr": "<f4", "data": (0x7f0000000000, False), "version": 3,
         "strides": None, "stream": None}
    d.update(fields)
    return {k: v for k, v in d.items() if v is not KeyError}


@pytest.mark.parametrize("fields,error,message", [
    # Row 1: items of 0 bytes with strides: SIGFPE (bytes % item) before any check.
    (dict(typestr="|V0", strides=(0, 0)), ValueError, "items of 0 bytes"),
    (dict(typestr="|S0", strides=(4, 4)), ValueError, "items of 0 bytes"),
    (dict(typestr="<U0"), ValueError, "items of 0 bytes"),
    (dict(typestr="zz9"), TypeError, "'zz9', which is no NumPy type string"),
    (dict(typestr=4), TypeError, r"\['typestr'\] is 4, not a string"),
    # Row 7: pybind11's cast errors, a bare KeyError, a wrapped-around extent.
    (dict(data=(-1, False)), ValueError, r"\['data'\] is \(-1, False\), not \(address, "
                                         r"read_only\)"),
    (dict(data=(2**64, False)), ValueError, r"\['data'\]"),
    (dict(data=(0x7f0000000000,)), ValueError, r"\['data'\]"),
    (dict(data=0x7f0000000000), ValueError, r"\['data'\]"),
    (dict(data=KeyError), ValueError, "has no 'data'"),
    (dict(shape=KeyError), ValueError, "has no 'shape'"),
    (dict(typestr=KeyError), ValueError, "has no 'typestr'"),
    (dict(shape=(-64, 64)), ValueError, "extent -64 in dimension 0"),
    (dict(shape=[64, 64]), TypeError, r"\['shape'\] is \[64, 64\], not a tuple"),
    (dict(shape=(64, "64")), TypeError, "not a tuple of integers"),
    (dict(strides=(4,)), ValueError, r"\['strides'\] is \(4,\), not None or a tuple of 2"),
    (dict(strides=(256, 4.0)), ValueError, r"\['strides'\]"),
    (dict(stream=-5), ValueError, r"\['stream'\] is -5, not None or a stream handle"),
    (dict(stream="default"), ValueError, r"\['stream'\]"),
    (dict(data=(0, False)), ValueError, "null data pointer for 4096 items"),
    (dict(data=(0x7f0000000002, False)), ValueError, "not aligned"),
])
def test_cuda_array_interface_refused(fields, error, message):
    for call in (ndzip.compress, ndzip.compress_raw):
        with pytest.raises(error, match=message):
            call(CudaArray(interface(**fields)))


def test_cuda_array_interface_not_a_dict():
    with pytest.raises(TypeError, match="__cuda_array_interface__ is <class 'list'>, not a dict"):
        ndzip.compress(CudaArray([("shape", (4,))]))


def test_cuda_array_interface_error_propagates():
    # Row 7: a property that raised was taken for no interface (hasattr swallows its error).
    class Broken:
        @property
        def __cuda_array_interface__(self):
            raise RuntimeError("the producer's own failure")

    with pytest.raises(RuntimeError, match="the producer's own failure"):
        ndzip.compress(Broken())
    with pytest.raises(RuntimeError, match="the producer's own failure"):
        ndzip.decompress(ndzip.compress(floats()), out=Broken())


def test_stream_handles_checked():
    class ProtocolStream:
        def __init__(self, given):
            self.given = given

        def __cuda_stream__(self):
            return self.given

    class PtrStream:
        ptr = -5

    array = CudaArray(interface())
    with pytest.raises(ValueError, match="no stream handle"):
        ndzip.compress(array, stream=ProtocolStream((0, -5)))
    with pytest.raises(TypeError, match="not a stream handle"):
        ndzip.compress(array, stream=ProtocolStream((0, "x")))
    with pytest.raises(TypeError, match=r"__cuda_stream__\(\) returned 7"):
        ndzip.compress(array, stream=ProtocolStream(7))
    with pytest.raises(ValueError, match=r"\.ptr is no stream handle"):
        ndzip.compress(array, stream=PtrStream())
    with pytest.raises(ValueError, match="no stream handle"):
        ndzip.compress(array, stream=2**64)


def test_mode_must_be_a_name():
    # Row 7: pybind11's "incompatible function arguments" for mode=1 (ndzip.h5.filter too).
    a = floats((16, 16))
    for call in (lambda: ndzip.compress(a, mode=1), lambda: ndzip.compress_raw(a, mode=None),
                 lambda: ndzip.Compressor(np.float32, (16, 16), mode=b"ndzip"),
                 lambda: ndzip.size_bound(np.float32, (16, 16), mode=1)):
        with pytest.raises(TypeError, match="mode is a name"):
            call()
    with pytest.raises(TypeError, match="mode is a name"):
        ndzip.h5.filter(mode=1)


@pytest.mark.skipif("cuda" in ndzip.backends(), reason="this build has CUDA")
def test_a_cpu_build_asked_for_cuda():
    # Row 7: a GPU backend's name told apart from a typo ("unknown or disabled" before).
    with pytest.raises(ValueError, match="backend 'cuda' is not in this build.*this build has"):
        ndzip.compress(floats((16, 16)), backend="cuda")
