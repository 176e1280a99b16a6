# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The ndzip module: bit-exact round trips of float32/float64 arrays of 1 to 3 dimensions with
special values, frames and bare streams exchanged with the CLI both ways, decoding into `out`,
every refusal (dtype, rank, `out`, damaged or truncated data, unknown backend or mode), and the
GIL released while the codec runs."""

import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import ndzip

SHAPES = [(5000,), (4096 * 3 + 17,), (130, 67), (64, 64), (33, 18, 20), (16, 16, 16)]
DTYPES = [np.float32, np.float64]
UINT = {np.float32: np.uint32, np.float64: np.uint64}


def specials(dtype, shape, seed=0):
    """A smooth field salted with NaNs of several payloads, infinities, signed zeros and
    denormals."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    values = np.cumsum(rng.standard_normal(n)).astype(dtype)
    bits = values.view(UINT[dtype])
    if dtype == np.float32:
        odd = [0x7FC00001, 0xFFC12345, 0x7F800001, 0x00000001, 0x80000003, 0x007FFFFF]
    else:
        odd = [0x7FF8000000000001, 0xFFF0000000ABCDEF, 0x0000000000000001, 0x800FFFFFFFFFFFFF]
    odd += [np.array(np.inf, dtype).view(UINT[dtype]), np.array(-np.inf, dtype).view(UINT[dtype]),
            np.array(-0.0, dtype).view(UINT[dtype]), 0]
    where = rng.choice(n, size=min(n, 40 * len(odd)), replace=False)
    bits[where] = np.resize(np.array(odd, dtype=UINT[dtype]), where.size)
    return bits.view(dtype).reshape(shape)


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(
        a.view(UINT[a.dtype.type]), b.view(UINT[b.dtype.type]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_round_trip_is_bit_exact(dtype, shape):
    array = specials(dtype, shape)
    frame = ndzip.compress(array)
    assert isinstance(frame, bytes)
    assert same_bits(ndzip.decompress(frame), array)
    info = ndzip.frame_info(frame)
    assert info["dtype"] == np.dtype(dtype) and info["shape"] == shape and info["mode"] == "ndzip"
    assert info["stream_bytes"] == len(frame) - 48
    stream = ndzip.compress_raw(array)
    assert stream == frame[48:]
    assert same_bits(ndzip.decompress_raw(stream, dtype, shape), array)


@pytest.mark.parametrize("backend", ndzip.backends())
def test_every_backend_writes_the_same_stream(backend):
    array = specials(np.float64, (40, 50, 37), seed=3)
    assert ndzip.compress(array, backend=backend) == ndzip.compress(array, backend="serial")
    assert same_bits(ndzip.decompress(ndzip.compress(array), backend=backend), array)


def test_high_ratio_mode():
    array = specials(np.float32, (64, 64, 64), seed=4)
    frame = ndzip.compress(array, mode="high_ratio")
    assert ndzip.frame_info(frame)["mode"] == "high_ratio"
    assert len(frame) < len(ndzip.compress(array))
    assert same_bits(ndzip.decompress(frame), array)
    stream = ndzip.compress_raw(array, mode="high_ratio")
    decoded = ndzip.decompress_raw(stream, np.float32, array.shape, mode="high_ratio")
    assert same_bits(decoded, array)


def test_buffers_of_every_kind_are_read():
    array = specials(np.float32, (100, 30))
    frame = ndzip.compress(array)
    for buffer in (bytearray(frame), memoryview(frame), np.frombuffer(frame, np.uint8)):
        assert same_bits(ndzip.decompress(buffer), array)
    # A frame one byte off an aligned address is copied, not misread.
    shifted = bytearray(len(frame) + 1)
    shifted[1:] = frame
    assert same_bits(ndzip.decompress(memoryview(shifted)[1:]), array)


def test_non_contiguous_input_is_compressed_as_indexed():
    base = specials(np.float64, (60, 80))
    for array in (np.asfortranarray(base), base[::2, 1::3], base.T, base[::-1]):
        assert same_bits(ndzip.decompress(ndzip.compress(array)), np.ascontiguousarray(array))


def test_decompress_into_out():
    array = specials(np.float64, (33, 18, 20))
    frame = ndzip.compress(array)
    out = np.empty_like(array)
    assert ndzip.decompress(frame, out=out) is out
    assert same_bits(out, array)
    with pytest.raises(TypeError, match="dtype"):
        ndzip.decompress(frame, out=np.empty(array.shape, np.float32))
    with pytest.raises(ValueError, match="shape"):
        ndzip.decompress(frame, out=np.empty((33, 18, 21)))
    with pytest.raises(ValueError, match="C-contiguous"):
        ndzip.decompress(frame, out=np.empty((20, 18, 33)).T)
    readonly = np.empty_like(array)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        ndzip.decompress(frame, out=readonly)
    # Decoding into the frame's own memory is refused, not a silent corruption.
    buffer = bytearray(frame) + bytearray(array.nbytes)
    target = np.frombuffer(buffer, np.float64, count=array.size).reshape(array.shape)
    with pytest.raises(ValueError, match="overlap"):
        ndzip.decompress(memoryview(buffer)[: len(frame)], out=target)


def test_refused_arrays():
    with pytest.raises(TypeError, match="float32 and float64"):
        ndzip.compress(np.zeros(10, np.int32))
    with pytest.raises(TypeError, match="float32 and float64"):
        ndzip.compress(np.zeros(10, np.float16))
    with pytest.raises(TypeError, match="byte order"):
        ndzip.compress(np.zeros(10, ">f4"))
    with pytest.raises(ValueError, match="1 to 3 dimensions"):
        ndzip.compress(np.zeros((2, 2, 2, 2), np.float32))
    with pytest.raises(ValueError, match="1 to 3 dimensions"):
        ndzip.compress(np.float32(1.0))
    with pytest.raises(ValueError, match="empty"):
        ndzip.compress(np.zeros((0, 4), np.float32))
    with pytest.raises(ValueError, match="unknown or disabled backend 'no-such'"):
        ndzip.compress(np.zeros(10, np.float32), backend="no-such")
    with pytest.raises(ValueError, match="unknown mode"):
        ndzip.compress(np.zeros(10, np.float32), mode="fast")
    with pytest.raises(TypeError, match="float32 and float64"):
        ndzip.decompress_raw(b"", np.int16, (4,))
    with pytest.raises(ValueError, match="1 to 3 extents"):
        ndzip.decompress_raw(b"", np.float32, ())


def test_damaged_data_raises_stream_error():
    assert issubclass(ndzip.StreamError, ValueError)
    array = specials(np.float32, (130, 67))
    frame = bytearray(ndzip.compress(array))
    damaged = bytearray(frame)
    damaged[len(frame) // 2] ^= 0x10
    with pytest.raises(ndzip.StreamError, match="checksum mismatch"):
        ndzip.decompress(damaged)
    with pytest.raises(ndzip.StreamError, match="truncated"):
        ndzip.decompress(frame[:-1])
    with pytest.raises(ndzip.StreamError, match="trailing"):
        ndzip.decompress(frame + b"\0")
    with pytest.raises(ndzip.StreamError, match="NDZK"):
        ndzip.decompress(b"not a frame at all, but long enough to hold a header")
    with pytest.raises(ndzip.StreamError):
        ndzip.decompress(b"")
    # A header that announces a huge array: refused before anything of that size is allocated.
    huge = bytearray(frame[:48])
    huge[8:16] = (1 << 40).to_bytes(8, "little")
    with pytest.raises(ndzip.StreamError):
        ndzip.decompress(huge)
    stream = ndzip.compress_raw(array)
    with pytest.raises(ndzip.StreamError, match="shorter than the smallest"):
        ndzip.decompress_raw(stream[:100], np.float32, array.shape)
    with pytest.raises(ndzip.StreamError, match="ends after"):
        ndzip.decompress_raw(stream + b"\0" * 8, np.float32, array.shape)
    # A shape the stream is inconsistent with (no hypercube instead of two) is refused; one with
    # the same hypercubes and border size (67 x 130) would decode into other values: a bare
    # stream records no shape, which is what frames are for.
    with pytest.raises(ndzip.StreamError):
        ndzip.decompress_raw(stream, np.float32, (10, 871))


def cli():
    path = os.environ.get("NDZIP_CLI")
    if not path:
        pytest.skip("NDZIP_CLI not set (built without the tool)")
    return path


def test_frames_and_streams_are_the_clis(tmp_path):
    tool = cli()
    array = specials(np.float64, (33, 18, 20), seed=7)
    raw = tmp_path / "a.f64"
    array.tofile(raw)
    # The CLI's frame is Python's, and each reads the other's.
    subprocess.run([tool, "-q", "-t", "double", "-n", "33x18x20", str(raw)], check=True)
    cli_frame = (tmp_path / "a.f64.ndz").read_bytes()
    assert cli_frame == ndzip.compress(array)
    assert same_bits(ndzip.decompress(cli_frame), array)
    py_frame = tmp_path / "p.ndz"
    py_frame.write_bytes(ndzip.compress(array))
    restored = subprocess.run([tool, "-d", "-c", str(py_frame)], check=True,
                              capture_output=True).stdout
    assert restored == array.tobytes()
    # Bare streams too.
    subprocess.run([tool, "-q", "--raw", "-t", "double", "-n", "33x18x20", "-o",
                    str(tmp_path / "a.raw"), str(raw)], check=True)
    assert (tmp_path / "a.raw").read_bytes() == ndzip.compress_raw(array)


def test_gil_is_released_while_compressing():
    """While a thread compresses a large array, the main thread keeps running Python: the
    longest pause it sees is far shorter than one compression (with the GIL held it would be
    the whole compression). Up to three tries, so that a machine busy with other tests does not
    fail it by scheduling alone; a held GIL fails every one."""
    array = specials(np.float32, (64, 1024, 1024), seed=1)  # 256 MiB
    start = time.perf_counter()
    ndzip.compress(array, backend="serial")
    one_call = time.perf_counter() - start
    pauses = []
    for _ in range(3):
        done = threading.Event()

        def work():
            ndzip.compress(array, backend="serial")
            done.set()

        worker = threading.Thread(target=work)
        worker.start()
        longest, last = 0.0, time.perf_counter()
        while not done.is_set():
            now = time.perf_counter()
            longest, last = max(longest, now - last), now
        worker.join()
        pauses.append(longest)
        if longest < one_call / 3:
            return
    pytest.fail(f"longest pauses {pauses} s, one call {one_call:.3f} s")


def test_threads_compress_concurrently():
    """Two threads on two arrays take less wall time than the same calls one after the other,
    where the library runs calls concurrently (Kokkos 4.4 and later) and there are two cores."""
    if ndzip._ndzip._serialises_calls:
        pytest.skip("this Kokkos (before 4.4) makes the library run one call at a time "
                    "(docs/ROBUSTNESS.md): the GIL is released, but calls still wait their turn")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core")
    arrays = [specials(np.float32, (32, 1024, 1024), seed=s) for s in (1, 2)]
    start = time.perf_counter()
    for a in arrays:
        ndzip.compress(a, backend="serial")
    serial = time.perf_counter() - start
    threads = [threading.Thread(target=ndzip.compress, args=(a,), kwargs={"backend": "serial"})
               for a in arrays]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.perf_counter() - start < 0.8 * serial


def out_buffers(nbytes):
    """Writable C-contiguous buffers of every kind that hold at least `nbytes` bytes."""
    words = nbytes // 8 + 3
    return {
        "bytearray": bytearray(nbytes),
        "uint8 array": np.zeros(nbytes + 5, np.uint8),
        "float32 array": np.zeros(nbytes // 4 + 7, np.float32),
        "float64 2-D array": np.zeros((words // 3 + 1, 3), np.float64),
        "int16 3-D array": np.zeros((2, 3, nbytes // 12 + 1), np.int16),
        "complex128 array": np.zeros(nbytes // 16 + 1, np.complex128),
        "memoryview cast('d')": memoryview(bytearray(8 * words)).cast("d"),
        "memoryview cast('i', 2-D)": memoryview(bytearray(8 * words)).cast("i", (words, 2)),
        "memoryview of a float32 array": memoryview(np.zeros(nbytes // 4 + 1, np.float32)),
    }


def test_compress_into_a_buffer_of_the_callers():
    array = specials(np.float32, (130, 67), seed=9)
    frame = ndzip.compress(array)
    bound = ndzip.size_bound(np.float32, array.shape)
    assert bound >= len(frame)
    assert bound == ndzip.size_bound(np.float32, array.shape, frame=False) + 48
    # Too small for this frame: refused, and nothing written.
    small = bytearray(b"\xa5" * (len(frame) - 1))
    with pytest.raises(ValueError, match="holds only"):
        ndzip.compress(array, out=small)
    assert small == bytearray(b"\xa5" * (len(frame) - 1))
    # Compressing into the array's own memory is refused.
    with pytest.raises(ValueError, match="overlap"):
        ndzip.compress(array, out=array.view(np.uint8).reshape(-1))


@pytest.mark.parametrize("kind", list(out_buffers(64)))
def test_out_gives_exactly_the_bytes_written(kind):
    """compress(out=) and the other writers into buffers return a memoryview of exactly the
    bytes written (format 'B', one dimension), over the start of `out`, whatever the buffer's
    item type and shape (before: a view of len(frame) items, the whole of a float32 array)."""
    array = specials(np.float32, (130, 67), seed=9)
    frame = ndzip.compress(array)
    stream = ndzip.compress_raw(array)
    kept = ndzip.Compressor(np.float32, array.shape)
    bound = ndzip.size_bound(np.float32, array.shape)
    writers = [(ndzip.compress, frame), (ndzip.compress_raw, stream),
               (kept.compress, frame), (kept.compress_raw, stream)]
    for write, expected in writers:
        out = out_buffers(bound)[kind]
        written = write(array, out=out)
        assert isinstance(written, memoryview)
        assert (written.format, written.ndim, written.itemsize) == ("B", 1, 1)
        assert written.nbytes == len(written) == len(expected)
        assert bytes(written) == expected
        assert written.readonly is False
        # The view lies over `out`: its first bytes are what was written.
        assert memoryview(out).cast("B")[: len(expected)].tobytes() == expected
    assert same_bits(ndzip.decompress(ndzip.compress(array, out=out_buffers(bound)[kind])), array)
    raw = ndzip.compress_raw(array, out=out_buffers(bound)[kind])
    assert same_bits(ndzip.decompress_raw(raw, np.float32, array.shape), array)
    assert same_bits(kept.decompress(kept.compress(array, out=out_buffers(bound)[kind])), array)


def test_out_that_cannot_be_written_is_refused():
    array = specials(np.float32, (130, 67), seed=9)
    bound = ndzip.size_bound(np.float32, array.shape)
    readonly = np.zeros(bound, np.uint8)
    readonly.flags.writeable = False
    strided = np.zeros(2 * bound, np.uint8)[::2]
    kept = ndzip.Compressor(np.float32, array.shape)
    for write in (ndzip.compress, ndzip.compress_raw, kept.compress, kept.compress_raw):
        for out in (bytes(bound), readonly, memoryview(bytearray(bound)).toreadonly()):
            with pytest.raises(ValueError, match="out is read-only"):
                write(array, out=out)
        for out in (strided, memoryview(bytearray(2 * bound))[::2]):
            with pytest.raises(ValueError, match="out is not C-contiguous"):
                write(array, out=out)
        with pytest.raises(TypeError, match="out is not a buffer"):
            write(array, out=[0] * bound)
    assert not strided.any()


def test_a_kept_compressor():
    array = specials(np.float64, (40, 50, 37), seed=11)
    codec = ndzip.Compressor(np.float64, array.shape, backend="serial")
    assert (codec.dtype, codec.shape, codec.backend, codec.mode) == (
        np.dtype(np.float64), (40, 50, 37), "serial", "ndzip")
    assert "float64" not in repr(codec) and "double 40x50x37" in repr(codec)
    frame_out = bytearray(codec.frame_size_bound)
    values_out = np.empty_like(array)
    for seed in range(3):  # one compressor, many arrays of its shape
        other = specials(np.float64, array.shape, seed=seed)
        frame = codec.compress(other, out=frame_out)
        assert bytes(frame) == ndzip.compress(other)
        codec.decompress(frame, out=values_out)
        assert same_bits(values_out, other)
        stream = codec.compress_raw(other)
        assert same_bits(codec.decompress_raw(stream), other)
    with pytest.raises(ValueError,
                       match="a double 40x50x38 array for a compressor of double 40x50x37"):
        codec.compress(np.zeros((40, 50, 38)))
    with pytest.raises(TypeError, match="compressor of double"):
        codec.compress(np.zeros(array.shape, np.float32))
    with pytest.raises(ndzip.StreamError, match="holds a double 40x50x38 array"):
        codec.decompress(ndzip.compress(np.zeros((40, 50, 38))))
    high = ndzip.Compressor("float32", (64, 64), mode="high_ratio")
    assert high.mode == "high_ratio" and high.dtype == np.float32
    with pytest.raises(ValueError, match="unknown mode"):
        ndzip.Compressor(np.float32, (4,), mode="fast")


def run_python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=os.environ)


def test_compressors_outliving_kokkos():
    """A Compressor alive at interpreter exit, whose memory Kokkos would refuse to release after
    its finalisation (an abort), and one used after Kokkos was finalised (RuntimeError)."""
    alive = run_python("import numpy as np, ndzip\n"
                       "keep = ndzip.Compressor(np.float64, (10, 10))\n"
                       "keep.compress(np.zeros((10, 10)))\n"
                       "keep.decompress(keep.compress(np.zeros((10, 10))))\n")
    assert alive.returncode == 0, alive.stderr
    after = run_python("import numpy as np, ndzip\n"
                       "keep = ndzip.Compressor(np.float32, (100,))\n"
                       "ndzip._ndzip._finalize()\n"
                       "try:\n"
                       "    keep.compress(np.ones(100, np.float32))\n"
                       "except RuntimeError as e:\n"
                       "    print('refused:', e)\n")
    assert after.returncode == 0 and "refused: ndzip: Kokkos has been finalised" in after.stdout, (
        after.stdout + after.stderr)


def on_thread(call):
    """call() on a new threading.Thread: its result, or its exception raised here."""
    result = {}

    def run():
        try:
            result["value"] = call()
        except BaseException as error:  # handed to the caller's thread
            result["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


def test_default_backend_is_the_same_on_every_thread():
    """The default backend is the library's (the first of backends()), fixed when ndzip is
    imported, on every thread (before: Serial on threads other than the one that first used
    the module, with Kokkos 3 and OpenMP)."""
    assert ndzip.default_backend() == ndzip.backends()[0]
    assert on_thread(ndzip.default_backend) == ndzip.default_backend()
    assert on_thread(lambda: ndzip.Compressor(np.float32, (10,), backend="serial").backend) == (
        "serial")


def test_first_use_on_another_thread_changes_nothing():
    """A fresh interpreter that imports ndzip and first uses it on a second thread: the main
    thread (the importing one) still runs every backend, and both threads name the same default
    (before: Kokkos was initialised on the second thread, and the main thread's default became
    Serial)."""
    probe = run_python(
        "import threading, numpy as np, ndzip\n"
        "seen = {}\n"
        "def first():\n"
        "    seen['thread'] = ndzip.default_backend()\n"
        "    ndzip.compress(np.zeros(100, np.float32), backend='serial')\n"
        "t = threading.Thread(target=first)\n"
        "t.start(); t.join()\n"
        "for b in ndzip.backends():\n"
        "    assert ndzip.decompress(ndzip.compress(np.ones(100), backend=b), backend=b).sum() "
        "== 100\n"
        "kept = ndzip.Compressor(np.float32, (9,))\n"
        "print(seen['thread'], ndzip.default_backend(), kept.backend)\n")
    assert probe.returncode == 0, probe.stderr
    default = ndzip.backends()[0]
    assert probe.stdout.split() == [default, default, default]


def test_a_backend_that_cannot_run_on_the_calling_thread():
    """Kokkos 3 runs OpenMP work only on the thread that initialised Kokkos (here: the one that
    imported ndzip). A call or Compressor on OpenMP from another thread raises RuntimeError
    saying so and what to do (before: ValueError, or a silent switch to Serial); Serial, and
    every backend with Kokkos 4, run on any thread, writing the same bytes."""
    array = specials(np.float32, (64, 64), seed=5)
    frame = ndzip.compress(array)
    assert on_thread(lambda: ndzip.compress(array, backend="serial")) == frame
    if "openmp" not in ndzip.backends():
        pytest.skip("built without OpenMP")
    kept = ndzip.Compressor(np.float32, array.shape, backend="openmp")  # on this thread
    if not ndzip._ndzip._openmp_initial_thread_only:
        assert on_thread(lambda: ndzip.compress(array, backend="openmp")) == frame
        assert on_thread(lambda: ndzip.compress_raw(array, backend="openmp")) == frame[48:]
        assert same_bits(on_thread(lambda: ndzip.decompress(frame, backend="openmp")), array)
        assert on_thread(lambda: kept.compress(array)) == frame
        assert same_bits(on_thread(lambda: kept.decompress(frame)), array)
        return
    calls = [lambda: ndzip.compress(array, backend="openmp"),
             lambda: ndzip.compress_raw(array, backend="openmp"),
             lambda: ndzip.decompress(frame, backend="openmp"),
             lambda: ndzip.Compressor(np.float32, array.shape, backend="openmp"),
             lambda: kept.compress(array),
             lambda: kept.decompress(frame)]
    if ndzip.default_backend() == "openmp":
        calls += [lambda: ndzip.compress(array), lambda: ndzip.decompress(frame),
                  lambda: ndzip.Compressor(np.float32, array.shape)]
    for call in calls:
        with pytest.raises(RuntimeError,
                           match=r"Kokkos 3 runs OpenMP work only on the thread that "
                                 r"initialised Kokkos.*backend='serial'"):
            on_thread(call)
    # The Compressor is unharmed, and still works on its own thread.
    assert kept.compress(array) == frame


def test_modes_are_named_once_for_the_whole_package():
    # The library's one list (ndzip/codec_mode.hpp), the default first; the CLI, the frame and
    # numcodecs spell them the same.
    assert ndzip.modes == ("ndzip", "high_ratio")
    data = np.arange(4096, dtype=np.float32).reshape(64, 64)
    for mode in ndzip.modes:
        frame = ndzip.compress(data, mode=mode)
        assert ndzip.frame_info(frame)["mode"] == mode
        assert ndzip.Compressor(np.float32, data.shape, mode=mode).mode == mode
    with pytest.raises(ValueError,
                       match=r"unknown mode 'high-ratio' \(use one of: ndzip, high_ratio\)"):
        ndzip.compress(data, mode="high-ratio")


def test_every_public_function_has_a_docstring():
    # Beyond the signature line pybind11 writes: what it does, for help() and IDEs (issue 63).
    def described(function):
        signature = re.compile(r"[\w.]+\(.*\)( -> .*)?")
        return any(line.strip() and not signature.fullmatch(line.strip())
                   for line in (function.__doc__ or "").splitlines())
    public = [getattr(ndzip, name) for name in ndzip.__all__
              if callable(getattr(ndzip, name)) and name != "__version__"]
    public += [getattr(ndzip.Compressor, name) for name in dir(ndzip.Compressor)
               if not name.startswith("_") and callable(getattr(ndzip.Compressor, name))]
    missing = [getattr(f, "__qualname__", getattr(f, "__name__", repr(f))) for f in public
               if not described(f)]
    assert not missing, f"no docstring: {missing}"


def test_bench_names_its_units(tmp_path):
    # python3 -m ndzip.bench on a one-file manifest: its table says what its numbers are.
    values = np.cumsum(np.ones((64, 64), np.float32), axis=1)
    values.tofile(tmp_path / "field.f32")
    (tmp_path / "manifest.csv").write_text("field.f32;float;64 64\n")
    result = subprocess.run([sys.executable, "-m", "ndzip.bench", str(tmp_path / "manifest.csv"),
                             "--repeats", "1", "--backend", "serial"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "GB/s of uncompressed bytes" in result.stdout
    assert "field.f32" in result.stdout
