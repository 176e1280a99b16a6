# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Folding from Python (docs/FORMAT.md, "Folding"): compress() codes an array with few values in
whole hypercubes as the grid its slowest dimensions merge into and its frame says so
(frame_info's coded_shape); decompress() reads frames of either folding; compress_raw never
folds; Compressor(folding=); coded_shape and suggest_chunks; ndzip.BorderWarning once per
shape and mode where the stream stays mostly raw, an error under a filter that says so."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ndzip


def smooth(dtype, shape):
    grids = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij")
    return np.sin(sum(grids)).astype(dtype)


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["ndzip", "high_ratio"])
def test_small_chunks_are_folded_and_read_back(dtype, mode):
    chunk = smooth(dtype, (5, 90, 180))  # xarray's default Zarr chunk of ocean_levitus_temp
    assert ndzip.coded_shape(chunk.shape) == (81000,)
    frame = ndzip.compress(chunk, mode=mode)
    info = ndzip.frame_info(frame)
    assert info["shape"] == (5, 90, 180) and info["coded_shape"] == (81000,)
    assert frame[4] == 3 and frame[7] == ndzip._ndzip._mode_code(mode) + 16
    assert same_bits(ndzip.decompress(frame), chunk)
    out = np.empty_like(chunk)
    ndzip.decompress(frame, out=out)
    assert same_bits(out, chunk)

    plain = ndzip.compress(chunk, mode=mode, folding="none")
    assert plain[4] == (1 if mode == "ndzip" else 2)
    assert ndzip.frame_info(plain)["coded_shape"] == (5, 90, 180)
    assert same_bits(ndzip.decompress(plain), chunk)
    if mode == "ndzip":  # unfolded, every value is raw
        assert len(frame) < 0.9 * len(plain)

    # The frame's stream is the bare stream of the folded grid; compress_raw never folds.
    assert frame[48:] == ndzip.compress_raw(chunk.reshape(81000), mode=mode)
    assert plain[48:] == ndzip.compress_raw(chunk, mode=mode)

    # A Compressor reads frames of either folding, and writes those of its own.
    codec = ndzip.Compressor(dtype, chunk.shape, mode=mode)
    assert (codec.folding, codec.coded_shape) == ("automatic", (81000,))
    assert bytes(codec.compress(chunk)) == frame
    for f in (frame, plain):
        assert same_bits(codec.decompress(f), chunk)
    unfolded = ndzip.Compressor(dtype, chunk.shape, mode=mode, folding="none")
    assert unfolded.coded_shape == chunk.shape
    assert bytes(unfolded.compress(chunk)) == plain
    assert same_bits(unfolded.decompress(frame), chunk)
    assert "folding='none'" in repr(unfolded)
    # The bound covers the larger of the two codings.
    assert len(frame) <= ndzip.size_bound(dtype, chunk.shape, mode=mode)
    assert codec.frame_size_bound == ndzip.size_bound(dtype, chunk.shape, mode=mode)


def test_what_is_not_folded():
    # At least 3/4 in hypercubes, or rank 1: as it is; no folding with a hypercube: as it is.
    for shape in [(64, 64), (16, 16, 20), (4095,), (2, 3, 5)]:
        assert ndzip.coded_shape(shape) == shape
        assert ndzip.frame_info(ndzip.compress(smooth(np.float32, shape)))["coded_shape"] == shape
    assert ndzip.coded_shape((3, 23, 90)) == (69, 90)  # h5py's chunks=True, a tie kept 2-D
    assert ndzip.coded_shape((5, 90, 180), folding="none") == (5, 90, 180)


def test_folding_is_checked():
    with pytest.raises(ValueError, match="unknown folding 'auto'"):
        ndzip.compress(np.zeros((5, 90, 180), np.float32), folding="auto")
    with pytest.raises(TypeError, match="folding is 'automatic' or 'none'"):
        ndzip.Compressor(np.float32, (5, 90), folding=True)
    with pytest.raises(TypeError):
        ndzip.compress_raw(np.zeros(10, np.float32), folding="none")  # raw streams never fold


def test_suggested_chunks():
    assert ndzip.suggest_chunks((2915,)) == (4096,)
    assert ndzip.suggest_chunks((38, 38)) == (64, 64)
    assert ndzip.suggest_chunks((38, 38), shape=(149, 149)) == (64, 64)
    assert ndzip.suggest_chunks((3, 20), shape=(3, 5000)) == (3, 1366)
    with pytest.raises(ValueError):
        ndzip.suggest_chunks((3, 20), shape=(3,))


def run_fresh(warning_filter, code):
    """`code` in a fresh interpreter (the warning is given once per process), with numpy as np
    and ndzip imported and warnings.`warning_filter` applied."""
    program = f"import warnings, numpy as np, ndzip\nwarnings.{warning_filter}\n{code}\n"
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120)


def test_border_warning_once_per_shape_with_a_shape_that_compresses():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        small = np.ones((30, 30), np.float32)  # 900 values: no hypercube however folded
        for _ in range(3):
            ndzip.compress(small)
        ndzip.compress_raw(small)  # the same shape and mode: not again
        ndzip.compress(np.ones((30, 31), np.float32), mode="high_ratio")
        ndzip.compress(np.ones((64, 64), np.float32))  # whole hypercubes: no warning
    border = [w for w in caught if issubclass(w.category, ndzip.BorderWarning)]
    assert len(border) == 2, [str(w.message) for w in border]
    assert "100% of each float32 (30, 30) array" in str(border[0].message)
    assert "Chunks of shape (64, 64) or larger" in str(border[0].message)
    assert issubclass(ndzip.BorderWarning, UserWarning)


def test_border_warning_names_folding_where_it_is_off():
    result = run_fresh("simplefilter('always')",
                       "ndzip.compress(np.ones((5, 90, 180), np.float32), folding='none')")
    assert result.returncode == 0, result.stderr
    assert "BorderWarning" in result.stderr
    assert "folding='automatic' (the default) would code it as (81000,)" in result.stderr


def test_high_ratio_codes_the_border_so_it_is_not_warned():
    # The high-ratio stream codes the border as a 1-D array: 5x90x180 unfolded is compressed.
    result = run_fresh(
        "simplefilter('error', ndzip.BorderWarning)",
        "ndzip.compress(np.ones((5, 90, 180), np.float32), mode='high_ratio', folding='none')")
    assert result.returncode == 0, result.stderr


def test_border_warning_as_an_error():
    result = run_fresh("simplefilter('error', ndzip.BorderWarning)",
                       "try:\n"
                       "    ndzip.compress(np.ones(1000, np.float64))\n"
                       "except ndzip.BorderWarning as e:\n"
                       "    print('raised:', e)")
    assert result.returncode == 0, result.stderr
    assert "raised: ndzip: 100% of each float64 (1000,) array" in result.stdout
