# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""python3 -m ndzip.bench MANIFEST [--backend NAME] [--repeats N] [--csv OUT]

Throughput of the Python module against the C++ API behind it, per dataset of a manifest (the
CSV form of ../shared/data/manifest.csv: `file;float|double;extents slowest first`, files
relative to the manifest) and over the whole corpus, so that the binding's overhead is measured:

  python       ndzip.compress / ndzip.decompress (frames, a new compressor per call, bytes out)
  c++ frame    the same C++ calls without the binding (dynamic_compressor, frames, per call)
  c++ reused   one reused dynamic_compressor, bare streams (the C++ API at its best)

GB/s of uncompressed bytes, medians of the repeats; every round trip is checked bit for bit.
"""

import argparse
import csv
import os
import statistics
import sys
import time

import numpy as np

from . import _ndzip, compress, decompress


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
    parser = argparse.ArgumentParser(prog="python3 -m ndzip.bench", description=__doc__.split("\n")[0])
    parser.add_argument("manifest")
    parser.add_argument("--backend", default=None)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--csv", default=None, help="also write the rows as CSV")
    args = parser.parse_args(argv)

    columns = ["python_c", "python_d", "frame_c", "frame_d", "reused_c", "reused_d"]
    totals = dict.fromkeys(columns, 0.0)
    total_bytes = 0
    rows = []
    print(f"{'dataset':32} {'MB':>7} {'ratio':>6} | python c/d GB/s | c++ frame c/d | c++ reused c/d")
    for name, path, dtype, shape in read_manifest(args.manifest):
        array = np.fromfile(path, dtype=dtype).reshape(shape)
        frame = compress(array, backend=args.backend)
        if not np.array_equal(decompress(frame, backend=args.backend).view(np.uint8),
                              array.view(np.uint8)):
            sys.exit(f"ndzip.bench: {name}: the round trip is not bit-exact")
        t = {
            "python_c": median_seconds(lambda: compress(array, backend=args.backend), args.repeats),
            "python_d": median_seconds(lambda: decompress(frame, backend=args.backend), args.repeats),
        }
        cpp = _ndzip._time_cpp(array, args.backend, args.repeats)
        t.update(frame_c=cpp["frame_compress"], frame_d=cpp["frame_decompress"],
                 reused_c=cpp["reused_compress"], reused_d=cpp["reused_decompress"])
        gbs = {k: array.nbytes / v / 1e9 for k, v in t.items()}
        for k in columns:
            totals[k] += t[k]
        total_bytes += array.nbytes
        ratio = len(frame) / array.nbytes
        rows.append([name, cpp["backend"], array.nbytes, ratio] + [gbs[k] for k in columns])
        print(f"{name[:32]:32} {array.nbytes / 1e6:7.1f} {ratio:6.3f} | "
              f"{gbs['python_c']:6.2f} {gbs['python_d']:6.2f}  | {gbs['frame_c']:6.2f} "
              f"{gbs['frame_d']:6.2f} | {gbs['reused_c']:6.2f} {gbs['reused_d']:6.2f}")
    if not rows:
        sys.exit("ndzip.bench: the manifest lists no dataset")
    agg = {k: total_bytes / totals[k] / 1e9 for k in columns}
    print(f"{'corpus (bytes / summed medians)':32} {total_bytes / 1e6:7.1f} {'':6} | "
          f"{agg['python_c']:6.2f} {agg['python_d']:6.2f}  | {agg['frame_c']:6.2f} "
          f"{agg['frame_d']:6.2f} | {agg['reused_c']:6.2f} {agg['reused_d']:6.2f}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["dataset", "backend", "bytes", "frame_ratio"] + [c + "_gbs" for c in columns])
            w.writerows(rows)
            w.writerow(["corpus", rows[0][1], total_bytes, ""] + [agg[k] for k in columns])


if __name__ == "__main__":
    main()
