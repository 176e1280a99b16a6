# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""h5py and the project's HDF5 filter plugin (plugins/hdf5), the way hdf5plugin does it:

    import h5py, ndzip.h5
    with h5py.File("out.h5", "w") as f:
        f.create_dataset("t", data=array, chunks=(64, 64, 64), compression=ndzip.h5.Ndzip())
        f.create_dataset("u", data=array, chunks=(64, 64, 64), **ndzip.h5.Ndzip(mode="high_ratio"))

Reading needs nothing but `import ndzip` (before or after h5py): the package makes the plugin's
folder known to HDF5 in the process as h5py loads (h5py.h5pl), so ndzip datasets read like any
others. Ndzip(checksum=, mode=) is the filter as an object (h5py's FilterRefBase, usable as
compression= and **-expanded); filter() returns the same create_dataset arguments as a dict;
plugin_path() is the folder for HDF5_PLUGIN_PATH, for other programs (h5dump, h5repack, a C
application).
"""

import importlib.abc
import importlib.util
import os
import sys
import warnings

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


class _RegisterWhenH5pyLoads(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when h5py is first imported, registers the plugin right after h5py
    has loaded (an import of h5py.h5pl before that would run inside h5py's own import), then
    takes itself off sys.meta_path."""

    def find_spec(self, name, path=None, target=None):
        if name != "h5py":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            _register_quietly()

        spec.loader.exec_module = exec_module
        return spec


def _register_quietly():
    try:
        register()
    except Exception as error:  # reading ndzip datasets fails later, saying which filter
        warnings.warn(f"ndzip.h5: the HDF5 filter plugin could not be registered: {error}",
                      RuntimeWarning, stacklevel=2)


def _register_on_h5py_import():
    """What `import ndzip` does: HDF5 in this process finds the plugin from the moment h5py is
    loaded (at once if it is already). HDF5_PLUGIN_PATH is left alone: setting it would replace
    HDF5's default folders, where other filters (Blosc, zfp) lie."""
    if not _build_config.HDF5_FILTER_ID:
        return
    if "h5py" in sys.modules:
        _register_quietly()
    elif not any(isinstance(f, _RegisterWhenH5pyLoads) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterWhenH5pyLoads())


def _filter_class():
    import h5py.filters

    class Ndzip(h5py.filters.FilterRefBase):
        """The ndzip filter for h5py's create_dataset, as hdf5plugin's filters are: pass it as
        compression= or expand it with **. checksum: each chunk's XXH3-64 covers its stream
        (the parameters are covered either way); mode: one of ndzip.modes; folding:
        "automatic" (chunks with few values in whole hypercubes coded with their slowest
        dimensions merged, recorded in the dataset's parameters; ndzip.coded_shape) or "none".
        Registers the plugin's folder first."""

        filter_name = "ndzip"

        def __init__(self, checksum=True, mode="ndzip", folding="automatic"):
            self.filter_options = (int(bool(checksum)), _ndzip._mode_code(mode),
                                   _folding_code(folding))
            register()
            self.filter_id = filter_id()

        def __repr__(self):
            return (f"ndzip.h5.Ndzip(checksum={bool(self.filter_options[0])}, "
                    f"mode={_ndzip.modes[self.filter_options[1]]!r}, "
                    f"folding={'automatic' if self.filter_options[2] else 'none'!r})")

    Ndzip.__module__ = __name__
    Ndzip.__qualname__ = "Ndzip"
    return Ndzip


def __getattr__(name):
    # Ndzip derives from h5py's FilterRefBase: made when first asked for, so that the rest of
    # this module (plugin_path() for h5dump users) needs no h5py.
    if name == "Ndzip":
        globals()["Ndzip"] = _filter_class()
        return globals()["Ndzip"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _folding_code(folding):
    """The filter option of a folding: 1 "automatic", 0 "none"."""
    if not isinstance(folding, str) or folding not in ("automatic", "none"):
        raise ValueError(f"ndzip.h5: folding is 'automatic' or 'none', not {folding!r}")
    return int(folding == "automatic")


def filter(checksum=True, high_ratio=False, mode=None, folding="automatic"):
    """The compression= and compression_opts= arguments of h5py.Group.create_dataset for the
    ndzip filter: each chunk checksummed (XXH3-64, checked on read) unless checksum is False, in
    the stream of `mode` (one of ndzip.modes; "ndzip" by default; high_ratio=True is the same as
    mode="high_ratio"), folded where that helps unless folding is "none" (ndzip.coded_shape).
    Registers the plugin's folder first."""
    if mode is None:
        mode = "high_ratio" if high_ratio else "ndzip"
    elif high_ratio and mode != "high_ratio":
        raise ValueError(
            f"ndzip.h5.filter: high_ratio=True and mode={mode!r} contradict each other")
    code = _ndzip._mode_code(mode)  # ValueError for a name that is not a mode
    folds = _folding_code(folding)
    register()
    return {
        "compression": filter_id(),
        "compression_opts": (int(bool(checksum)), code, folds),
    }


def _require_plugin():
    if not _build_config.HDF5_FILTER_ID:
        raise RuntimeError(
            "ndzip.h5: this build of ndzip-kokkos has no HDF5 filter plugin (it needs HDF5's C "
            "library and a shared Kokkos at build time)"
        )
