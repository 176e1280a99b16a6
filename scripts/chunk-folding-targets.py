#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Issue #63 item 1's targets, measured through the real products (Zarr, dask's chunks, h5py):

  "With xarray's default Zarr chunks, dask's `auto` chunks and h5py's `chunks=True`, the mean
  ratio is within 10 % of whole-array chunks and no dataset is stored above raw size + 1 %."

For every dataset of the manifest (`file;float|double;extents slowest first`, raw little-endian
files beside the manifest), every mode (--modes) and every folding (--foldings: "automatic", the
library's default, and "none", how ndzip coded chunks before folding) the array is written and
read back through each chunking:

  whole-zarr  Zarr 2 (DirectoryStore), chunks = the whole array: the Zarr reference
  zarr        Zarr 2 with zarr.util.guess_chunks, the chunks xarray writes to Zarr without dask
  dask        Zarr 2 with dask's "auto" chunks (dask.array.core.normalize_chunks, the default
              array.chunk-size of 128 MiB, which leaves every corpus array whole); reference:
              whole-zarr
  whole-h5py  h5py, chunks = the whole array: the h5py reference
  h5py        h5py with chunks=True (h5py's guess_chunk)

Zarr compresses with ndzip.numcodecs.Ndzip(mode=, folding=), h5py with the HDF5 filter plugin
(ndzip.h5.filter(mode=, folding=)). Both store edge chunks padded to the full chunk shape, so the
padding is part of the stored size, as it is for a user. Every array is read back from storage
(Zarr reopened, the HDF5 file closed and reopened so that HDF5's chunk cache cannot serve the
written chunks) and compared bit for bit with the input; a mismatch stops the script with exit
status 1. Missing the targets is not an error: the summary says so.

Every (dataset, mode, folding) runs in a fresh interpreter, because the library draws an
ndzip.BorderWarning only once per array shape in a process: a shared process would record a
shape's warning for the first dataset, mode or folding only.

  cd /work/main && PYTHONPATH=build/python /usr/bin/python3 scripts/chunk-folding-targets.py \\
      --csv docs/bench/chunk-folding-targets.csv

CSV columns, one row per dataset x chunking x mode x folding:
  dataset, dtype, shape (AxBxC)  the array
  chunking        whole-zarr, zarr, dask, whole-h5py or h5py (above)
  chunk_shape     the full chunk's shape (for h5py as HDF5 chose it)
  coded_shape     the grid ndzip codes a full chunk as: ndzip.coded_shape(chunk) with folding
                  automatic, the chunk shape with folding none
  mode, folding   the codec's settings
  raw_bytes       the array's size in memory
  stored_bytes    Zarr: the sum of the chunk files' sizes (.zarray and .zattrs excluded);
                  h5py: the dataset's storage size (Dataset.id.get_storage_size())
  ratio           stored_bytes / raw_bytes
  border_warning  the chunk shapes for which compressing drew an ndzip.BorderWarning,
                  ';'-joined (empty: none). Only the Python codec (Zarr) warns: the HDF5
                  plugin runs in C and draws no Python warning, so h5py rows stay empty.
"""
import argparse, csv, math, multiprocessing, os, sys, tempfile, time, warnings
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MANIFEST = os.path.join(HERE, "..", "..", "shared", "data", "manifest.csv")
# (chunking, product, the chunking whose ratio is its reference)
CHUNKINGS = [("whole-zarr", "zarr", "whole-zarr"), ("zarr", "zarr", "whole-zarr"),
             ("dask", "zarr", "whole-zarr"), ("whole-h5py", "h5py", "whole-h5py"),
             ("h5py", "h5py", "whole-h5py")]
MEAN_RATIO_LIMIT = 1.10  # mean(ratio) / mean(whole-array ratio)
RAW_LIMIT = 1.01         # ratio of any one dataset
COLUMNS = ["dataset", "dtype", "shape", "chunking", "chunk_shape", "coded_shape", "mode",
           "folding", "raw_bytes", "stored_bytes", "ratio", "border_warning"]


class RoundTripError(Exception):
    pass


def fmt(shape):
    return "x".join(str(n) for n in shape)


def read_manifest(path, only):
    """[(name without extension, file, dtype, shape)] of the manifest, those in `only` if given."""
    root = os.path.dirname(os.path.abspath(path))
    datasets = []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        file, typ, extents = line.split(";")
        name = file.split(".")[0]
        if only and name not in only and file not in only:
            continue
        datasets.append((name, os.path.join(root, file),
                         np.dtype("<f4" if typ == "float" else "<f8"),
                         tuple(int(e) for e in extents.split())))
    return datasets


def load(file, dtype, shape):
    array = np.fromfile(file, dtype=dtype)
    if array.size != math.prod(shape):
        raise ValueError(f"{file}: {array.size} values, the manifest says {fmt(shape)}")
    return array.reshape(shape)


# ---- chunk shapes the products pick -----------------------------------------------------------
def zarr_default_chunks(shape, dtype):
    import zarr.util
    return tuple(int(c) for c in zarr.util.guess_chunks(shape, dtype.itemsize))


def dask_auto_chunks(shape, dtype):
    import dask.array.core
    # "auto" gives regular blocks: the first of every dimension is the full chunk extent
    blocks = dask.array.core.normalize_chunks("auto", shape, dtype=dtype)
    return tuple(int(b[0]) for b in blocks)


def chunk_request(chunking, shape, dtype):
    """What the product is asked for: a chunk shape, or True for h5py's own guess."""
    if chunking.startswith("whole-"):
        return tuple(shape)
    if chunking == "zarr":
        return zarr_default_chunks(shape, dtype)
    if chunking == "dask":
        return dask_auto_chunks(shape, dtype)
    return True  # h5py: chunks=True


# ---- storing and reading back through the products --------------------------------------------
def store_zarr(array, chunks, mode, folding, folder):
    """(stored bytes, array read back, chunk shape) of `array` written to a new Zarr array."""
    import zarr
    import ndzip.numcodecs
    path = os.path.join(folder, "x.zarr")
    z = zarr.open(path, mode="w", shape=array.shape, chunks=chunks, dtype=array.dtype,
                  compressor=ndzip.numcodecs.Ndzip(mode=mode, folding=folding))
    z[...] = array
    stored = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path)
                 for f in files if f not in (".zarray", ".zattrs"))
    return stored, zarr.open(path, mode="r")[...], tuple(z.chunks)


def store_h5py(array, chunks, mode, folding, folder):
    """(stored bytes, array read back, chunk shape) of `array` written to a new HDF5 file."""
    import h5py
    import ndzip.h5
    path = os.path.join(folder, "x.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=array, chunks=chunks,
                         **ndzip.h5.filter(mode=mode, folding=folding))
    with h5py.File(path, "r") as f:
        dset = f["x"]
        return dset.id.get_storage_size(), dset[...], tuple(dset.chunks)


STORE = {"zarr": store_zarr, "h5py": store_h5py}


def bits(array):
    return array.view(np.uint32 if array.dtype.itemsize == 4 else np.uint64)


def measure(name, file, dtype, shape, mode, folding):
    """One CSV row per chunking of one dataset, mode and folding (run in a fresh interpreter)."""
    import ndzip
    array = load(file, dtype, shape)
    warned = set()  # chunk shapes warned in this process: the library warns once per shape
    rows = []
    for chunking, product, _ in CHUNKINGS:
        with tempfile.TemporaryDirectory() as folder, \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ndzip.BorderWarning)
            stored, restored, chunk = STORE[product](
                array, chunk_request(chunking, shape, dtype), mode, folding, folder)
        if restored.shape != array.shape or not np.array_equal(bits(restored), bits(array)):
            raise RoundTripError(f"{name} {chunking} {mode} folding={folding}: the array read "
                                 f"back differs from the one written")
        # Zarr hands the codec full chunks only (edge chunks padded), so a warning is about them
        if any(issubclass(w.category, ndzip.BorderWarning) for w in caught):
            warned.add(chunk)
        coded = ndzip.coded_shape(chunk) if folding == "automatic" else chunk
        # dask's chunks repeat whole-zarr's, which the library does not warn about twice; the
        # HDF5 plugin never warns, whatever Zarr said of the same shape
        warning = fmt(chunk) if product == "zarr" and chunk in warned else ""
        rows.append(dict(dataset=name, dtype=dtype.name, shape=fmt(shape), chunking=chunking,
                         chunk_shape=fmt(chunk), coded_shape=fmt(coded), mode=mode,
                         folding=folding, raw_bytes=array.nbytes, stored_bytes=stored,
                         ratio=f"{stored / array.nbytes:.6f}", border_warning=warning))
    return rows


def measure_case(case):
    return measure(*case)


# ---- summary ------------------------------------------------------------------------------------
def print_definitions():
    print(f"""Definitions (per mode x folding x chunking, over the datasets):
  ratio             stored bytes / raw bytes of one dataset
  mean ratio        mean of the datasets' ratios
  mean vs whole     mean over datasets of ratio / ratio of the same dataset, mode and folding
                    with whole-array chunks of the same product (zarr, dask: whole-zarr; h5py:
                    whole-h5py)
  mean / whole mean mean ratio / mean ratio of that whole-array chunking
  worst             the largest ratio (its dataset)
  > raw+1%          datasets with ratio > {RAW_LIMIT}
  targets met       mean / whole mean <= {MEAN_RATIO_LIMIT:.2f} and no dataset > raw+1%""")


def summarize(rows, modes, foldings):
    ratio = {(r["dataset"], r["chunking"], r["mode"], r["folding"]): float(r["ratio"])
             for r in rows}
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    print_definitions()
    for mode in modes:
        for folding in foldings:
            print(f"\n== mode {mode}, folding {folding} ==")
            print(f"{'chunking':10s} {'mean ratio':>10s} {'mean vs whole':>13s} "
                  f"{'mean/whole mean':>15s} {'worst (dataset)':>30s} {'>raw+1%':>7s} "
                  f"targets met")
            for chunking, _, reference in CHUNKINGS:
                r = {ds: ratio[ds, chunking, mode, folding] for ds in datasets}
                ref = {ds: ratio[ds, reference, mode, folding] for ds in datasets}
                mean = np.mean(list(r.values()))
                vs_whole = np.mean([r[ds] / ref[ds] for ds in datasets])
                of_whole_mean = mean / np.mean(list(ref.values()))
                worst = max(r, key=r.get)
                over = sum(1 for v in r.values() if v > RAW_LIMIT)
                met = of_whole_mean <= MEAN_RATIO_LIMIT and over == 0
                print(f"{chunking:10s} {mean:10.4f} {vs_whole:13.4f} {of_whole_mean:15.4f} "
                      f"{r[worst]:9.4f} ({worst:18s}) {over:7d} {'yes' if met else 'no'}")


def print_exceptions(rows):
    """Rows above raw + 1 % and rows that drew a BorderWarning: what the summary does not name."""
    print("\n== datasets above raw+1% ==")
    over = [r for r in rows if float(r["ratio"]) > RAW_LIMIT]
    for r in over:
        print(f"{r['dataset']:20s} {r['chunking']:10s} {r['mode']:10s} {r['folding']:9s} "
              f"chunk {r['chunk_shape']} coded {r['coded_shape']}: ratio {float(r['ratio']):.4f}")
    if not over:
        print("(none)")
    print("\n== BorderWarnings ==")
    warned = [r for r in rows if r["border_warning"]]
    for r in warned:
        print(f"{r['dataset']:20s} {r['chunking']:10s} {r['mode']:10s} {r['folding']:9s} "
              f"{r['border_warning']}")
    if not warned:
        print("(none)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("manifest", nargs="?", default=DEFAULT_MANIFEST,
                    help="manifest (default: ../shared/data/manifest.csv beside the checkout)")
    ap.add_argument("--csv", metavar="OUT", help="write one row per dataset x chunking x mode x "
                                                  "folding here")
    ap.add_argument("--modes", default="ndzip,high_ratio",
                    help="comma-separated ndzip modes (default: ndzip,high_ratio)")
    ap.add_argument("--foldings", default="automatic,none",
                    help="comma-separated foldings (default: automatic,none)")
    ap.add_argument("--only", help="comma-separated dataset names (for quick runs)")
    args = ap.parse_args()

    modes = [m for m in args.modes.split(",") if m]
    foldings = [f for f in args.foldings.split(",") if f]
    only = set(args.only.split(",")) if args.only else None
    datasets = read_manifest(args.manifest, only)
    if not datasets:
        sys.exit("no dataset of the manifest matches --only")
    cases = [(name, file, dtype, shape, mode, folding) for name, file, dtype, shape in datasets
             for mode in modes for folding in foldings]

    t0 = time.time()
    rows = []
    # spawn, one case per process: a fresh interpreter (and Kokkos) for every case, see above
    with multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
        try:
            for case, case_rows in zip(cases, pool.imap(measure_case, cases)):
                rows += case_rows
                print(f"[{time.time() - t0:6.1f}s] {case[0]:20s} {case[4]:10s} {case[5]}",
                      file=sys.stderr, flush=True)
        except RoundTripError as error:
            sys.exit(f"round trip failed: {error}")

    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
    summarize(rows, modes, foldings)
    print_exceptions(rows)
    print(f"\n{len(rows)} arrays written and read back bit-exact in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
