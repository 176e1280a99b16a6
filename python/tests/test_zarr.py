# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The numcodecs codec: registered on import, Zarr arrays of float32/float64 with chunks of any
shape written and read back bit for bit, its configuration round trip, and a damaged chunk
refused."""

import json
import threading

import numcodecs
import numpy as np
import pytest
import zarr

import ndzip
import ndzip.numcodecs
from ndzip.numcodecs import Ndzip


def field(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    values = np.cumsum(rng.standard_normal(int(np.prod(shape)))).astype(dtype).reshape(shape)
    values.flat[::97] = np.nan
    values.flat[5::101] = -0.0
    return values


def same_bits(a, b):
    unsigned = np.uint32 if a.dtype == np.float32 else np.uint64
    return a.shape == b.shape and np.array_equal(a.view(unsigned), b.view(unsigned))


def test_registered_on_import():
    codec = numcodecs.get_codec({"id": "ndzip"})
    assert isinstance(codec, Ndzip)
    assert codec.get_config() == {"id": "ndzip", "mode": "ndzip", "folding": "automatic"}
    again = numcodecs.get_codec(Ndzip(mode="high_ratio").get_config())
    assert (again.backend, again.mode) == (None, "high_ratio")
    config = again.get_config()
    config.pop("id")
    assert Ndzip.from_config(config) == again
    with pytest.raises(ValueError, match="unknown mode"):
        Ndzip(mode="fast")


def test_config_describes_the_data_not_the_machine(tmp_path):
    """The backend is a preference of the process that runs the codec: not in get_config(), so
    not in .zarray; an unknown one is refused at construction, naming those of this build."""
    serial = Ndzip(backend="serial", mode="high_ratio")
    assert serial.backend == "serial"
    assert serial.get_config() == {"id": "ndzip", "mode": "high_ratio", "folding": "automatic"}
    assert serial == Ndzip(mode="high_ratio")  # the same bytes either way
    with pytest.raises(ValueError, match="unknown or disabled backend 'no-such'") as refused:
        Ndzip(backend="no-such")
    for name in ndzip.backends():
        assert name in str(refused.value)
    with pytest.raises(TypeError, match="backend"):
        Ndzip(backend=3)
    path = tmp_path / "b.zarr"
    z = zarr.open(str(path), mode="w", shape=(50, 60), chunks=(32, 32), dtype=np.float32,
                  compressor=serial)
    z[...] = field(np.float32, (50, 60))
    stored = json.loads((path / ".zarray").read_text())["compressor"]
    assert stored == {"id": "ndzip", "mode": "high_ratio", "folding": "automatic"}


@pytest.mark.parametrize("backend", ["cuda", "no-such-backend", "serial", None])
@pytest.mark.parametrize("mode", ["ndzip", "high_ratio"])
def test_configs_of_the_previous_version_are_read(tmp_path, backend, mode):
    """The previous version stored "backend" in .zarray: such arrays are read on any build, on
    the reading process's default backend (the stored one described the writer's machine)."""
    old = {"id": "ndzip", "backend": backend, "mode": mode}
    data = field(np.float64, (40, 30, 20))
    path = tmp_path / "old.zarr"
    z = zarr.open(str(path), mode="w", shape=data.shape, chunks=(16, 16, 16), dtype=np.float64,
                  compressor=Ndzip(mode=mode))
    z[...] = data
    meta = json.loads((path / ".zarray").read_text())
    meta["compressor"] = old
    (path / ".zarray").write_text(json.dumps(meta))
    back = zarr.open(str(path), mode="r")
    assert same_bits(back[...], data)
    assert isinstance(back.compressor, Ndzip)
    assert (back.compressor.backend, back.compressor.mode) == (None, mode)
    assert back.compressor.get_config() == {"id": "ndzip", "mode": mode, "folding": "automatic"}


LAYOUTS = [
    ((1000,), (100,)),
    ((10007,), (4096,)),  # an edge chunk that the array does not fill
    ((300, 200), (256, 64)),
    ((100, 120), (64, 64)),  # issue 44's reproduction (F order came back transposed)
    ((37, 41), (3, 5)),  # chunks far smaller than a hypercube
    ((70, 40, 50), (32, 32, 32)),
    ((20, 21, 22), (7, 21, 5)),
    ((20, 20, 20), (20, 20, 20)),
]


@pytest.mark.parametrize("shape, chunks", LAYOUTS)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("mode", ["ndzip", "high_ratio"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zarr_array_round_trip(tmp_path, dtype, shape, chunks, order, mode):
    """Every Zarr layout (C and F order) reads back bit for bit: whole, a region across chunks,
    one whole chunk (Zarr decodes it straight into the result, an `out` of the array's order),
    and after a partial write (Zarr decodes the chunk, changes it and encodes it again)."""
    data = field(dtype, shape)
    path = str(tmp_path / "a.zarr")
    z = zarr.open(path, mode="w", shape=shape, chunks=chunks, dtype=dtype, order=order,
                  compressor=Ndzip(mode=mode))
    z[...] = data
    back = zarr.open(path, mode="r")
    assert isinstance(back.compressor, Ndzip) and back.compressor.mode == mode
    assert back.order == order
    assert same_bits(back[...], data)
    region = tuple(slice(1, min(n, 7)) for n in shape)
    assert same_bits(back[region], data[region])
    first_chunk = tuple(slice(0, c) for c in chunks)
    assert same_bits(back[first_chunk], data[first_chunk])
    patch = tuple(slice(n // 3, n // 3 + 2) for n in shape)
    data[patch] = -1.5
    z[patch] = -1.5
    assert same_bits(zarr.open(path, mode="r")[...], data)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 48), (16, 12, 10), (1, 40), (40, 1)])
def test_codec_records_a_chunk_in_its_memory_order(dtype, shape):
    """The codec's rule (its docstring): the frame holds the chunk's memory, so that an
    F-contiguous chunk's frame is its transpose (extents reversed), decode() returns an array
    whose bytes are the chunk's, and decode(buf, out) fills `out` in out's own memory order:
    an array of the chunk whose memory has the frame's shape (a chunk of either order into an
    out of its order; into one of the other order where the shapes coincide, as (1, 40) and
    its transpose do), or raw memory of as many bytes."""
    codec = Ndzip()
    values = field(dtype, shape)
    for chunk in (np.ascontiguousarray(values), np.asfortranarray(values)):
        memory = chunk.tobytes(order="A")
        frame = codec.encode(chunk)
        info = ndzip.frame_info(frame)
        transposed = chunk.flags.f_contiguous and not chunk.flags.c_contiguous
        assert info["shape"] == (shape[::-1] if transposed else shape)
        assert codec.decode(frame).tobytes() == memory
        for out in (np.empty(shape, dtype, order="C"), np.empty(shape, dtype, order="F"),
                    np.empty(chunk.nbytes, np.uint8), bytearray(chunk.nbytes)):
            typed = isinstance(out, np.ndarray) and out.dtype == dtype
            out_transposed = typed and out.flags.f_contiguous and not out.flags.c_contiguous
            if typed and (shape[::-1] if out_transposed else shape) != info["shape"]:
                with pytest.raises(ValueError, match="not this chunk's frame"):
                    codec.decode(frame, out=out)
                continue
            assert codec.decode(frame, out=out) is out
            assert bytes(np.asarray(out).tobytes(order="A")) == memory
    # A chunk that is not contiguous at all has no memory order: its values in C (index) order.
    strided = field(dtype, (2 * shape[0], shape[-1]))[::2]
    assert codec.decode(codec.encode(strided)).tobytes() == strided.tobytes(order="C")
    # Without out, the frame's own dtype and shape, for the caller to compare with its own.
    frame = codec.encode(values)
    assert codec.decode(frame).dtype == dtype and codec.decode(frame).shape == shape
    # Raw memory of another byte count, or an out that is not contiguous, is refused before
    # anything is written.
    with pytest.raises(ValueError, match="bytes"):
        codec.decode(frame, out=np.empty(values.nbytes + 1, np.uint8))
    with pytest.raises(ValueError, match="contiguous"):
        codec.decode(frame, out=np.empty(shape[:-1] + (2 * shape[-1],), dtype)[..., ::2])


def other_chunks(dtype, shape):
    """(dtype, shape) of chunks with as many bytes as one of `dtype` and `shape`, but another
    dtype or shape: the extents swapped, a flat chunk, the other float type."""
    other = np.float64 if dtype == np.float32 else np.float32
    ratio = np.dtype(other).itemsize / np.dtype(dtype).itemsize
    flat = (int(np.prod(shape)),)
    return [(dtype, shape[::-1]), (dtype, flat), (other, flat[:-1] + (int(flat[-1] / ratio),))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_decode_into_out_refuses_a_frame_of_another_chunk(dtype):
    """A frame whose dtype or shape is not out's chunk (an F-contiguous out: whose memory is not
    the frame's shape) is refused, naming both, and out is left as it was; raw memory (one-byte
    items) can only be checked for its byte count."""
    codec = Ndzip()
    shape = (64, 128)
    for order in ("C", "F"):
        memory = shape if order == "C" else shape[::-1]
        for frame_dtype, frame_shape in other_chunks(dtype, memory):
            frame = codec.encode(field(frame_dtype, frame_shape))
            out = np.full(shape, 7, dtype, order=order)
            with pytest.raises(ValueError, match="not this chunk's frame") as refused:
                codec.decode(frame, out=out)
            frame_described = f"{np.dtype(frame_dtype)} {'x'.join(map(str, frame_shape))}"
            assert frame_described in str(refused.value)
            assert f"{np.dtype(dtype)} 64x128" in str(refused.value)
            assert np.all(out == 7)
            raw = np.zeros(out.nbytes, np.uint8)
            assert codec.decode(frame, out=raw) is raw  # as many bytes: all it can check
    # Integer or byte-swapped items of the same width are not the chunk's dtype either.
    frame = codec.encode(field(dtype, shape))
    width = np.dtype(dtype).itemsize
    for wrong in (np.dtype(f"<i{width}"), np.dtype(dtype).newbyteorder()):
        with pytest.raises(ValueError, match="not this chunk's frame"):
            codec.decode(frame, out=np.empty(shape, wrong))


def chunk_of(dtype, shape, order="C"):
    """A stored chunk (the frame bytes) of a Zarr array of one chunk of `dtype` and `shape`."""
    store = zarr.MemoryStore()
    z = zarr.open(store, mode="w", shape=shape, chunks=shape, dtype=dtype, order=order,
                  compressor=Ndzip())
    z[...] = field(dtype, shape)
    return store["0" + ".0" * (len(shape) - 1)]


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_chunk_of_another_array_is_refused(tmp_path, order):
    """A chunk file swapped for one of another array with as many bytes (the float32 64x128
    chunk's memory transposed, a float32 8192 chunk, a float64 64x64 one) is refused when Zarr
    reads it into its result, naming both. Zarr decodes with out here: each chunk spans the
    array's faster dimension (the slower one in F order), so its place in the result is
    contiguous. The other chunk still reads."""
    shape, chunks = ((128, 128), (64, 128)) if order == "C" else ((64, 256), (64, 128))
    memory = chunks if order == "C" else chunks[::-1]  # what the chunk's frame records
    data = field(np.float32, shape)
    store = zarr.DirectoryStore(str(tmp_path / "a.zarr"))
    zarr.open(store, mode="w", shape=shape, chunks=chunks, dtype=np.float32, order=order,
              compressor=Ndzip())[...] = data
    swapped = "0.0"
    kept_region = (slice(64, 128), slice(None)) if order == "C" else (slice(None), slice(128, 256))
    pristine = store[swapped]
    for dtype, other in [(np.float32, memory[::-1]), (np.float32, (8192,)),
                         (np.float64, (64, 64))]:
        store[swapped] = chunk_of(dtype, other)
        z = zarr.open(store, mode="r")
        with pytest.raises(ValueError, match="not this chunk's frame") as refused:
            z[...]
        assert f"the frame holds {np.dtype(dtype)} {'x'.join(map(str, other))}" in str(
            refused.value)
        assert "out is float32 64x128" in str(refused.value)
        assert same_bits(z[kept_region], data[kept_region])
    store[swapped] = pristine
    assert same_bits(zarr.open(store, mode="r")[...], data)


@pytest.mark.parametrize("edit", ["chunks", "dtype", "dtype int32", "dtype big-endian"])
def test_an_edited_zarray_is_refused(tmp_path, edit):
    """A .zarray whose chunks or dtype were changed to another of as many bytes (float32
    64x128 described as 128x64, as float64 64x64, as int32 or big-endian float32) describes
    chunks that are not the frames': reading the array is refused, naming both."""
    path = tmp_path / "e.zarr"
    zarr.open(str(path), mode="w", shape=(64, 128), chunks=(64, 128), dtype=np.float32,
              compressor=Ndzip())[...] = field(np.float32, (64, 128))
    meta = json.loads((path / ".zarray").read_text())
    meta.update({"chunks": {"shape": [128, 64], "chunks": [128, 64]},
                 "dtype": {"shape": [64, 64], "chunks": [64, 64], "dtype": "<f8"},
                 "dtype int32": {"dtype": "<i4"},
                 "dtype big-endian": {"dtype": ">f4"}}[edit])
    (path / ".zarray").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="not this chunk's frame") as refused:
        zarr.open(str(path), mode="r")[...]
    assert "the frame holds float32 64x128" in str(refused.value)


def test_chunk_is_a_frame_and_damage_is_refused(tmp_path):
    data = field(np.float32, (64, 64))
    store = zarr.DirectoryStore(str(tmp_path / "d.zarr"))
    z = zarr.open(store, mode="w", shape=data.shape, chunks=(32, 32), dtype=np.float32,
                  compressor=Ndzip())
    z[...] = data
    key = "0.1"
    chunk = bytearray(store[key])
    assert ndzip.frame_info(chunk)["shape"] == (32, 32)
    chunk[len(chunk) // 2] ^= 0x01
    store[key] = bytes(chunk)
    with pytest.raises(ndzip.StreamError, match="checksum mismatch"):
        zarr.open(store, mode="r")[...]


def test_other_dtypes_are_refused(tmp_path):
    z = zarr.open(str(tmp_path / "i.zarr"), mode="w", shape=(10,), chunks=(5,), dtype=np.int32,
                  compressor=Ndzip())
    with pytest.raises(TypeError, match="float32 and float64"):
        z[...] = np.arange(10, dtype=np.int32)


def test_zarr_on_another_thread(tmp_path):
    """A codec without a backend runs on the default backend, or where that cannot run on the
    calling thread (Kokkos 3's OpenMP off the thread that imported ndzip) on the first backend
    that can: Zarr works from any thread (thread pools, dask). A backend asked for is kept to,
    and one that cannot run on the calling thread raises RuntimeError."""
    data = field(np.float32, (90, 70))
    path = str(tmp_path / "t.zarr")
    z = zarr.open(path, mode="w", shape=data.shape, chunks=(32, 32), dtype=np.float32,
                  order="F", compressor=Ndzip())
    result = {}

    def work():
        try:
            z[...] = data
            result["read"] = zarr.open(path, mode="r")[...]
            if "openmp" in ndzip.backends():
                Ndzip(backend="openmp").encode(data)
            result["openmp"] = "ran"
        except RuntimeError as error:
            result["openmp"] = error

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert same_bits(result["read"], data)
    if "openmp" in ndzip.backends() and ndzip._ndzip._openmp_initial_thread_only:
        assert isinstance(result["openmp"], RuntimeError)
        assert "backend='serial'" in str(result["openmp"])
    else:
        assert result["openmp"] == "ran"


def test_default_chunks_are_folded(tmp_path):
    """xarray's default Zarr chunks of ocean_levitus_temp (zarr.util.guess_chunks), (5, 90, 180),
    hold no whole hypercube: each chunk's frame codes it folded, (81000,), and records that; the
    array reads back bit-exact, in fewer bytes than unfolded; the configuration says the folding
    it was written with."""
    data = field(np.float32, (20, 180, 360))
    sizes = {}
    for folding in ["automatic", "none"]:
        path = tmp_path / f"{folding}.zarr"
        z = zarr.open(str(path), mode="w", shape=data.shape, chunks=(5, 90, 180),
                      dtype=np.float32, compressor=Ndzip(folding=folding))
        z[...] = data
        assert same_bits(zarr.open(str(path), mode="r")[...], data)
        chunk_files = [p for p in path.iterdir() if not p.name.startswith(".")]
        assert len(chunk_files) == 16
        coded = {ndzip.frame_info(p.read_bytes())["coded_shape"] for p in chunk_files}
        assert coded == ({(81000,)} if folding == "automatic" else {(5, 90, 180)})
        stored = json.loads((path / ".zarray").read_text())["compressor"]
        assert stored == {"id": "ndzip", "mode": "ndzip", "folding": folding}
        sizes[folding] = sum(p.stat().st_size for p in chunk_files)
    assert sizes["automatic"] < 0.8 * sizes["none"], sizes
    with pytest.raises(ValueError, match="unknown folding"):
        Ndzip(folding="auto")
