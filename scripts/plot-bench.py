#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Turns ndzip-bench CSV output into PNG figures.

usage: scripts/plot-bench.py CSV [CSV...] --out DIR [--dpi N]

Several CSVs are concatenated (e.g. a CPU run and a GPU run); rows that appear in more than one
(same mode, dataset, type, dims, backend, codec, threads and bytes) are averaged. Rows whose
`verified` column is not `yes` are left out with a warning.

Figures written to DIR (a figure whose rows are absent is skipped with a note):
  ratio_vs_throughput_compress.png    mean ratio over the datasets against corpus throughput,
  ratio_vs_throughput_decompress.png  one marker per backend (ndzip, each mode) or peer codec
  throughput_per_dataset.png          ndzip GB/s per dataset and backend (compress, decompress)
  ratio_per_dataset.png               ratio per dataset for ndzip and every peer codec
  scaling_size.png                    GB/s against input size (`sweep` rows)
  scaling_threads.png                 GB/s against OpenMP threads, with ideal scaling (`sweep` rows)
  latency_size.png                    GB/s against the size of one array, called one at a time
                                      (synchronous, asynchronous) or as a batch (`latency` rows)

Run it with Debian's python (python3-matplotlib); scripts/make-plots.sh installs that if missing.
"""

import argparse
import csv
import math
import os
import sys
from collections import OrderedDict, defaultdict

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
except ImportError:
    sys.exit("plot-bench: matplotlib is missing: install python3-matplotlib (scripts/make-plots.sh "
             "does) and run this with /usr/bin/python3")

REQUIRED = ["mode", "dataset", "type", "dims", "backend", "codec", "threads", "bytes", "ratio",
            "compress_gbps", "decompress_gbps", "deep_copy_gbps", "verified"]
NUMERIC = ["ratio", "compress_gbps", "decompress_gbps", "deep_copy_gbps"]
DIRECTIONS = [("compress", "compress_gbps"), ("decompress", "decompress_gbps")]

BACKEND_COLORS = {"serial": "#1f77b4", "openmp": "#d62728", "cuda": "#2ca02c", "hip": "#ff7f0e",
                  "sycl": "#9467bd", "threads": "#8c564b", "hpx": "#e377c2"}
EXTRA_COLORS = ["#17becf", "#bcbd22", "#7f7f7f", "#8c564b", "#e377c2", "#ff7f0e", "#9467bd"]
NDZIP_MARKERS = ["o", "s", "D", "^", "v", "P", "X", "h"]
HATCHES = ["", "//", "..", "xx", "\\\\"]
# Peers: a colour family per library (bar charts, scaling lines) and a marker of its own.
PEER_COLORS = {"zstd-1": "#a1d99b", "zstd-3": "#41ab5d", "zstd-19": "#00441b",
               "lz4": "#fd8d3c",
               "blosc-shuffle-zstd": "#bcbddc", "blosc-bitshuffle-zstd": "#6a51a3",
               "blosc-shuffle-lz4": "#dfc27d", "blosc-bitshuffle-lz4": "#8c510a",
               "fpzip": "#e7298a", "zfp-reversible": "#67a9cf"}
PEER_EXTRA_COLORS = ["#fb9a99", "#b2df8a", "#cab2d6", "#ffff99", "#a6cee3", "#b15928"]
PEER_MARKERS = ["s", "^", "v", "D", "P", "X", "<", ">", "p", "h", "*", "d", "8", "H"]
PEER_GREYS = ["#4d4d4d", "#878787", "#b0b0b0"]
NDZIP_BAR_COLOR = "#08306b"


def warn(msg):
    sys.stdout.flush()
    print("plot-bench: warning: " + msg, file=sys.stderr)


def note(msg):
    print("plot-bench: " + msg, flush=True)


# ---------------------------------------------------------------------------------------------
# Reading


def to_float(text):
    v = float(text)
    if math.isnan(v):
        raise ValueError("nan")
    return v


def read_rows(paths):
    rows = []
    for path in paths:
        try:
            f = open(path, newline="")
        except OSError as e:
            sys.exit("plot-bench: cannot read %s: %s" % (path, e.strerror))
        with f:
            reader = csv.reader(f)
            header = None
            for lineno, fields in enumerate(reader, start=1):
                fields = [x.strip() for x in fields]
                if not fields or all(x == "" for x in fields):
                    continue
                if header is None or fields[0] == "mode":  # first line, or a repeated header
                    header = fields
                    missing = [c for c in REQUIRED if c not in header]
                    if missing:
                        sys.exit("plot-bench: %s:%d: header lacks column(s) %s"
                                 % (path, lineno, ", ".join(missing)))
                    continue
                if len(fields) < len(header):
                    warn("%s:%d: %d fields, header has %d; row skipped"
                         % (path, lineno, len(fields), len(header)))
                    continue
                r = dict(zip(header, fields))
                where = "%s:%d (%s %s %s/%s)" % (path, lineno, r["mode"], r["dataset"],
                                                 r["backend"], r["codec"])
                if r["verified"].lower() != "yes":
                    warn("%s: verified=%s, row ignored" % (where, r["verified"]))
                    continue
                try:
                    r["threads"] = int(float(r["threads"]))
                    r["bytes"] = to_float(r["bytes"])
                    for c in NUMERIC:
                        r[c] = to_float(r[c])
                except ValueError:
                    warn("%s: unreadable number, row ignored" % where)
                    continue
                if r.get("same_stream") == "NO":
                    warn("%s: stream differs from the reference backend's (plotted anyway)" % where)
                r["where"] = where
                rows.append(r)
    return dedupe(rows)


def dedupe(rows):
    """Averages rows measured more than once (the same input, backend and codec in several CSVs)."""
    groups = OrderedDict()
    for r in rows:
        key = (r["mode"], r["dataset"], r["type"], r["dims"], r["backend"], r["codec"],
               r["threads"], r["bytes"])
        groups.setdefault(key, []).append(r)
    out = []
    repeated = 0
    for group in groups.values():
        r = dict(group[0])
        if len(group) > 1:
            repeated += 1
            for c in NUMERIC:
                r[c] = sum(g[c] for g in group) / len(group)
        out.append(r)
    if repeated:
        note("%d row(s) appear in more than one measurement; their numbers are averaged" % repeated)
    return out


# ---------------------------------------------------------------------------------------------
# Naming and styling


def is_ndzip(r):
    return r["codec"] == "ndzip"


def is_ndzip_mode(codec):
    """ndzip in either mode: "ndzip" (the default) or "ndzip-high-ratio"."""
    return codec == "ndzip" or codec.startswith("ndzip-")


def multi_thread_backends(rows):
    """Backends whose ndzip rows come with more than one thread count."""
    counts = defaultdict(set)
    for r in rows:
        if is_ndzip(r):
            counts[r["backend"]].add(r["threads"])
    return {b for b, t in counts.items() if len(t) > 1}


def series_key(r):
    return (r["codec"], r["backend"], r["threads"])


def series_label(key, multi):
    codec, backend, threads = key
    if not is_ndzip_mode(codec):
        return codec if backend == "host" else "%s (%s)" % (codec, backend)
    label = "%s %s" % (codec, backend)
    if backend in multi:
        label += " (%d thr)" % threads
    return label


class Styles:
    """Stable colours and markers per backend and per peer codec across all figures."""

    def __init__(self):
        self.backend_colors = dict(BACKEND_COLORS)
        self.peer_colors = dict(PEER_COLORS)
        self.peer_markers = {}
        self.ndzip_markers = {}

    def backend_color(self, backend):
        if backend not in self.backend_colors:
            used = len(self.backend_colors) - len(BACKEND_COLORS)
            self.backend_colors[backend] = EXTRA_COLORS[used % len(EXTRA_COLORS)]
        return self.backend_colors[backend]

    def peer_color(self, codec):
        if codec not in self.peer_colors:
            used = len(self.peer_colors) - len(PEER_COLORS)
            self.peer_colors[codec] = PEER_EXTRA_COLORS[used % len(PEER_EXTRA_COLORS)]
        return self.peer_colors[codec]

    def peer_marker(self, codec):
        if codec not in self.peer_markers:
            self.peer_markers[codec] = PEER_MARKERS[len(self.peer_markers) % len(PEER_MARKERS)]
        return self.peer_markers[codec]

    def ndzip_marker(self, key):
        # Thread-count variants of one backend share its colour and differ in marker.
        if key not in self.ndzip_markers:
            n = sum(1 for k in self.ndzip_markers if k[1] == key[1])
            self.ndzip_markers[key] = NDZIP_MARKERS[n % len(NDZIP_MARKERS)]
        return self.ndzip_markers[key]


def ordered_series(keys, rows_order):
    """ndzip series first (in backend order of appearance), then peers in order of appearance."""
    first = {}
    for i, k in enumerate(rows_order):
        first.setdefault(k, i)
    return sorted(set(keys), key=lambda k: (not is_ndzip_mode(k[0]), first.get(k, 0)))


def dataset_labels(rows):
    """Datasets (name, type, dims) in order of appearance with axis labels."""
    order = OrderedDict()
    for r in rows:
        order.setdefault((r["dataset"], r["type"], r["dims"]), None)
    per_name = defaultdict(int)
    for name, _, _ in order:
        per_name[name] += 1
    labels = OrderedDict()
    for key in order:
        name, typ, dims = key
        dims_text = dims.replace("x", "\u00d7")
        labels[key] = "%s\n%s %s" % (name, typ, dims_text) if per_name[name] > 1 else name
    return labels


def fmt_gbps(v):
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    return "%.2g" % v


def fmt_bytes(v):
    for unit, size in (("GiB", 2.0 ** 30), ("MiB", 2.0 ** 20), ("KiB", 2.0 ** 10)):
        if v >= size:
            q = v / size
            return ("%.0f %s" if abs(q - round(q)) < 0.05 else "%.1f %s") % (q, unit)
    return "%.0f B" % v


def type_order(t):
    return (t != "float", t != "double", t)


TYPE_STYLES = [("-", "o"), ("--", "s"), (":", "^")]


def plain_log(axis):
    """Plain numbers (0.1, 1, 10, 2, 5) on a log axis instead of powers of ten; the minor ticks
    are labelled too (2 and 5 only beyond a factor 8) when the axis spans less than two decades."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))

    def minor(v, _):
        lo, hi = axis.get_view_interval()
        if lo <= 0 or hi / lo > 100 or v <= 0:
            return ""
        mantissa = round(v / 10 ** math.floor(math.log10(v) + 1e-9), 6)
        if hi / lo > 8 and mantissa not in (2, 5):
            return ""
        return "%g" % v

    axis.set_minor_formatter(FuncFormatter(minor))


def row_major(handles, names, ncol):
    """Reorders legend entries so that a legend of ncol columns reads row by row."""
    nrow = int(math.ceil(len(handles) / float(ncol)))
    order = [r * ncol + c for c in range(ncol) for r in range(nrow) if r * ncol + c < len(handles)]
    return [handles[i] for i in order], [names[i] for i in order]


def save(fig, out_dir, name, dpi, written):
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    written.append(path)


# ---------------------------------------------------------------------------------------------
# Figures


def corpus_rows(rows):
    """The rows figures a-c are drawn from: mode `dataset`, else `synthetic` (with a note)."""
    data = [r for r in rows if r["mode"] == "dataset"]
    if data:
        return data, "datasets"
    data = [r for r in rows if r["mode"] == "synthetic"]
    if data:
        note("no `dataset` rows: the per-input figures use the %d `synthetic` rows" % len(data))
        return data, "synthetic fields"
    return [], None


def harmonic_gbps(rows, column):
    """Total bytes / total time: the bytes-weighted harmonic mean of the rows' GB/s."""
    total_bytes = sum(r["bytes"] for r in rows)
    total_s = sum(r["bytes"] / r[column] for r in rows if r[column] > 0)
    return total_bytes / total_s if total_s > 0 else float("nan")


def plot_ratio_vs_throughput(rows, data, kind, styles, out_dir, dpi, written):
    by_series = OrderedDict()
    for r in data:
        by_series.setdefault(series_key(r), []).append(r)
    aggregates = defaultdict(list)
    for r in rows:
        if r["mode"] == "aggregate" and kind == "datasets":
            aggregates[series_key(r)].append(r)
    n_inputs = len(dataset_labels(data))
    multi = multi_thread_backends(data)
    keys = ordered_series(by_series, [series_key(r) for r in data])
    for k in keys:
        n = len({(r["dataset"], r["type"], r["dims"]) for r in by_series[k]})
        if n < n_inputs:
            note("%s: verified on %d of %d inputs; its mean ratio covers those only"
                 % (series_label(k, multi), n, n_inputs))

    for direction, column in DIRECTIONS:
        fig, ax = plt.subplots(figsize=(12, 7.5))
        handles = []
        labelled = []  # ndzip points, labelled once the layout is known
        points = []  # every marker, for the labels to avoid
        for k in keys:
            series = by_series[k]
            mean_ratio = sum(r["ratio"] for r in series) / len(series)
            if aggregates.get(k):
                gbps = harmonic_gbps(aggregates[k], column)
                source = "aggregate"
            else:
                gbps = harmonic_gbps(series, column)
                source = "harmonic"
            if not gbps > 0 or math.isinf(gbps):
                warn("%s: no usable %s throughput, not plotted" % (series_label(k, multi), direction))
                continue
            label = series_label(k, multi)
            if is_ndzip_mode(k[0]):
                color = styles.backend_color(k[1])
                marker = styles.ndzip_marker(k)
                ax.scatter([gbps], [mean_ratio], s=170, marker=marker, color=color,
                           edgecolors="black", linewidths=1.0, zorder=4)
                labelled.append((label, gbps, mean_ratio, color))
                points.append((gbps, mean_ratio))
                handles.append(Line2D([], [], linestyle="", marker=marker, markersize=11,
                                      color=color, markeredgecolor="black",
                                      label="%s: %s GB/s, ratio %.3f" % (label, fmt_gbps(gbps),
                                                                         mean_ratio)))
            else:
                marker = styles.peer_marker(k[0])
                grey = PEER_GREYS[len(handles) % len(PEER_GREYS)]
                points.append((gbps, mean_ratio))
                ax.scatter([gbps], [mean_ratio], s=90, marker=marker, color=grey,
                           edgecolors="black", linewidths=0.6, zorder=3)
                handles.append(Line2D([], [], linestyle="", marker=marker, markersize=9,
                                      color=grey, markeredgecolor="black",
                                      label="%s: %s GB/s, ratio %.3f" % (label, fmt_gbps(gbps),
                                                                         mean_ratio)))
            if source == "harmonic" and kind == "datasets" and aggregates:
                note("%s: no aggregate row, %s throughput is the harmonic mean over its datasets"
                     % (label, direction))
        if not handles:
            plt.close(fig)
            note("ratio_vs_throughput_%s.png skipped: no usable rows" % direction)
            continue
        ax.set_xscale("log")
        plain_log(ax.xaxis)
        ax.set_xlabel("%s throughput [GB/s of uncompressed data] (log scale)" % direction.capitalize(),
                      fontsize=12)
        ax.set_ylabel("Mean compression ratio over %d %s\n(compressed / input bytes, lower is better)"
                      % (n_inputs, kind), fontsize=12)
        what = "corpus throughput (total bytes / total time)" if aggregates else \
            "throughput (bytes-weighted harmonic mean)"
        has_peers = any(not is_ndzip_mode(k[0]) for k in keys)
        ax.set_title("Compression ratio vs. %s %s\n%s" % (
            direction, what, "ndzip per backend and CPU peer codecs (peers single-threaded on the "
            "host)" if has_peers else "ndzip per backend"), fontsize=13)
        ax.grid(True, which="major", alpha=0.4)
        ax.grid(True, which="minor", alpha=0.15)
        ax.margins(x=0.12, y=0.12)
        lo, hi = ax.get_ylim()
        if hi - lo < 0.05:  # do not blow up differences in the third decimal
            mid = (lo + hi) / 2
            ax.set_ylim(mid - 0.025, mid + 0.025)
        ax.text(0.99, 0.02, "better \u2192 right and down", transform=ax.transAxes, ha="right",
                va="bottom", fontsize=10, color="#555555", style="italic")
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9.5,
                  frameon=False, title="codec: %s, mean ratio" % direction, title_fontsize=10)
        fig.tight_layout()
        place_labels(fig, ax, labelled, points)
        save(fig, out_dir, "ratio_vs_throughput_%s.png" % direction, dpi, written)


def place_labels(fig, ax, labelled, points):
    """Writes each (label, x, y, colour) beside its point, at the first of eight positions that
    stays inside the axes and clear of the markers and of the labels placed before."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    pad = 9 * fig.dpi / 72.0  # about a marker's radius
    obstacles = []
    for x, y in points:
        px, py = ax.transData.transform((x, y))
        obstacles.append((px - pad, py - pad, px + pad, py + pad))
    candidates = [(11, 8, "left", "bottom"), (11, -8, "left", "top"), (-11, 8, "right", "bottom"),
                  (-11, -8, "right", "top"), (0, 14, "center", "bottom"),
                  (0, -14, "center", "top"), (11, 0, "left", "center"), (-11, 0, "right", "center")]

    def overlaps(a, b):
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    for label, x, y, color in labelled:
        best = None
        for dx, dy, ha, va in candidates:
            text = ax.annotate(label, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha,
                               va=va, fontsize=11, fontweight="bold", color=color, zorder=5)
            e = text.get_window_extent(renderer)
            box = (e.x0, e.y0, e.x1, e.y1)
            inside = e.x0 >= frame.x0 and e.x1 <= frame.x1 and e.y0 >= frame.y0 and e.y1 <= frame.y1
            clashes = sum(overlaps(box, o) for o in obstacles)
            score = (not inside, clashes)
            if best is None or score < best[0]:
                if best is not None:
                    best[1].remove()
                best = (score, text, box)
            else:
                text.remove()
            if score == (False, 0):
                break
        x0, y0, x1, y1 = best[2]
        obstacles.append((x0 - 5, y0 - 5, x1 + 5, y1 + 5))  # keep the next labels a little apart


def grouped_bars(ax, groups, series, values, colors, log, value_labels, hatches=None):
    """Draws bars values[(group, series)] grouped by group; returns the bar containers by series."""
    n = max(1, len(series))
    width = 0.8 / n
    containers = {}
    for i, s in enumerate(series):
        xs, ys = [], []
        for g, _ in enumerate(groups):
            v = values.get((groups[g], s))
            if v is not None and (v > 0 or not log):
                xs.append(g - 0.4 + width * (i + 0.5))
                ys.append(v)
        if not xs:
            continue
        containers[s] = ax.bar(xs, ys, width=width * 0.92, color=colors[s], edgecolor="black",
                               linewidth=0.4, hatch=(hatches or {}).get(s), log=log)
        if value_labels:
            for x, y in zip(xs, ys):
                ax.annotate(value_labels(y), (x, y), xytext=(0, 2), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7, rotation=90)
    return containers


def set_group_ticks(ax, labels):
    """Group names under the bars, slanted when they would not fit side by side."""
    n = len(labels)
    ax.set_xticks(range(n))
    fig = ax.get_figure()
    group_in = fig.get_figwidth() * ax.get_position().width / max(1, n)
    text_in = max(len(line) for l in labels for line in l.split("\n")) * 0.085  # ~10 pt chars
    if text_in > 0.9 * group_in:
        ax.set_xticklabels(labels, rotation=30, ha="right", rotation_mode="anchor", fontsize=9)
    else:
        ax.set_xticklabels(labels, fontsize=10)
    ax.set_xlim(-0.6, n - 0.4)


def plot_throughput_per_dataset(rows, data, kind, styles, out_dir, dpi, written):
    nd = [r for r in data if is_ndzip(r)]
    if not nd:
        note("throughput_per_dataset.png skipped: no ndzip rows of mode `dataset`")
        return
    multi = multi_thread_backends(nd)
    labels = dataset_labels(nd)
    groups = list(labels)
    series = ordered_series({series_key(r) for r in nd}, [series_key(r) for r in nd])
    agg = [r for r in rows if r["mode"] == "aggregate" and is_ndzip(r)] if kind == "datasets" else []
    all_key = ("(all)", "", "")
    if agg:
        groups.append(all_key)
        labels[all_key] = "all datasets\n(aggregate)"
    fig, axes = plt.subplots(2, 1, figsize=(min(16, max(12, 0.3 * len(groups) * len(series) + 4)), 9),
                             sharex=True)
    colors = {s: styles.backend_color(s[1]) for s in series}
    # Thread-count variants of one backend share its colour and differ in hatching.
    hatches = {s: HATCHES[NDZIP_MARKERS.index(styles.ndzip_marker(s)) % len(HATCHES)]
               for s in series}
    n_bars = len(groups) * len(series)
    for ax, (direction, column) in zip(axes, DIRECTIONS):
        values, ceilings = {}, {}
        for r in nd:
            g = (r["dataset"], r["type"], r["dims"])
            values[(g, series_key(r))] = r[column]
            if r["deep_copy_gbps"] > 0:
                ceilings[(g, series_key(r))] = 2 * r["deep_copy_gbps"] / (1 + r["ratio"])
        for s in series:
            # Corpus figure: the aggregate row, else (it failed verification) the series' own rows.
            rs = [r for r in agg if series_key(r) == s] or \
                ([r for r in nd if series_key(r) == s] if agg else [])
            if rs:
                values[(all_key, s)] = harmonic_gbps(rs, column)
                dc = harmonic_gbps(rs, "deep_copy_gbps")
                if dc > 0:
                    ratio = sum(r["ratio"] * r["bytes"] for r in rs) / sum(r["bytes"] for r in rs)
                    ceilings[(all_key, s)] = 2 * dc / (1 + ratio)
        containers = grouped_bars(ax, groups, series, values, colors, True,
                                  fmt_gbps if n_bars <= 60 else None, hatches)
        # The memory-bound ceiling 2*deep_copy/(1+ratio) of each bar, as a short black dash.
        width = 0.8 / len(series)
        cx, cy = [], []
        for gi, g in enumerate(groups):
            for si, s in enumerate(series):
                if (g, s) in ceilings and (g, s) in values:
                    cx.append(gi - 0.4 + width * (si + 0.5))
                    cy.append(ceilings[(g, s)])
        if cx:
            ax.scatter(cx, cy, marker="_", s=max(40, 900 * width), color="black", linewidths=2,
                       zorder=5)
        if agg:
            ax.axvline(len(groups) - 1.5, color="#777777", linestyle=":", linewidth=1)
        plain_log(ax.yaxis)
        ax.set_ylabel("%s [GB/s] (log)" % direction.capitalize(), fontsize=11)
        ax.set_title("ndzip %s throughput per %s, by backend" % (direction,
                     "dataset" if kind == "datasets" else "synthetic field"), fontsize=12)
        ax.grid(True, axis="y", which="major", alpha=0.4)
        ax.grid(True, axis="y", which="minor", alpha=0.12)
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, hi * 3)  # room for the value labels
        handles = [containers[s] for s in series if s in containers]
        names = [series_label(s, multi) for s in series if s in containers]
        if cx:
            handles.append(Line2D([], [], color="black", marker="_", markersize=14, linestyle="",
                                  markeredgewidth=2))
            names.append("memory-bound ceiling\n2\u00b7deep_copy/(1+ratio)")
        ax.legend(handles, names, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9,
                  frameon=False)
    set_group_ticks(axes[1], [labels[g] for g in groups])
    fig.tight_layout()
    save(fig, out_dir, "throughput_per_dataset.png", dpi, written)


def plot_ratio_per_dataset(data, kind, styles, out_dir, dpi, written):
    labels = dataset_labels(data)
    groups = list(labels)
    # ndzip's ratio does not depend on the backend (the streams are identical): one bar.
    ratios = defaultdict(list)
    for r in data:
        name = "ndzip" if is_ndzip(r) else (r["codec"] if r["backend"] == "host"
                                            else "%s (%s)" % (r["codec"], r["backend"]))
        ratios[((r["dataset"], r["type"], r["dims"]), name)].append(r["ratio"])
    for (g, name), vs in ratios.items():
        if name == "ndzip" and max(vs) - min(vs) > 1e-6:
            warn("ndzip ratio of %s differs between backends (%s); the bar shows the mean"
                 % (g[0], ", ".join("%.4f" % v for v in vs)))
    values = {k: sum(v) / len(v) for k, v in ratios.items()}
    series = []
    for r in data:
        name = "ndzip" if is_ndzip(r) else (r["codec"] if r["backend"] == "host"
                                            else "%s (%s)" % (r["codec"], r["backend"]))
        if name not in series:
            series.append(name)
    series.sort(key=lambda s: s != "ndzip")
    # A last group: the mean over the inputs each codec covers.
    mean_key = ("(mean)", "", "")
    if len(groups) > 1:
        for s in series:
            vs = [values[(g, s)] for g in groups if (g, s) in values]
            if vs:
                values[(mean_key, s)] = sum(vs) / len(vs)
        groups.append(mean_key)
        labels[mean_key] = "mean over\n%s" % kind
    colors = {s: NDZIP_BAR_COLOR if s == "ndzip" else styles.peer_color(s.split(" ")[0])
              for s in series}
    per_panel = max(3, 70 // max(1, len(series)))  # at most about 70 bars a panel
    panels = [groups[i:i + per_panel] for i in range(0, len(groups), per_panel)]
    if len(panels) > 1 and len(panels[-1]) < per_panel:  # spread the groups evenly
        per_panel = int(math.ceil(len(groups) / float(len(panels))))
        panels = [groups[i:i + per_panel] for i in range(0, len(groups), per_panel)]
    height = 3.8 * len(panels) + 1.6
    fig, axes = plt.subplots(len(panels), 1, figsize=(14, height), squeeze=False)
    axes = axes[:, 0]
    ymax = max(values.values()) * 1.12
    containers = {}
    for ax, panel in zip(axes, panels):
        containers.update(grouped_bars(ax, panel, series, values, colors, False,
                                       (lambda v: "%.2f" % v) if len(panel) * len(series) <= 80
                                       else None))
        ax.axhline(1.0, color="#444444", linestyle="--", linewidth=1)
        if mean_key in panel:
            ax.axvline(panel.index(mean_key) - 0.5, color="#777777", linestyle=":", linewidth=1)
        ax.set_ylim(0, max(1.08, ymax + 0.08))
        ax.set_ylabel("Ratio (compressed / input)\nlower is better", fontsize=11)
        ax.grid(True, axis="y", alpha=0.35)
        set_group_ticks(ax, [labels[g] for g in panel])
    what = "dataset" if kind == "datasets" else "synthetic field"
    if len(series) > 1:
        axes[0].set_title("Compression ratio per %s: ndzip (identical on every backend) and CPU "
                          "peer codecs; dashed line = no compression" % what, fontsize=12)
    else:
        axes[0].set_title("ndzip compression ratio per %s (identical on every backend); dashed "
                          "line = no compression" % what, fontsize=12)
        fig.tight_layout()
        save(fig, out_dir, "ratio_per_dataset.png", dpi, written)
        return
    handles = [containers[s] for s in series if s in containers]
    ncol = min(6, len(handles))
    fig.legend(*row_major(handles, [s for s in series if s in containers], ncol),
               loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol, fontsize=10,
               frameon=False)
    fig.tight_layout()
    # Leave room under the last panel's tick labels for the legend.
    legend_rows = int(math.ceil(len(handles) / 6.0))
    fig.subplots_adjust(bottom=fig.subplotpars.bottom + (0.25 * legend_rows + 0.25) / height)
    fig.legends[0].set_bbox_to_anchor((0.5, (0.25 * legend_rows + 0.2) / height))
    save(fig, out_dir, "ratio_per_dataset.png", dpi, written)


def log2_ticks(ax, values, formatter):
    vs = sorted(set(values))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(vs))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: formatter(v)))


def size_axes(ax, sizes, xlabel, direction):
    # GB/s against size, both log scale, one panel per direction.
    log2_ticks(ax, sizes, fmt_bytes)
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_xlabel(xlabel, fontsize=11)
    ax.set_title("%s" % direction.capitalize(), fontsize=12)
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", alpha=0.12)


def sweep_label(key, multi_types, threads, multi_threads):
    codec, backend, typ = key
    label = "ndzip %s" % backend if codec == "ndzip" else "%s (%s, %d thr)" % (codec, backend,
                                                                               threads)
    if codec == "ndzip" and (backend in multi_threads or backend == "openmp"):
        label += " (%d thr)" % threads
    if multi_types:
        label += ", %s" % typ
    return label


def plot_scaling_size(sweep, styles, out_dir, dpi, written):
    # One line per (codec, backend, type), at the thread count with the most sizes (ties: most
    # threads), so a thread sweep at several counts still gives one size curve per backend.
    by = defaultdict(lambda: defaultdict(dict))
    for r in sweep:
        by[(r["codec"], r["backend"], r["type"])][r["threads"]][r["bytes"]] = r
    lines = OrderedDict()
    first = {}
    for i, r in enumerate(sweep):
        first.setdefault((r["codec"], r["backend"], r["type"]), i)
    for key in sorted(by, key=lambda k: (k[0] != "ndzip", first[k])):
        threads = max(by[key], key=lambda t: (len(by[key][t]), t))
        pts = by[key][threads]
        if len(pts) >= 2:
            lines[key] = (threads, [pts[b] for b in sorted(pts)])
    if not lines:
        note("scaling_size.png skipped: no `sweep` rows with at least two input sizes")
        return
    multi_types = len({k[2] for k in lines}) > 1
    multi_threads = {k[1] for k in by if len(by[k]) > 1}
    sizes = sorted({r["bytes"] for _, rs in lines.values() for r in rs})
    types = sorted({k[2] for k in lines}, key=type_order)
    fig, axes = plt.subplots(1, 2, figsize=(14, 7), sharey=True)
    handles, names = [], []
    for ax, (direction, column) in zip(axes, DIRECTIONS):
        for key, (threads, rs) in lines.items():
            codec, backend, _ = key
            if codec == "ndzip":
                linestyle, marker = TYPE_STYLES[types.index(key[2]) % len(TYPE_STYLES)]
                style = dict(color=styles.backend_color(backend), marker=marker, linewidth=2.2,
                             markersize=7, linestyle=linestyle)
            else:
                style = dict(color=styles.peer_color(codec), marker=styles.peer_marker(codec),
                             markeredgecolor="#333333", linewidth=1.8, markersize=7,
                             linestyle=":")
            xs = [r["bytes"] for r in rs if r[column] > 0]
            ys = [r[column] for r in rs if r[column] > 0]
            (h,) = ax.plot(xs, ys, **style)
            if ax is axes[0]:
                handles.append(h)
                names.append(sweep_label(key, multi_types, threads, multi_threads))
        size_axes(ax, sizes, "Input size (log scale)", direction)
    axes[0].set_ylabel("Throughput [GB/s of uncompressed data] (log scale)", fontsize=11)
    fig.suptitle("Throughput vs. input size (sweep: %s synthetic fields), per backend and codec"
                 % "/".join(types), fontsize=13)
    ncol = min(4, len(handles))
    legend_in = 0.3 * int(math.ceil(len(handles) / float(ncol))) + 0.15
    fig.legend(*row_major(handles, names, ncol), loc="lower center", ncol=ncol, fontsize=10,
               frameon=False)
    fig.tight_layout(rect=(0, legend_in / fig.get_figheight(), 1, 1))
    save(fig, out_dir, "scaling_size.png", dpi, written)


def plot_scaling_threads(sweep, styles, out_dir, dpi, written):
    by = defaultdict(lambda: defaultdict(dict))  # (codec, backend, type, bytes) -> threads -> row
    for r in sweep:
        if r["backend"] != "host":
            by[(r["codec"], r["backend"], r["type"], r["bytes"])][r["threads"]] = r
    curves = {k: v for k, v in by.items() if len(v) >= 2}
    backends = sorted({k[1] for k in curves}, key=lambda b: (b != "openmp", b))
    if not curves:
        note("scaling_threads.png skipped: no `sweep` rows of one backend at two or more thread "
             "counts (run the sweep with several OMP_NUM_THREADS and --append)")
        return
    backend = backends[0]
    if len(backends) > 1:
        note("scaling_threads.png shows backend %s only (also varied: %s)"
             % (backend, ", ".join(backends[1:])))
    curves = OrderedDict(sorted(((k, v) for k, v in curves.items() if k[1] == backend),
                                key=lambda kv: (kv[0][0] != "ndzip", type_order(kv[0][2]),
                                                kv[0][3])))
    types = sorted({k[2] for k in curves}, key=type_order)
    multi_types = len(types) > 1
    all_threads = sorted({t for v in curves.values() for t in v})
    cmap = plt.get_cmap("viridis")
    fig, axes = plt.subplots(1, 2, figsize=(14, 6.5), sharey=True)
    for ax, (direction, column) in zip(axes, DIRECTIONS):
        handles, names = [], []
        for i, (key, pts) in enumerate(curves.items()):
            codec, _, typ, nbytes = key
            ts = sorted(t for t in pts if pts[t][column] > 0)
            if len(ts) < 2:
                continue
            ys = [pts[t][column] for t in ts]
            color = cmap(0.9 * i / max(1, len(curves) - 1))
            linestyle, marker = TYPE_STYLES[types.index(typ) % len(TYPE_STYLES)]
            (h,) = ax.plot(ts, ys, marker=marker, linestyle=linestyle, color=color, linewidth=2,
                           markersize=6)
            speedup = ys[-1] / ys[0]
            name = "%s%s%s: %.1f\u00d7 from %d to %d thr" % (
                fmt_bytes(nbytes), (", " + typ) if multi_types else "",
                "" if codec == "ndzip" else ", " + codec, speedup, ts[0], ts[-1])
            handles.append(h)
            names.append(name)
        if not handles:
            continue
        # Ideal scaling from the largest input's smallest thread count.
        key = max(curves, key=lambda k: (k[0] == "ndzip", k[3]))
        pts = curves[key]
        t0 = min(t for t in pts if pts[t][column] > 0)
        y0 = pts[t0][column]
        ideal_t = [t for t in all_threads if t >= t0]
        (h,) = ax.plot(ideal_t, [y0 * t / t0 for t in ideal_t], color="black", linestyle="--",
                       linewidth=1.3)
        handles.append(h)
        names.append("ideal (linear) scaling of %s" % fmt_bytes(key[3]))
        log2_ticks(ax, all_threads, lambda v: "%d" % v)
        ax.set_yscale("log")
        plain_log(ax.yaxis)
        ax.set_xlabel("%s threads (log scale)" % ("OpenMP" if backend == "openmp" else backend),
                      fontsize=11)
        ax.set_title(direction.capitalize(), fontsize=12)
        ax.grid(True, which="major", alpha=0.4)
        ax.grid(True, which="minor", alpha=0.12)
        ax.legend(handles, names, loc="upper left", fontsize=9, title="input size",
                  title_fontsize=9, framealpha=0.9)
    axes[0].set_ylabel("Throughput [GB/s of uncompressed data] (log scale)", fontsize=11)
    fig.suptitle("ndzip %s thread scaling (sweep), one line per input size"
                 % ("OpenMP" if backend == "openmp" else backend), fontsize=13)
    fig.tight_layout()
    save(fig, out_dir, "scaling_threads.png", dpi, written)


LATENCY_STYLES = {"ndzip": ("-", "o", "synchronous, one call"),
                  "ndzip-async": ("--", "s", "asynchronous, one call"),
                  "ndzip-batch": (":", "D", "batch of copies, one call")}


def array_bytes(r):
    # `latency` rows name the size of one array (synthetic-<bytes>B); batch rows count all copies.
    name = r["dataset"]
    if name.startswith("synthetic-") and name.endswith("B"):
        try:
            return float(name[len("synthetic-"):-1])
        except ValueError:
            pass
    return r["bytes"]


def plot_latency_size(latency, styles, out_dir, dpi, written):
    lines = defaultdict(dict)
    for r in latency:
        lines[(r["codec"], r["backend"])][array_bytes(r)] = r
    lines = OrderedDict((k, [v[b] for b in sorted(v)]) for k, v in sorted(lines.items())
                        if len(v) >= 2)
    if not lines:
        note("latency_size.png skipped: no `latency` rows with at least two sizes")
        return
    sizes = sorted({array_bytes(r) for rs in lines.values() for r in rs})
    fig, axes = plt.subplots(1, 2, figsize=(14, 7), sharey=True)
    handles, names = [], []
    for ax, (direction, column) in zip(axes, DIRECTIONS):
        for (codec, backend), rs in lines.items():
            linestyle, marker, what = LATENCY_STYLES.get(codec, ("-.", "x", codec))
            xs = [array_bytes(r) for r in rs if r[column] > 0]
            ys = [r[column] for r in rs if r[column] > 0]
            (h,) = ax.plot(xs, ys, color=styles.backend_color(backend), marker=marker,
                           linestyle=linestyle, linewidth=2.2, markersize=7)
            if ax is axes[0]:
                handles.append(h)
                names.append("ndzip %s, %s" % (backend, what))
        size_axes(ax, sizes, "Size of one array (log scale)", direction)
    axes[0].set_ylabel("Throughput [GB/s of uncompressed data] (log scale)", fontsize=11)
    fig.suptitle("Throughput vs. array size: one call at a time, or copies as one batch "
                 "(1-D float, result read on the host)", fontsize=13)
    ncol = min(3, len(handles))
    legend_in = 0.3 * int(math.ceil(len(handles) / float(ncol))) + 0.15
    fig.legend(*row_major(handles, names, ncol), loc="lower center", ncol=ncol, fontsize=10,
               frameon=False)
    fig.tight_layout(rect=(0, legend_in / fig.get_figheight(), 1, 1))
    save(fig, out_dir, "latency_size.png", dpi, written)


def main():
    parser = argparse.ArgumentParser(
        prog="plot-bench.py", description="\n\n".join(p for p in __doc__.split("\n\n")
                                                        if not p.startswith("usage:")),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+", help="CSV file(s) written by ndzip-bench --csv")
    parser.add_argument("--out", required=True, help="folder for the PNG files (created)")
    parser.add_argument("--dpi", type=int, default=110, help="resolution (default 110)")
    args = parser.parse_args()

    rows = read_rows(args.csv)
    if not rows:
        sys.exit("plot-bench: no verified rows in %s" % ", ".join(args.csv))
    os.makedirs(args.out, exist_ok=True)
    plt.rcParams.update({"font.size": 10, "axes.titleweight": "bold"})
    styles = Styles()
    written = []

    data, kind = corpus_rows(rows)
    if data:
        plot_ratio_vs_throughput(rows, data, kind, styles, args.out, args.dpi, written)
        plot_throughput_per_dataset(rows, data, kind, styles, args.out, args.dpi, written)
        plot_ratio_per_dataset(data, kind, styles, args.out, args.dpi, written)
    else:
        note("ratio_vs_throughput_*.png, throughput_per_dataset.png, ratio_per_dataset.png "
             "skipped: no `dataset` (or `synthetic`) rows")

    sweep = [r for r in rows if r["mode"] == "sweep"]
    if sweep:
        plot_scaling_size(sweep, styles, args.out, args.dpi, written)
        plot_scaling_threads(sweep, styles, args.out, args.dpi, written)
    else:
        note("scaling_size.png, scaling_threads.png skipped: no `sweep` rows")

    latency = [r for r in rows if r["mode"] == "latency"]
    if latency:
        plot_latency_size(latency, styles, args.out, args.dpi, written)
    else:
        note("latency_size.png skipped: no `latency` rows")

    if not written:
        sys.exit("plot-bench: no figure could be drawn from %s" % ", ".join(args.csv))
    print("plot-bench: wrote %d file(s):" % len(written))
    for path in written:
        print("  " + path)


if __name__ == "__main__":
    main()
