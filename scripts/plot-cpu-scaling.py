#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Thread-scaling plot of the CPU anchor (../shared/bench/ndzip-cpu/run-cpu.sh): GB/s against
OpenMP threads for the original ndzip's encoders (bench_cpu, `upstream.csv`) and this project's
(ndzip-bench, `project.csv`), one panel per input file and direction, with ideal scaling from
each codec's one-thread figure dashed.

usage: plot-cpu-scaling.py UPSTREAM_CSV PROJECT_CSV OUT_PNG   (Debian's python3-matplotlib)"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

upstream_csv, project_csv, out_png = sys.argv[1:4]
series = defaultdict(dict)  # (file, direction, codec) -> {threads: GB/s}
for r in csv.DictReader(open(upstream_csv)):
    if r["encoder"] == "mt":
        for d in ("compress", "decompress"):
            series[(r["file"], d, "original ndzip (OpenMP)")][int(r["threads"])] = float(r[d + "_gbps"])
for r in csv.DictReader(open(project_csv)):
    if r["mode"] == "dataset" and r["backend"] == "openmp":
        for d in ("compress", "decompress"):
            series[(r["dataset"], d, "ndzip-kokkos (OpenMP)")][int(r["threads"])] = float(r[d + "_gbps"])

files = sorted({k[0] for k in series})
fig, axes = plt.subplots(len(files), 2, figsize=(10, 4 * len(files)), squeeze=False)
colors = {"original ndzip (OpenMP)": "tab:gray", "ndzip-kokkos (OpenMP)": "tab:blue"}
for row, f in enumerate(files):
    for col, d in enumerate(("compress", "decompress")):
        ax = axes[row][col]
        for codec, color in colors.items():
            pts = series.get((f, d, codec))
            if not pts:
                continue
            t = sorted(pts)
            ax.plot(t, [pts[x] for x in t], "o-", color=color, label=codec)
            ax.plot(t, [pts[t[0]] * x / t[0] for x in t], "--", color=color, alpha=0.4)
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 2, 4, 8, 16])
        ax.set_xticklabels(["1", "2", "4", "8", "16"])
        ax.set_xlabel("OpenMP threads")
        ax.set_ylabel("GB/s (uncompressed)")
        ax.set_title(f"{f}: {d}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
fig.suptitle("16-core host of the GPU machine (dashed: ideal scaling from one thread)")
fig.tight_layout()
fig.savefig(out_png, dpi=90)
