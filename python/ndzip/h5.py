# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""h5py and the project's HDF5 filter plugin (plugins/hdf5), the way hdf5plugin does it:

    import h5py, ndzip.h5
    with h5py.File("out.h5", "w") as f:
        f.create_dataset("t", data=array, chunks=(64, 64, 64), **ndzip.h5.filter())

filter() makes the plugin's folder known to HDF5 in this process (h5py.h5pl) and returns the
create_dataset arguments; plugin_path() is the folder for HDF5_PLUGIN_PATH, for other programs
(h5dump, h5repack, a C application).
"""

import os

from . import _build_config, _ndzip


def filter_id():
    """The plugin's HDF5 filter id (310 unless the build chose another)."""
    _require_plugin()
    return _build_config.HDF5_FILTER_ID


def plugin_path():
    """The folder holding the plugin (libh5ndzip.so), for HDF5_PLUGIN_PATH."""
    _require_plugin()
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, _build_config.HDF5_PLUGIN_FROM_PACKAGE))


def register():
    """Adds plugin_path() to the folders HDF5 searches for filters in this process (once)."""
    import h5py

    path = plugin_path()
    known = [h5py.h5pl.get(i).decode() for i in range(h5py.h5pl.size())]
    if path not in known:
        h5py.h5pl.append(path.encode())


def filter(checksum=True, high_ratio=False, mode=None):
    """The compression= and compression_opts= arguments of h5py.Group.create_dataset for the
    ndzip filter: each chunk checksummed (XXH3-64, checked on read) unless checksum is False, in
    the stream of `mode` (one of ndzip.modes; "ndzip" by default; high_ratio=True is the same as
    mode="high_ratio"). Registers the plugin's folder first."""
    if mode is None:
        mode = "high_ratio" if high_ratio else "ndzip"
    elif high_ratio and mode != "high_ratio":
        raise ValueError(
            f"ndzip.h5.filter: high_ratio=True and mode={mode!r} contradict each other")
    code = _ndzip._mode_code(mode)  # ValueError for a name that is not a mode
    register()
    return {
        "compression": filter_id(),
        "compression_opts": (int(bool(checksum)), code),
    }


def _require_plugin():
    if not _build_config.HDF5_FILTER_ID:
        raise RuntimeError(
            "ndzip.h5: this build of ndzip-kokkos has no HDF5 filter plugin (it needs HDF5's C "
            "library and a shared Kokkos at build time)"
        )
