# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""python3 -m ndzip.bench MANIFEST [--backend NAME] [--repeats N] [--csv OUT]
   python3 -m ndzip.bench MANIFEST --device cuda [--library cupy,torch] [--repeats N] [--csv OUT]

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

With --device cuda, the arrays lie on the GPU (CuPy arrays, PyTorch tensors) and the C++ side is
dynamic_compressor on device buffers, raw streams both:

  python       one ndzip.Compressor: compress_raw and decompress_raw into device arrays (out=)
  c++          dynamic_compressor::compress and decompress on the same device buffers

plus, per library, a 1 KiB array's call (microseconds, median of 200) both ways. Compressions
and decompressions alternate in both loops. Every stream is
checked to be the bytes of the C++ call and of NumPy input, every round trip bit for bit.

GB/s of uncompressed bytes, medians of the repeats; every round trip is checked bit for bit.
"""

import argparse
import csv
import os
import statistics
import sys
import time

import numpy as np

from . import Compressor, _ndzip, compress, compress_raw, decompress


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


def device_libraries(names):
    """(name, to_device(numpy array), to_host(device array), empty(shape, dtype)) per library
    (PyTorch names ROCm devices "cuda" too)."""
    libraries = []
    for name in names:
        if name == "cupy":
            import cupy
            libraries.append((name, cupy.asarray, cupy.asnumpy,
                              lambda shape, dtype: cupy.empty(shape, dtype)))
        elif name == "torch":
            import torch
            kinds = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
                     np.dtype(np.uint8): torch.uint8}
            libraries.append((name, lambda a: torch.from_numpy(a).to("cuda"),
                              lambda t: t.cpu().numpy(),
                              lambda shape, dtype: torch.empty(shape, dtype=kinds[np.dtype(dtype)],
                                                               device="cuda")))
        else:
            sys.exit(f"ndzip.bench: --library {name}: cupy or torch")
    return libraries


def bench_device(args):
    """The --device table: Python's Compressor against dynamic_compressor, device-resident."""
    libraries = device_libraries(args.library.split(","))
    rows = []
    print("GB/s of uncompressed bytes, compress (c) / decompress (d); ratio: compressed / raw "
          "size; py/c++: Python's GB/s over C++'s")
    print(f"{'dataset':24} {'MB':>6} {'ratio':>6} {'library':>7} | {'python c':>9} {'d':>7} | "
          f"{'c++ c':>7} {'d':>7} | {'py/c++ c':>8} {'d':>6}")

    def check(name, got, want, what):
        if not np.array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8)):
            sys.exit(f"ndzip.bench: {name}: {what}")

    datasets = [(name, np.fromfile(path, dtype=dtype).reshape(shape))
                for name, path, dtype, shape in read_manifest(args.manifest)]
    tiny = np.cumsum(np.random.default_rng(1).standard_normal(256)).astype(np.float32)
    for library, to_device, to_host, empty in libraries:
        for name, array in datasets + [("1 KiB float32", tiny)]:
            values = to_device(array)
            kept = Compressor(array.dtype, array.shape, backend=args.device)
            stream = empty((kept.size_bound,), np.uint8)
            decoded = empty(array.shape, array.dtype)
            written = kept.compress_raw(values, out=stream)
            size = len(written)
            host_stream = compress_raw(array, backend=args.device)
            check(name, to_host(written), np.frombuffer(host_stream, np.uint8),
                  "the device stream differs from NumPy input's")
            kept.decompress_raw(written, out=decoded)
            check(name, to_host(decoded), array, "the device round trip is not bit-exact")
            repeats = 200 if array.nbytes <= 1024 else args.repeats
            cpp_stream = empty((kept.size_bound,), np.uint8)
            cpp = _ndzip._bench.time_cpp_device(values, cpp_stream, decoded, repeats)
            check(name, to_host(cpp_stream[:cpp["stream_bytes"]]), to_host(written),
                  "the C++ stream differs from Python's")
            # Compressions and decompressions alternate, as in the C++ loop.
            times = {"c": [], "d": []}
            for _ in range(repeats):
                for key, call in (("c", lambda: kept.compress_raw(values, out=stream)),
                                  ("d", lambda: kept.decompress_raw(written, out=decoded))):
                    start = time.perf_counter()
                    call()
                    times[key].append(time.perf_counter() - start)
            t = {"c": statistics.median(times["c"]), "d": statistics.median(times["d"]),
                 "cpp_c": cpp["compress"], "cpp_d": cpp["decompress"]}
            check(name, to_host(decoded), array, "the device round trip is not bit-exact")
            ratio = size / array.nbytes
            if array.nbytes <= 1024:
                us = {k: v * 1e6 for k, v in t.items()}
                print(f"{name[:24]:24} {array.nbytes / 1e6:6.3f} {ratio:6.3f} {library:>7} | "
                      f"{us['c']:7.1f}us {us['d']:5.1f}us | {us['cpp_c']:5.1f}us "
                      f"{us['cpp_d']:5.1f}us | {t['c'] / t['cpp_c']:7.2f}x "
                      f"{t['d'] / t['cpp_d']:5.2f}x (time)")
                rows.append([name, library, array.nbytes, ratio, "us"]
                            + [us[k] for k in ("c", "d", "cpp_c", "cpp_d")])
                continue
            gbs = {k: array.nbytes / v / 1e9 for k, v in t.items()}
            print(f"{name[:24]:24} {array.nbytes / 1e6:6.1f} {ratio:6.3f} {library:>7} | "
                  f"{gbs['c']:9.1f} {gbs['d']:7.1f} | {gbs['cpp_c']:7.1f} {gbs['cpp_d']:7.1f} | "
                  f"{gbs['c'] / gbs['cpp_c']:8.2f} {gbs['d'] / gbs['cpp_d']:6.2f}")
            rows.append([name, library, array.nbytes, ratio, "GB/s"]
                        + [gbs[k] for k in ("c", "d", "cpp_c", "cpp_d")])
            del values, stream, decoded, cpp_stream
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["dataset", "library", "bytes", "stream_ratio", "unit", "python_c",
                        "python_d", "cpp_c", "cpp_d"])
            w.writerows(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m ndzip.bench",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("manifest")
    parser.add_argument("--backend", default=None)
    parser.add_argument("--device", default=None, choices=["cuda", "hip"],
                        help="arrays on the GPU (CuPy, PyTorch), against the C++ API there")
    parser.add_argument("--library", default="cupy,torch",
                        help="with --device: the array libraries, comma-separated")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed calls per figure (default 5; 21 with --device)")
    parser.add_argument("--csv", default=None, help="also write the rows as CSV")
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 21 if args.device else 5
    if args.device:
        return bench_device(args)

    columns = ["python_c", "python_d", "fresh_c", "fresh_d", "kept_c", "kept_d", "cpp_c", "cpp_d"]
    heads = ["python", "c++ fresh", "python kept", "c++ kept"]
    totals = dict.fromkeys(columns, 0.0)
    total_bytes = 0
    rows = []
    print("GB/s of uncompressed bytes, compress / decompress, per column; ratio: compressed / "
          "raw size")
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
