# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""python3 -m ndzip.bench MANIFEST [--backend NAME] [--repeats N] [--csv OUT]

Throughput of the Python module against the C++ API behind it, per dataset of a manifest (the
CSV form of ../shared/data/manifest.csv: `file;float|double;extents slowest first`, files
relative to the manifest) and over the whole corpus, so that the binding's overhead is measured:

  python       ndzip.compress / ndzip.decompress: a new compressor per call, new bytes and arrays
  c++ fresh    the same C++ calls without the binding (a dynamic_compressor per call, frames)
  python kept  one ndzip.Compressor, into the same bytearray and array every time (out=)
  c++ kept     the same C++ calls without the binding: one dynamic_compressor, frames

Binding overhead is "python" against "c++ fresh" and "python kept" against "c++ kept"; the
difference between the pairs is the cost of new memory (page faults of fresh output) and of
setting up a compressor per call.

GB/s of uncompressed bytes, medians of the repeats; every round trip is checked bit for bit.
"""

import argparse
import csv
import os
import statistics
import sys
import time

import numpy as np

from . import Compressor, _ndzip, compress, decompress


def read_manifest(path):
    base = os.path.dirname(os.path.abspath(path))
    rows = []
    with open(path, newline="") as f:
        for line in csv.reader(f, delimiter=";"):
            if not line or line[0].startswith("#"):
                continue
            name, kind, dims = line[0], line[1], line[2]
            dtype = np.float32 if kind == "float" else np.float64
            shape = tuple(int(x) for x in dims.split())
            rows.append((name, os.path.join(base, name), dtype, shape))
    return rows


def median_seconds(f, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m ndzip.bench",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("manifest")
    parser.add_argument("--backend", default=None)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--csv", default=None, help="also write the rows as CSV")
    args = parser.parse_args(argv)

    columns = ["python_c", "python_d", "fresh_c", "fresh_d", "kept_c", "kept_d", "cpp_c", "cpp_d"]
    heads = ["python", "c++ fresh", "python kept", "c++ kept"]
    totals = dict.fromkeys(columns, 0.0)
    total_bytes = 0
    rows = []
    print(f"{'dataset':24} {'MB':>6} {'ratio':>6} | " + " | ".join(f"{h:>13}" for h in heads))
    for name, path, dtype, shape in read_manifest(args.manifest):
        array = np.fromfile(path, dtype=dtype).reshape(shape)
        frame = compress(array, backend=args.backend)
        if not np.array_equal(decompress(frame, backend=args.backend).view(np.uint8),
                              array.view(np.uint8)):
            sys.exit(f"ndzip.bench: {name}: the round trip is not bit-exact")
        kept = Compressor(dtype, shape, backend=args.backend)
        frame_out = bytearray(kept.frame_size_bound)
        values_out = np.empty_like(array)
        t = {
            "python_c": median_seconds(lambda: compress(array, backend=args.backend), args.repeats),
            "python_d": median_seconds(lambda: decompress(frame, backend=args.backend),
                                       args.repeats),
            "kept_c": median_seconds(lambda: kept.compress(array, out=frame_out), args.repeats),
            "kept_d": median_seconds(lambda: kept.decompress(frame, out=values_out), args.repeats),
        }
        if not np.array_equal(values_out.view(np.uint8), array.view(np.uint8)):
            sys.exit(f"ndzip.bench: {name}: the kept compressor's round trip is not bit-exact")
        cpp = _ndzip._bench.time_cpp(array, args.backend, args.repeats)
        t.update(fresh_c=cpp["fresh_compress"], fresh_d=cpp["fresh_decompress"],
                 cpp_c=cpp["reused_compress"], cpp_d=cpp["reused_decompress"])
        gbs = {k: array.nbytes / v / 1e9 for k, v in t.items()}
        for k in columns:
            totals[k] += t[k]
        total_bytes += array.nbytes
        ratio = len(frame) / array.nbytes
        rows.append([name, cpp["backend"], array.nbytes, ratio] + [gbs[k] for k in columns])
        print(f"{name[:24]:24} {array.nbytes / 1e6:6.1f} {ratio:6.3f} | " + " | ".join(
            f"{gbs[columns[2 * i]]:6.2f} {gbs[columns[2 * i + 1]]:6.2f}" for i in range(4)))
    if not rows:
        sys.exit("ndzip.bench: the manifest lists no dataset")
    agg = {k: total_bytes / totals[k] / 1e9 for k in columns}
    print(f"{'corpus (summed medians)':24} {total_bytes / 1e6:6.1f} {'':6} | " + " | ".join(
        f"{agg[columns[2 * i]]:6.2f} {agg[columns[2 * i + 1]]:6.2f}" for i in range(4)))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["dataset", "backend", "bytes", "frame_ratio"]
                       + [c + "_gbs" for c in columns])
            w.writerows(rows)
            w.writerow(["corpus", rows[0][1], total_bytes, ""] + [agg[k] for k in columns])


if __name__ == "__main__":
    main()
