# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The package's metadata as other tools find it, each in a fresh interpreter that never imported
ndzip: numcodecs' entry point for the codec "ndzip", so that Zarr reads an array written with it
without `import ndzip.numcodecs` (before: "ValueError: codec not available: 'ndzip'")."""

import os
import subprocess
import sys

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")


def fresh_python(code, **env):
    """Runs `code` in a new interpreter with this one's PYTHONPATH (the build tree's package)."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, **env}, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_entry_point_names_the_codec():
    out = fresh_python("import importlib.metadata as m, sys\n"
                       "eps = m.entry_points()\n"
                       "group = eps.select(group='numcodecs.codecs') if hasattr(eps, 'select') "
                       "else eps.get('numcodecs.codecs', [])\n"
                       "print([(e.name, e.value) for e in group if e.name == 'ndzip'])\n"
                       "print('ndzip' in sys.modules)")
    assert "('ndzip', 'ndzip.numcodecs:Ndzip')" in out
    assert out.splitlines()[-1] == "False"


def test_zarr_reads_ndzip_arrays_without_an_import(tmp_path):
    path = str(tmp_path / "t.zarr")
    values = np.cumsum(np.random.default_rng(1).standard_normal((40, 70)), axis=1,
                       dtype=np.float32)
    np.save(tmp_path / "values.npy", values)
    fresh_python("import numpy as np, zarr, ndzip.numcodecs\n"
                 f"v = np.load({str(tmp_path / 'values.npy')!r})\n"
                 f"z = zarr.open({path!r}, mode='w', shape=v.shape, chunks=(16, 64), "
                 "dtype='f4', compressor=ndzip.numcodecs.Ndzip())\n"
                 "z[:] = v\n")
    # The reader: zarr alone, as any tool of the user's would open it.
    fresh_python("import sys, numpy as np, zarr\n"
                 f"a = zarr.open({path!r}, mode='r')[:]\n"
                 f"v = np.load({str(tmp_path / 'values.npy')!r})\n"
                 "assert a.dtype == v.dtype and np.array_equal(a.view(np.uint32), "
                 "v.view(np.uint32))\n"
                 "assert 'ndzip.numcodecs' in sys.modules  # loaded through the entry point\n")
