# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ndzip.h5: a dataset written with the project's HDF5 filter through ndzip.h5.filter() and read
back by h5py bit for bit, its filter as h5dump shows it, and plugin_path() for other programs."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import ndzip.h5

h5py = pytest.importorskip("h5py")

try:
    FILTER_ID = ndzip.h5.filter_id()
except RuntimeError:
    pytest.skip("built without the HDF5 filter plugin", allow_module_level=True)


def field(dtype, shape):
    """A smooth field, which compresses."""
    axes = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij")
    return (np.sin(sum(axes)) * 100).astype(dtype)


def test_plugin_path_holds_the_plugin():
    assert os.path.exists(os.path.join(ndzip.h5.plugin_path(), "libh5ndzip.so"))


@pytest.mark.parametrize("checksum, high_ratio", [(True, False), (False, False), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dataset_round_trip(tmp_path, dtype, checksum, high_ratio):
    data = field(dtype, (32, 64, 48))
    path = tmp_path / "d.h5"
    arguments = ndzip.h5.filter(checksum=checksum, high_ratio=high_ratio)
    assert arguments == {"compression": FILTER_ID,
                         "compression_opts": (int(checksum), int(high_ratio), 1)}
    with h5py.File(path, "w") as f:
        f.create_dataset("t", data=data, chunks=(16, 32, 48), **arguments)
    with h5py.File(path, "r") as f:
        d = f["t"]
        assert FILTER_ID in d._filters or str(FILTER_ID) in d._filters
        assert np.array_equal(d[...].view(np.uint8), data.view(np.uint8))
        assert d.id.get_storage_size() < data.nbytes


def test_filter_names_the_mode_as_the_rest_of_the_package():
    for mode in ndzip.modes:
        high_ratio = mode == "high_ratio"
        assert ndzip.h5.filter(mode=mode) == ndzip.h5.filter(high_ratio=high_ratio)
    assert ndzip.h5.filter(mode="high_ratio")["compression_opts"] == (1, 1, 1)
    assert ndzip.h5.filter(folding="none")["compression_opts"] == (1, 0, 0)
    with pytest.raises(ValueError, match="folding is 'automatic' or 'none'"):
        ndzip.h5.filter(folding="auto")
    with pytest.raises(ValueError, match="unknown mode 'high-ratio'"):
        ndzip.h5.filter(mode="high-ratio")
    with pytest.raises(ValueError, match="contradict"):
        ndzip.h5.filter(high_ratio=True, mode="ndzip")


def test_the_plugin_refuses_a_mode_code_it_does_not_know(tmp_path):
    with h5py.File(tmp_path / "d.h5", "w") as f:
        with pytest.raises(ValueError, match="the codec mode's code: 0 = ndzip, 1 = high_ratio"):
            f.create_dataset("t", data=field(np.float32, (16, 16, 16)), chunks=(8, 8, 8),
                             compression=FILTER_ID, compression_opts=(1, 2))


def test_h5dump_shows_the_filter(tmp_path):
    h5dump = os.environ.get("NDZIP_H5DUMP")
    if not h5dump:
        pytest.skip("no h5dump")
    data = field(np.float32, (8, 9))
    path = tmp_path / "s.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("small", data=data, chunks=(4, 9), **ndzip.h5.filter())
    env = dict(os.environ, HDF5_PLUGIN_PATH=ndzip.h5.plugin_path())
    out = subprocess.run([h5dump, "-p", "-d", "small", str(path)], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert "USER_DEFINED_FILTER" in out and f"FILTER_ID {FILTER_ID}" in out
    # The values h5dump decoded through the plugin are the array's.
    body = out[out.index("DATA {") + len("DATA {"):]
    body = re.sub(r"\(\d+(,\d+)*\):", " ", body[: body.index("}")])
    values = [float(x) for x in body.replace(",", " ").split()]
    assert np.allclose(values, data.ravel(), rtol=1e-5, atol=1e-5)


def fresh_python(code, cwd):
    """`code` in a new interpreter (this one's PYTHONPATH, no HDF5_PLUGIN_PATH); its status."""
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in sys.path if p)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("imports", ["import ndzip, h5py", "import h5py, ndzip"])
def test_a_fresh_h5py_reads_ndzip_datasets_after_import_ndzip(tmp_path, imports):
    data = field(np.float32, (40, 50, 30))
    np.save(tmp_path / "values.npy", data)
    with h5py.File(tmp_path / "d.h5", "w") as f:
        f.create_dataset("t", data=data, chunks=(20, 50, 30), **ndzip.h5.filter())
    read = (f"{imports}\nimport numpy as np\n"
            "with h5py.File('d.h5', 'r') as f:\n"
            "    assert np.array_equal(f['t'][...].view(np.uint32), "
            "np.load('values.npy').view(np.uint32))\n")
    result = fresh_python(read, tmp_path)
    assert result.returncode == 0, result.stderr
    # Without ndzip the plugin is not found: what the test above shows is ndzip's doing.
    bare = fresh_python(read.replace(", ndzip", "").replace("ndzip, ", ""), tmp_path)
    assert bare.returncode != 0 and "filter" in bare.stderr.lower()


@pytest.mark.parametrize("how", ["compression=", "**"])
@pytest.mark.parametrize("mode", ["ndzip", "high_ratio"])
def test_filter_object_as_hdf5plugin_has_them(tmp_path, how, mode):
    data = field(np.float64, (30, 64))
    codec = ndzip.h5.Ndzip(checksum=True, mode=mode)
    assert isinstance(codec, h5py.filters.FilterRefBase)
    assert dict(codec) == ndzip.h5.filter(checksum=True, mode=mode)
    assert repr(codec) == f"ndzip.h5.Ndzip(checksum=True, mode={mode!r}, folding='automatic')"
    assert dict(ndzip.h5.Ndzip(folding="none")) == ndzip.h5.filter(folding="none")
    with h5py.File(tmp_path / "d.h5", "w") as f:
        if how == "**":
            f.create_dataset("t", data=data, chunks=(15, 64), **codec)
        else:
            f.create_dataset("t", data=data, chunks=(15, 64), compression=codec)
    with h5py.File(tmp_path / "d.h5", "r") as f:
        plist = f["t"].id.get_create_plist()
        assert FILTER_ID in [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
        assert np.array_equal(f["t"][...].view(np.uint64), data.view(np.uint64))
    with pytest.raises(ValueError, match="unknown mode"):
        ndzip.h5.Ndzip(mode="fast")
