#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""HDF5 filter benchmark: writes every dataset of a manifest (`file;float|double;extents
slowest first`, the format of ../shared/data/manifest.csv) into an HDF5 file with the ndzip
filter (checksummed chunks, and bare streams with the checksum off) and with hdf5plugin's zfp
(reversible), Blosc (zstd, byte shuffle, level 5) and LZ4 filters, plus uncompressed chunks as
the I/O baseline, all in the same chunk shape, and reports per dataset and codec:

  ratio      stored chunk bytes / input bytes (lower is better; the project's convention)
  write MB/s input bytes / time to create, write and close the file (10^6 bytes per MB)
  read MB/s  input bytes / time to open, read the whole dataset and close the file

Each time is the median of --repeats runs, after one untimed write and read per codec (the
plugin loads and initialises Kokkos then). Every read is compared bit for bit with the input.
Files go to --work-dir (a temporary folder by default) and are removed; the input data is only
read. HDF5_PLUGIN_PATH must name the folder of libh5ndzip.so and the folder of the other
filters (Debian: /usr/lib/x86_64-linux-gnu/hdf5/serial/plugins). Threads: the ndzip filter
runs on Kokkos' OpenMP backend (OMP_NUM_THREADS threads), the others on one thread.

    HDF5_PLUGIN_PATH=build/hdf5-plugin:/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins \\
        python3 plugins/hdf5/bench/hdf5_bench.py --manifest ../shared/data/manifest.csv
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import h5py
import hdf5plugin
import numpy as np

SIDES = {1: 4096, 2: 64, 3: 16}  # ndzip hypercube side per rank


def codecs(filter_id):
    return {
        "ndzip": {"compression": filter_id},  # checksummed chunks, the default
        "ndzip-bare": {"compression": filter_id, "compression_opts": (0,)},  # checksum off
        "zfp-reversible": dict(hdf5plugin.Zfp(reversible=True)),
        "blosc-zstd": dict(hdf5plugin.Blosc(cname="zstd", clevel=5,
                                            shuffle=hdf5plugin.Blosc.SHUFFLE)),
        "lz4": dict(hdf5plugin.LZ4()),
        "none": {},
    }


def read_manifest(path):
    """[(name, array)] of the manifest's datasets, read from the folder holding it."""
    folder = os.path.dirname(os.path.abspath(path))
    datasets = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, kind, extents = line.split(";")
            dtype = {"float": np.float32, "double": np.float64}[kind]
            shape = tuple(int(n) for n in extents.split())
            array = np.fromfile(os.path.join(folder, name), dtype=dtype).reshape(shape)
            datasets.append((name, array))
    return datasets


def chunk_shape(shape, itemsize, target_bytes):
    """At most target_bytes per chunk: the whole array if it fits, else whole rows of the faster
    axes and the slowest axis split, in multiples of the ndzip hypercube side where the chunk
    holds at least one."""
    side = SIDES[len(shape)]
    chunk = list(shape)
    for axis in range(len(shape)):
        inner = itemsize * int(np.prod(chunk[axis + 1:], dtype=np.int64))
        rows = target_bytes // inner
        if rows >= shape[axis]:
            break
        if rows >= 1:
            chunk[axis] = rows - rows % side if rows >= side else rows
            break
        chunk[axis] = 1
    return tuple(chunk)


def timed(action):
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def write(path, array, chunks, options):
    def action():
        with h5py.File(path, "w") as f:
            f.create_dataset("data", data=array, chunks=chunks, **options)
    return timed(action)[0]


def read(path):
    def action():
        with h5py.File(path, "r") as f:
            return f["data"][...], f["data"].id.get_storage_size()
    return timed(action)


def measure(path, array, chunks, options, repeats):
    write(path, array, chunks, options)  # warm-up: plugin loading, Kokkos, page cache
    read(path)
    write_times, read_times = [], []
    stored = None
    for _ in range(repeats):
        write_times.append(write(path, array, chunks, options))
        seconds, (values, stored) = read(path)
        read_times.append(seconds)
        if values.view(np.uint8).tobytes() != array.view(np.uint8).tobytes():
            sys.exit(f"{path}: the data read back differs from the input")
    os.remove(path)
    return stored, statistics.median(write_times), statistics.median(read_times)


def mb_per_s(nbytes, seconds):
    return nbytes / seconds / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", required=True, help="manifest.csv of the datasets")
    parser.add_argument("--filter-id", type=int, default=310, help="the ndzip filter's id")
    parser.add_argument("--codecs", default=None,
                        help="comma-separated subset of: " + ", ".join(codecs(0)))
    parser.add_argument("--chunk-mib", type=float, default=4.0, help="chunk size bound (MiB)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per measurement")
    parser.add_argument("--work-dir", default=None, help="where the HDF5 files are written")
    args = parser.parse_args()

    selected = codecs(args.filter_id)
    if args.codecs:
        selected = {name: selected[name] for name in args.codecs.split(",")}
    for name, options in selected.items():
        fid = options.get("compression")
        if fid is not None and not h5py.h5z.filter_avail(fid):
            sys.exit(f"{name}: HDF5 has no filter {fid}; check HDF5_PLUGIN_PATH")

    datasets = read_manifest(args.manifest)
    totals = {name: [0, 0, 0.0, 0.0] for name in selected}  # input, stored, write s, read s
    omp = ", ".join(f"{v}={os.environ.get(v, 'unset')}"
                    for v in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "OMP_PROC_BIND"))
    print(f"HDF5 {'.'.join(map(str, h5py.h5.get_libversion()))}, h5py {h5py.__version__}, {omp}, "
          f"chunks <= {args.chunk_mib:g} MiB, median of {args.repeats}\n")
    print("| dataset | chunks | codec | ratio | write MB/s | read MB/s |")
    print("|---|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory(dir=args.work_dir) as tmp:
        for dataset, array in datasets:
            chunks = chunk_shape(array.shape, array.itemsize, int(args.chunk_mib * 2**20))
            for name, options in selected.items():
                stored, write_s, read_s = measure(os.path.join(tmp, f"{name}.h5"), array,
                                                  chunks, options, args.repeats)
                total = totals[name]
                total[0] += array.nbytes
                total[1] += stored
                total[2] += write_s
                total[3] += read_s
                print(f"| {dataset} | {'x'.join(map(str, chunks))} | {name} | "
                      f"{stored / array.nbytes:.3f} | {mb_per_s(array.nbytes, write_s):.0f} | "
                      f"{mb_per_s(array.nbytes, read_s):.0f} |", flush=True)
    print("\n| codec | ratio (all) | write MB/s (all) | read MB/s (all) |")
    print("|---|---:|---:|---:|")
    for name, (nbytes, stored, write_s, read_s) in totals.items():
        print(f"| {name} | {stored / nbytes:.3f} | {mb_per_s(nbytes, write_s):.0f} | "
              f"{mb_per_s(nbytes, read_s):.0f} |")


if __name__ == "__main__":
    main()
