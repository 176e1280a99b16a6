# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Reading part of an array (issue #67): ndzip.decompress(frame, region=) and ndzip.open()'s
FrameArray against NumPy indexing of the full decode, bit for bit, on frames of every version
(1: compress; 2: high_ratio; 3: folded; 4: chunked, written by the CLI with --slab-rows), every
indexing form (random boxes, corners, single elements, the whole array, steps, negatives,
Ellipsis, None), out=, and hostile input: indices out of range or of too many axes, damaged
slabs (failing only the boxes that touch them), damaged headers, truncated files, files that are
no frame, buffers of every kind, and a FrameArray used after close(). The run-time C++ call
behind them (ndzip::decompress_frame_region of ndzip/dynamic.hpp) is tested through
ndzip._ndzip._decompress_region: staging of misaligned output, overlap with the frame, boxes
outside the array."""

import os
import subprocess
import threading

import numpy as np
import pytest

import ndzip
from ndzip import _ndzip

UINT = {np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


def smooth(dtype, shape, seed=0):
    """A smooth field with noise in the last bits, and a few special values."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.arange(n, dtype=np.float64) for n in shape], indexing="ij")
    values = sum(np.sin(g / (7.0 + 3 * a)) for a, g in enumerate(grids))
    values = (values + 1e-3 * rng.standard_normal(shape)).astype(dtype)
    flat = values.reshape(-1)
    flat[rng.choice(flat.size, size=3, replace=False)] = [np.nan, np.inf, -0.0]
    return values


def same(got, want):
    """Bit for bit, of the same shape, dtype and kind (a NumPy scalar for a scalar)."""
    if np.ndim(want) == 0:
        return type(got) is type(want) and np.asarray(got).view(UINT[want.dtype]) == np.asarray(
            want).view(UINT[want.dtype])
    return (isinstance(got, np.ndarray) and got.shape == want.shape and got.dtype == want.dtype
            and np.array_equal(got.view(UINT[want.dtype]), want.view(UINT[want.dtype])))


def cli():
    path = os.environ.get("NDZIP_CLI")
    if not path:
        pytest.skip("NDZIP_CLI not set (built without the tool)")
    return path


def cli_writes_chunked_frames():
    path = os.environ.get("NDZIP_CLI")
    if not path:
        return False
    shown = subprocess.run([path, "compress", "--help"], capture_output=True, text=True)
    return "--slab-rows" in shown.stdout + shown.stderr


def chunked_frame(tmp_path, array, slab_rows, mode="ndzip"):
    """The chunked frame (version 4) the CLI writes of `array` in slabs of `slab_rows` rows."""
    cli()
    if not cli_writes_chunked_frames():
        pytest.skip("the CLI has no --slab-rows yet (it does not write chunked frames): the "
                    "chunked cases wait for it")
    source = tmp_path / f"a{slab_rows}{mode}.npy"
    np.save(source, array)
    out = tmp_path / (source.name + ".ndz")
    subprocess.run([cli(), "--slab-rows", str(slab_rows), "--mode", mode, "-f", "-o", str(out),
                    str(source)], check=True, capture_output=True)
    frame = out.read_bytes()
    assert frame[4] == 4, "the CLI wrote no chunked frame"
    return frame


# (id, dtype, shape, how): how is a mode for compress(), or ("chunked", slab_rows, mode).
CASES = [
    ("v1-3d", np.float32, (48, 40, 50), "ndzip"),
    ("v1-2d", np.float64, (130, 67), "ndzip"),
    ("v1-1d", np.float32, (5000,), "ndzip"),
    ("v2-3d", np.float64, (48, 40, 50), "high_ratio"),
    ("v3-3d-to-1d", np.float32, (40, 7, 30), "ndzip"),
    ("v3-2d-to-1d", np.float64, (300, 20), "ndzip"),
    ("v3-high-ratio", np.float32, (40, 7, 30), "high_ratio"),
    ("v4-3d", np.float32, (50, 40, 33), ("chunked", 7, "ndzip")),
    ("v4-3d-unfolded", np.float32, (60, 48, 48), ("chunked", 20, "ndzip")),
    ("v4-2d-high-ratio", np.float64, (300, 70), ("chunked", 64, "high_ratio")),
    ("v4-1d", np.float32, (20000,), ("chunked", 4096, "ndzip")),
    ("v4-thin-slabs-folded", np.float32, (40, 7, 30), ("chunked", 9, "ndzip")),
    ("v4-one-row-slabs", np.float64, (6, 20, 17), ("chunked", 1, "ndzip")),
]
VERSIONS = {"v1": 1, "v2": 2, "v3": 3, "v4": 4}


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    made = {}

    def make(case):
        if case not in made:
            name, dtype, shape, how = next(c for c in CASES if c[0] == case)
            array = smooth(dtype, shape, seed=len(made))
            if isinstance(how, tuple):
                frame = chunked_frame(tmp_path_factory.mktemp(name), array, how[1], how[2])
            else:
                frame = ndzip.compress(array, mode=how)
            assert frame[4] == VERSIONS[name[:2]], (name, frame[4])
            made[case] = (array, frame)
        return made[case]

    return make


CASE_IDS = [c[0] for c in CASES]


def indexes(shape, seed):
    """Every indexing form for an array of `shape`."""
    rng = np.random.default_rng(seed)
    d = len(shape)
    forms = [Ellipsis, (), 0, -1, slice(None), slice(None, None, -1), slice(1, None, 3),
             slice(-3, None), slice(None, -2, 2), slice(100000), slice(-100000, 2),
             (Ellipsis, -1), (None, 0), (0, None), (slice(None), None)]
    forms.append(tuple(0 for _ in shape))                       # the first element
    forms.append(tuple(n - 1 for n in shape))                   # the last
    forms.append(tuple(-1 for _ in shape))
    forms.append(tuple(slice(n - 2, None) for n in shape))      # the far corner
    forms.append(tuple(slice(None, 2) for n in shape))          # the near corner
    forms.append(tuple(slice(None, None, -2) for n in shape))   # reversed, every other
    forms.append(tuple(slice(n - 1, 0, -3) for n in shape))
    for _ in range(12):                                         # random boxes
        box = []
        for n in shape:
            a, b = sorted(rng.integers(0, n + 1, size=2))
            box.append(slice(int(a), int(b) + 1))
        forms.append(tuple(box))
    for _ in range(6):                                          # single elements, negative too
        forms.append(tuple(int(rng.integers(-n, n)) for n in shape))
    for _ in range(6):                                          # mixed ints, slices, steps
        entry = []
        for n in shape:
            kind = rng.integers(0, 3)
            if kind == 0:
                entry.append(int(rng.integers(-n, n)))
            else:
                step = int(rng.choice([-5, -2, -1, 1, 2, 3, 7]))
                entry.append(slice(int(rng.integers(-n, n)), None, step))
        forms.append(tuple(entry))
    if d > 1:
        forms += [(Ellipsis, 1), (slice(None), -1), (1, Ellipsis, slice(2, 5)),
                  (np.int64(1), np.int32(-1))]
    return forms


@pytest.mark.parametrize("case", CASE_IDS)
def test_every_index_is_numpys(frames, case):
    array, frame = frames(case)
    full = ndzip.decompress(frame)
    assert same(full, array)
    fa = ndzip.open(frame)
    assert fa.shape == array.shape and fa.dtype == array.dtype and fa.ndim == array.ndim
    assert fa.size == array.size and fa.nbytes == array.nbytes and len(fa) == len(array)
    assert fa.version == VERSIONS[case[:2]]
    for index in indexes(array.shape, seed=len(case)):
        want = full[index]
        assert same(fa[index], want), index
        assert same(ndzip.decompress(frame, region=index), want), index


@pytest.mark.parametrize("case", ["v1-3d", "v2-3d", "v3-3d-to-1d", "v4-3d", "v4-2d-high-ratio"])
def test_paths_and_buffers_of_every_kind(frames, case, tmp_path):
    array, frame = frames(case)
    path = tmp_path / "f.ndz"
    path.write_bytes(frame)
    index = (slice(2, -3), Ellipsis, slice(None, None, 2))
    want = array[index]
    sources = [str(path), path, frame, bytearray(frame), memoryview(frame),
               np.frombuffer(frame, np.uint8),
               memoryview(b"x" + frame)[1:]]  # misaligned: the streams copied to decode
    for source in sources:
        with ndzip.open(source) as fa:
            assert same(fa[index], want), type(source)
            assert same(np.asarray(fa), array)
            assert same(fa.read(index), want)
    # backend= reaches the decode (every backend, the same values).
    for backend in ndzip.backends():
        assert same(ndzip.open(path, backend=backend)[index], want)
        assert same(ndzip.decompress(frame, region=index, backend=backend), want)


def test_frame_information(frames):
    array, frame = frames("v1-3d")
    fa = ndzip.open(frame)
    assert (fa.version, fa.mode, fa.slab_rows, fa.slab_count) == (1, "ndzip", None, None)
    assert fa.info == ndzip.frame_info(frame) and fa.info["version"] == 1
    assert "shape=(48, 40, 50), dtype=float32, version=1, mode='ndzip'" in repr(fa)
    _, folded = frames("v3-high-ratio")
    assert ndzip.frame_info(folded)["version"] == 3
    assert (ndzip.open(folded).version, ndzip.open(folded).mode) == (3, "high_ratio")


def test_chunked_frame_information(frames):
    _, chunked = frames("v4-2d-high-ratio")
    info = ndzip.frame_info(chunked)
    assert (info["version"], info["slab_rows"], info["slab_count"], info["mode"]) == (
        4, 64, 5, "high_ratio")
    fa = ndzip.open(chunked)
    assert (fa.slab_rows, fa.slab_count, fa.mode) == (64, 5, "high_ratio")
    assert "slab_rows=64, slab_count=5" in repr(fa)


def test_array_protocol(frames):
    array, frame = frames("v2-3d")
    fa = ndzip.open(frame)
    assert same(np.asarray(fa), array)
    assert same(fa.__array__(), array)
    assert same(np.asarray(fa, dtype=np.float32), array.astype(np.float32))
    with pytest.raises(ValueError, match="copy=False"):
        fa.__array__(copy=False)
    assert same(np.array(fa) + 0, array + 0)
    rows = list(fa)  # iteration through __getitem__, ending at IndexError
    assert len(rows) == len(array) and same(rows[-1], array[-1])


@pytest.mark.parametrize("case", ["v1-3d", "v3-3d-to-1d", "v4-3d"])
def test_region_into_out(frames, case):
    array, frame = frames(case)
    index = (slice(3, 9), 2)
    out = np.full(array[index].shape, -1, array.dtype)
    assert ndzip.decompress(frame, region=index, out=out) is out
    assert same(out, array[index])
    # The box's own shape (the integer's axis kept) is the same memory: taken too.
    box = np.zeros((6, 1) + array.shape[2:], array.dtype)
    ndzip.decompress(frame, region=index, out=box)
    assert same(box.reshape(out.shape), array[index])
    # Steps: the box decoded beside out, stepped into it.
    stepped = (slice(None, None, -2), slice(1, None, 3))
    out = np.zeros(array[stepped].shape, array.dtype)
    assert ndzip.open(frame).read(stepped, out=out) is out
    assert same(out, array[stepped])
    # Refused before anything is written.
    for wrong, error in [(np.zeros((5,) + array.shape[2:], array.dtype), ValueError),
                         (np.zeros(array[index].shape, np.float64 if array.dtype == np.float32
                                   else np.float32), TypeError),
                         (np.zeros(array[index].shape + (2,), array.dtype)[..., 0], ValueError)]:
        before = wrong.copy()
        with pytest.raises(error):
            ndzip.decompress(frame, region=index, out=wrong)
        assert np.array_equal(wrong, before)
    read_only = np.zeros(array[index].shape, array.dtype)
    read_only.setflags(write=False)
    with pytest.raises(ValueError, match="not writable"):
        ndzip.decompress(frame, region=index, out=read_only)
    # Empty selections: out checked, nothing decoded.
    empty = np.zeros((0,) + array.shape[1:], array.dtype)
    assert ndzip.decompress(frame, region=slice(4, 4), out=empty) is empty


@pytest.mark.parametrize("case", ["v1-3d", "v4-3d"])
def test_indices_out_of_range_and_too_many_axes(frames, case):
    array, frame = frames(case)
    fa = ndzip.open(frame)
    n0 = array.shape[0]
    for index in [n0, -n0 - 1, (0, array.shape[1]), (0, 0, -array.shape[2] - 1)]:
        with pytest.raises(IndexError, match="out of bounds"):
            fa[index]
        with pytest.raises(IndexError, match="out of bounds"):
            ndzip.decompress(frame, region=index)
        with pytest.raises(IndexError):
            array[index]  # NumPy agrees
    for index in [(0, 0, 0, 0), (Ellipsis, 0, 0, 0, 0), (slice(None),) * 4]:
        with pytest.raises(IndexError, match="too many indices"):
            fa[index]
        with pytest.raises(IndexError, match="too many indices"):
            ndzip.decompress(frame, region=index)
    with pytest.raises(IndexError, match="single ellipsis"):
        fa[..., 0, ...]
    for index in [[0, 1], np.array([1, 2]), True, 1.5, "a", (0, np.bool_(False))]:
        with pytest.raises(IndexError, match="basic indexing"):
            fa[index]


def test_empty_selections_decode_nothing(frames):
    array, frame = frames("v1-3d")
    damaged = bytearray(frame)
    damaged[200] ^= 0x40  # the stream: every decode fails its checksum
    fa = ndzip.open(bytes(damaged))
    with pytest.raises(ndzip.StreamError, match="checksum"):
        fa[0]
    for index in [slice(5, 5), (slice(None), slice(3, 1)), (0, slice(0, 0), 1),
                  (Ellipsis, slice(-1, 0)), slice(100, 200)]:
        got = fa[index]
        assert isinstance(got, np.ndarray) and got.shape == array[index].shape
        assert got.dtype == array.dtype


def slab_offsets(frame):
    """The chunked frame's index: each slab's offset (the trailer's last 32 bytes follow it)."""
    count = ndzip.frame_info(frame)["slab_count"]
    index = frame[len(frame) - 32 - 8 * count:len(frame) - 32]
    return [int.from_bytes(index[8 * s:8 * s + 8], "little") for s in range(count)]


@pytest.mark.parametrize("case", ["v4-3d", "v4-3d-unfolded", "v4-2d-high-ratio"])
def test_a_damaged_slab_fails_only_the_boxes_that_touch_it(frames, case):
    array, frame = frames(case)
    rows = ndzip.frame_info(frame)["slab_rows"]
    offsets = slab_offsets(frame)
    k = 1
    damaged = bytearray(frame)
    damaged[offsets[k] + 32 + 5] ^= 0x10  # inside slab k's stream (its head is 32 bytes)
    fa = ndzip.open(bytes(damaged))  # header, index and slab heads intact
    first, end = k * rows, min((k + 1) * rows, array.shape[0])
    for index in [first, end - 1, slice(first - 1, first + 1), slice(None), Ellipsis,
                  (slice(None, None, -1), 0)]:
        with pytest.raises(ndzip.StreamError, match=f"slab {k}"):
            fa[index]
    with pytest.raises(ndzip.StreamError, match=f"slab {k}"):
        np.asarray(fa)
    with pytest.raises(ndzip.StreamError, match=f"slab {k}"):
        ndzip.decompress(bytes(damaged))
    for index in [slice(0, first), slice(end, None), first - 1, end, (slice(end, None, 3), 1)]:
        assert same(fa[index], array[index]), index
    # A step decodes the box around the rows it takes: one over slab k fails, whether or not
    # a row it takes lies there.
    with pytest.raises(ndzip.StreamError, match=f"slab {k}"):
        fa[first - 1::rows + 1]


def test_damaged_headers_are_refused_on_open(frames, tmp_path):
    for case in ["v1-3d", "v2-3d", "v3-3d-to-1d"]:
        _, frame = frames(case)
        for at in [0, 4, 5, 6, 8, 33]:  # magic, version, dtype, rank, extent, stream length
            damaged = bytearray(frame)
            damaged[at] ^= 0x21
            with pytest.raises(ndzip.StreamError):
                ndzip.open(bytes(damaged))
            path = tmp_path / "damaged.ndz"
            path.write_bytes(damaged)
            with pytest.raises(ValueError):
                ndzip.open(path)
            with pytest.raises(ndzip.StreamError):
                ndzip.decompress(bytes(damaged), region=0)


def test_damaged_chunked_parts_are_refused_on_open(frames):
    _, frame = frames("v4-3d")
    offsets = slab_offsets(frame)
    for at in [0, 8, 20, 60, offsets[1] + 2, len(frame) - 40, len(frame) - 3]:
        # header, its extents and checksum; a slab's head; the index; the trailer
        damaged = bytearray(frame)
        damaged[at] ^= 0x08
        with pytest.raises(ndzip.StreamError):
            ndzip.open(bytes(damaged))


@pytest.mark.parametrize("case", ["v1-3d", "v3-3d-to-1d", "v4-3d"])
def test_truncated_files(frames, case, tmp_path):
    _, frame = frames(case)
    path = tmp_path / "cut.ndz"
    for size in [len(frame) - 1, len(frame) - 40, len(frame) // 2, 47, 10, 3]:
        path.write_bytes(frame[:size])
        with pytest.raises(ndzip.StreamError):
            ndzip.open(path)
        with pytest.raises(ndzip.StreamError):
            ndzip.open(frame[:size])
    path.write_bytes(frame + b"\0")  # a byte after the frame
    with pytest.raises(ndzip.StreamError):
        ndzip.open(path)


def test_paths_that_are_not_frames(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a frame at all, but long enough to hold a frame's header " * 4)
    with pytest.raises(ndzip.StreamError):
        ndzip.open(text)
    empty = tmp_path / "empty.ndz"
    empty.write_bytes(b"")
    with pytest.raises(ndzip.StreamError, match="empty"):
        ndzip.open(empty)
    npy = tmp_path / "a.npy"
    np.save(npy, np.zeros(100, np.float32))
    with pytest.raises(ndzip.StreamError):
        ndzip.open(npy)
    with pytest.raises(FileNotFoundError):
        ndzip.open(tmp_path / "missing.ndz")
    with pytest.raises(IsADirectoryError):
        ndzip.open(tmp_path)
    with pytest.raises(TypeError):
        ndzip.open(12345)
    with pytest.raises(ndzip.StreamError):
        ndzip.open(b"")


def test_closed_frame_arrays(frames, tmp_path):
    array, frame = frames("v1-3d")
    path = tmp_path / "f.ndz"
    path.write_bytes(frame)
    fa = ndzip.open(path)
    assert not fa.closed and same(fa[1], array[1])
    fa.close()
    assert fa.closed and repr(fa).startswith("<closed ndzip.FrameArray(")
    for use in [lambda: fa[0], lambda: np.asarray(fa), lambda: fa.read(0), lambda: fa[5:5]]:
        with pytest.raises(ValueError, match="closed"):
            use()
    fa.close()  # twice: nothing more
    assert fa.shape == array.shape  # what the header said stays
    with ndzip.open(path) as kept:
        assert same(kept[-1, -1], array[-1, -1])
    assert kept.closed
    with pytest.raises(ValueError, match="closed"):
        kept[0]
    with ndzip.open(frame) as in_memory:
        pass
    with pytest.raises(ValueError, match="closed"):
        in_memory[0]


def test_threads_read_one_frame_array(frames, tmp_path):
    array, frame = frames("v1-3d")
    path = tmp_path / "f.ndz"
    path.write_bytes(frame)
    fa = ndzip.open(path, backend="serial")  # Kokkos 3 runs OpenMP on the importing thread only
    failures = []

    def read(k):
        try:
            for _ in range(3):
                if not same(fa[k, ::2], array[k, ::2]):
                    failures.append(k)
        except Exception as e:  # noqa: BLE001 (reported below)
            failures.append(repr(e))

    threads = [threading.Thread(target=read, args=(k,)) for k in range(0, 48, 6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_whole_chunked_frames_decompress(frames):
    array, frame = frames("v4-3d")
    assert same(ndzip.decompress(frame), array)
    out = np.empty_like(array)
    assert ndzip.decompress(frame, out=out) is out and same(out, array)
    with pytest.raises(ValueError):
        ndzip.decompress(frame, out=np.empty(array.shape[1:], array.dtype))


def test_the_run_time_call(frames):
    """ndzip::decompress_frame_region of ndzip/dynamic.hpp, through the extension's binding."""
    array, frame = frames("v1-3d")
    box = _ndzip._decompress_region(frame, [3, 4, 5], [2, 7, 9])
    assert same(box, array[3:5, 4:11, 5:14])
    # Misaligned output: decoded through staging.
    raw = np.zeros(2 * 7 * 9 * 4 + 1, np.uint8)
    out = np.frombuffer(raw.data, np.float32, offset=1, count=2 * 7 * 9).reshape(2, 7, 9)
    assert not out.flags.aligned
    _ndzip._decompress_region(frame, [3, 4, 5], [2, 7, 9], out=out)
    assert same(out.copy(), array[3:5, 4:11, 5:14])
    # Output over the frame itself.
    held = bytearray(frame + bytes(8))
    over = np.frombuffer(held, np.float32, count=2 * 7 * 9).reshape(2, 7, 9)
    with pytest.raises(ValueError, match="overlap"):
        _ndzip._decompress_region(held, [3, 4, 5], [2, 7, 9], out=over)
    for start, count, match in [([0, 0, 0], [0, 1, 1], "empty"),
                                ([47, 0, 0], [2, 1, 1], "does not lie inside"),
                                ([0, 0], [1, 1], "a region of 3"),
                                ([0, 0, 0], [1, 1], "a region of 3")]:
        with pytest.raises(ValueError, match=match):
            _ndzip._decompress_region(frame, start, count)
    with pytest.raises(ValueError, match="backend"):
        _ndzip._decompress_region(frame, [0, 0, 0], [1, 1, 1], backend="nonesuch")
