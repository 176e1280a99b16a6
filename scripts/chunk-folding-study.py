#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Issue #63 item 1's study: which folding of a small chunk to compress, picked by which rule.

ndzip codes whole hypercubes (4096 elements: 4096, 64x64 or 16x16x16, float and double alike)
and stores the rest of a grid (the border) raw, so a chunk with an extent below the hypercube
side stores most of its values raw. *Folding* codes the same C-ordered chunk memory as a grid of
lower rank with its slowest dimensions merged ((a, b, c) -> (a*b, c) -> (a*b*c); (a, b) ->
(a*b)): a free reshape, measured here with today's `ndzip.compress_raw(chunk.reshape(folded))`.

For every dataset of the manifest (`file;float|double;extents slowest first`, files relative to
the manifest) and every chunking

  whole      one chunk, the whole array (the reference: no folding is what ndzip does today)
  zarr       Zarr 2.13's default, zarr.util.guess_chunks (also xarray's for Zarr without dask)
  h5py       h5py's chunks=True, h5py._hl.filters.guess_chunk
  dask       dask's "auto", dask.array.core.normalize_chunks (skipped when dask is missing)
  dask-1MiB  supplementary: dask's "auto" with array.chunk-size = 1MiB (--dask-small; not a
             default, shown because the 128 MiB default leaves every corpus array whole)

the array is split into its chunks and every folding (no folding, each merge of the slowest
dimensions) is compressed chunk by chunk: total bytes and the fraction of elements in whole
hypercubes. Edge chunks are coded two ways (--edges): as the smaller sub-arrays, and padded with 0
to the full chunk shape, which is what Zarr 2 and HDF5 store and what their codec sees (h5py's
chunks=True on ocean_levitus_temp, (3, 23, 90), pads 7.3 %: most of the issue's 1.074x raw).
Then rules that pick one folding per chunk shape from the shape alone are evaluated against the
oracle (the smallest folding per chunk, by trial):

  R0         never fold (what ndzip does today)
  R1         the folding with the most elements in whole hypercubes, ties to the higher rank
  R2@X       the highest rank whose coverage is at least X times the best coverage
  R3@T       no folding while the unfolded coverage is at least T, else R1
  R4         always fold to 1-D (for comparison)

The summary prints, per edge coding, mode, rule and chunking: the mean ratio (compressed / raw)
over datasets, the mean of compressed_rule / compressed_whole-array (unfolded), the worst
dataset's ratio, how many datasets exceed raw + 1 %, whether the issue's targets hold (mean
within 10 % of whole-array chunks, none above raw + 1 %) and the worst dataset's excess over the
oracle; then the full chunk shapes whose best folding leaves more than half the elements in the
border, with a suggested chunk shape. Both modes (--modes) run on every folding; the whole
corpus takes well under a minute on one core. Sizes are bare streams (compress_raw): a frame adds
48 bytes per chunk, HDF5 and Zarr their own metadata.

  cd /work/main && PYTHONPATH=build/python /usr/bin/python3 scripts/chunk-folding-study.py \\
      --csv docs/bench/chunk-folding-study.csv

The CSV has one row per dataset x chunking x edge coding x mode x folding (selection=fixed;
folding is the coded shape of a full chunk; edge chunks merge the same dimensions) and one per
rule (selection=rule; folding names the rule or "oracle"). raw_bytes is the array's size,
compressed_bytes the sum over its chunks, hypercube_coverage the fraction of the coded elements
(padding included) in whole hypercubes.
"""
import argparse, csv, itertools, math, os, sys, time
import numpy as np

import ndzip

SIDE = {1: 4096, 2: 64, 3: 16}
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MANIFEST = os.path.join(HERE, "..", "..", "shared", "data", "manifest.csv")


def foldings(shape):
    """Coded shapes of `shape`: k = 0 (none), k = 1 (two slowest merged), ..."""
    return [(math.prod(shape[:k + 1]),) + tuple(shape[k + 1:]) for k in range(len(shape))]


def in_hypercubes(shape):
    s = SIDE[len(shape)]
    return math.prod((n // s) * s for n in shape)


def coverage(shape):
    return in_hypercubes(shape) / math.prod(shape)


def fmt(shape):
    return "x".join(str(n) for n in shape)


# ---- rules: chunk shape -> k (number of slowest merges) -----------------------------------
def rule_r0(shape):
    return 0


def rule_r1(shape):
    cov = [coverage(f) for f in foldings(shape)]
    best = max(cov)
    return cov.index(best)  # first = highest rank


def rule_r2(x):
    def pick(shape):
        cov = [coverage(f) for f in foldings(shape)]
        best = max(cov)
        return next(k for k, c in enumerate(cov) if c >= x * best)
    return pick


def rule_r3(t):
    def pick(shape):
        return 0 if coverage(shape) >= t else rule_r1(shape)
    return pick


RULES = [("R0", rule_r0), ("R1", rule_r1)] \
    + [(f"R2@{x}", rule_r2(x)) for x in (0.9, 0.75, 0.5)] \
    + [(f"R3@{t}", rule_r3(t)) for t in (0.25, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9)] \
    + [("R4", lambda shape: len(shape) - 1)]


# ---- chunkings -------------------------------------------------------------------------------
def chunkings(shape, dtype, dask_small):
    out = [("whole", tuple(shape))]
    import zarr.util
    out.append(("zarr", tuple(int(c) for c in zarr.util.guess_chunks(shape, dtype.itemsize))))
    import h5py._hl.filters
    out.append(("h5py", tuple(int(c) for c in
                              h5py._hl.filters.guess_chunk(shape, None, dtype.itemsize))))
    try:
        import dask, dask.array.core as dac
    except ImportError:
        return out
    # regular chunks: the first block of every dimension is the full chunk extent
    out.append(("dask", tuple(int(c[0]) for c in dac.normalize_chunks("auto", shape, dtype=dtype))))
    if dask_small:
        with dask.config.set({"array.chunk-size": dask_small}):
            out.append((f"dask-{dask_small}", tuple(int(c[0]) for c in
                        dac.normalize_chunks("auto", shape, dtype=dtype))))
    return out


def chunk_slices(shape, chunk):
    ranges = [range(0, n, c) for n, c in zip(shape, chunk)]
    for origin in itertools.product(*ranges):
        yield tuple(slice(o, min(o + c, n)) for o, c, n in zip(origin, chunk, shape))


def suggest_chunk(chunk, extents):
    """A chunk shape near `chunk` for which some folding has most elements in whole hypercubes.

    First each extent rounded to the nearest multiple of the hypercube side s (16, 64 or 4096 by
    rank), at least s; an array extent not above s is taken whole (folding then merges it), and
    one that rounding up would push past the array's extent is rounded down instead. Where that
    still leaves more than half in the border (array extents below s), the chunk grows from its
    fastest dimension, each up to the array's extent, until it holds 4096 elements: its 1-D
    folding then has floor(n / 4096) * 4096 of its n elements in whole hypercubes. An array of
    fewer than 4096 elements has no such chunk (the whole array is returned)."""
    s = SIDE[len(chunk)]
    sug = []
    for c, n in zip(chunk, extents):
        if n <= s:
            m = n
        else:
            m = max(s, int(round(c / s)) * s)
            if m > n:
                m = (n // s) * s
        sug.append(m)
    if best_cov(tuple(sug)) >= 0.5:
        return tuple(sug)
    grown = list(chunk)
    for i in reversed(range(len(grown))):
        rest = math.prod(grown) // grown[i]
        grown[i] = min(extents[i], max(grown[i], -(-4096 // rest)))
        if math.prod(grown) >= 4096:
            break
    return tuple(grown)


def best_cov(shape):
    return max(coverage(f) for f in foldings(shape))


def parse_edges(text):
    out = []
    for e in text.split(","):
        e = e.strip()
        if e:
            out.append(None if e in ("none", "sub-array") else float(e))
    return out


def edge_name(fill):
    return "sub-array" if fill is None else f"padded {fill:g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("manifest", nargs="?", default=DEFAULT_MANIFEST,
                    help="manifest (default: ../shared/data/manifest.csv beside the checkout)")
    ap.add_argument("--csv", metavar="OUT", help="write the per-folding and per-rule rows here")
    ap.add_argument("--modes", default="ndzip,high_ratio",
                    help="comma-separated ndzip modes (default: ndzip,high_ratio)")
    ap.add_argument("--dask-small", default="1MiB",
                    help="also dask auto chunks at this array.chunk-size ('' to skip)")
    ap.add_argument("--only", help="comma-separated dataset names (for quick runs)")
    ap.add_argument("--edges", default="none,0",
                    help="how edge chunks are coded, comma-separated: 'none' = the smaller "
                         "sub-array, a number = padded to the full chunk shape with that value "
                         "(as Zarr 2 and HDF5 store them; HDF5's default fill is 0) "
                         "(default: none,0)")
    args = ap.parse_args()

    modes = [m for m in args.modes.split(",") if m]
    edge_fills = parse_edges(args.edges)
    root = os.path.dirname(os.path.abspath(args.manifest))
    only = set(args.only.split(",")) if args.only else None
    datasets = []
    for line in open(args.manifest):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, typ, ext = line.split(";")
        if only and name.split(".")[0] not in only and name not in only:
            continue
        datasets.append((name, np.dtype("<f4" if typ == "float" else "<f8"),
                         tuple(int(e) for e in ext.split())))
    try:
        import dask  # noqa: F401
        have_dask = True
    except ImportError:
        have_dask = False
        print("dask is not installed: the dask chunkings are skipped", file=sys.stderr)

    rows = []
    # results[(edges, mode)][chunking][dataset] = {"raw", "fixed": {k: bytes},
    #                                              "rule": {name: bytes}, "oracle", "chunk"}
    results = {(e, m): {} for e in map(edge_name, edge_fills) for m in modes}
    warnings = []
    chunk_names = []
    t0 = time.time()
    for name, dtype, shape in datasets:
        ds = name.split(".")[0]
        x = np.fromfile(os.path.join(root, name), dtype=dtype)
        assert x.size == math.prod(shape), (name, x.size, shape)
        x = x.reshape(shape)
        raw = x.nbytes
        rank = len(shape)
        for cname, chunk in chunkings(shape, dtype, args.dask_small if have_dask else ""):
            if cname not in chunk_names:
                chunk_names.append(cname)
            # warning: even the best folding of a full chunk leaves most values in the border
            bc = best_cov(chunk)
            if bc < 0.5 and cname != "whole":
                sug = suggest_chunk(chunk, shape)
                warnings.append((ds, cname, chunk, bc, sug, best_cov(sug),
                                 foldings(sug)[rule_r1(sug)]))
            sub = [np.ascontiguousarray(x[sl]) for sl in chunk_slices(shape, chunk)]
            for fill in edge_fills:
                edges = edge_name(fill)
                pieces = list(sub)
                if fill is not None:
                    for i, p in enumerate(pieces):
                        if p.shape != chunk:
                            q = np.full(chunk, fill, dtype)
                            q[tuple(slice(0, n) for n in p.shape)] = p
                            pieces[i] = q
                shapes = sorted({p.shape for p in pieces})
                picks = {rn: {s: rf(s) for s in shapes} for rn, rf in RULES}
                elements = sum(p.size for p in pieces)
                base = dict(dataset=ds, dtype=dtype.name, shape=fmt(shape), chunking=cname,
                            chunk_shape=fmt(chunk), n_chunks=len(pieces), edge_chunks=edges)
                for mode in modes:
                    sizes = [{k: len(ndzip.compress_raw(p.reshape(foldings(p.shape)[k]),
                                                        mode=mode)) for k in range(rank)}
                             for p in pieces]  # per piece: {k: bytes}
                    fixed = {}
                    for k in range(rank):
                        fixed[k] = sum(sz[k] for sz in sizes)
                        cov = sum(in_hypercubes(foldings(p.shape)[k]) for p in pieces) / elements
                        rows.append(dict(base, selection="fixed", folding=fmt(foldings(chunk)[k]),
                                         mode=mode, raw_bytes=raw, compressed_bytes=fixed[k],
                                         hypercube_coverage=f"{cov:.4f}"))
                    rule = {}
                    for rn in picks:
                        rule[rn] = sum(sz[picks[rn][p.shape]] for sz, p in zip(sizes, pieces))
                        cov = sum(in_hypercubes(foldings(p.shape)[picks[rn][p.shape]])
                                  for p in pieces) / elements
                        rows.append(dict(base, selection="rule", folding=rn, mode=mode,
                                         raw_bytes=raw, compressed_bytes=rule[rn],
                                         hypercube_coverage=f"{cov:.4f}"))
                    oracle = sum(min(sz.values()) for sz in sizes)
                    rows.append(dict(base, selection="rule", folding="oracle", mode=mode,
                                     raw_bytes=raw, compressed_bytes=oracle,
                                     hypercube_coverage=""))
                    results[(edges, mode)].setdefault(cname, {})[ds] = dict(
                        raw=raw, fixed=fixed, rule=rule, oracle=oracle, chunk=chunk)
            print(f"[{time.time() - t0:6.1f}s] {ds:20s} {cname:9s} {fmt(chunk):14s} "
                  f"{len(sub):5d} chunks", file=sys.stderr, flush=True)

    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)

    # ---- summary ----
    for (edges, mode), res_mode in results.items():
        ref = res_mode["whole"]
        print(f"\n== mode {mode}, edge chunks {edges}: rule, chunking, mean ratio, mean vs "
              f"whole-array unfolded, worst vs raw (dataset), datasets > raw+1%, issue targets, "
              f"worst excess over the oracle (dataset) ==")
        for rn in [r for r, _ in RULES] + ["oracle"]:
            for cname in chunk_names:
                res = res_mode.get(cname)
                if not res:
                    continue
                ratios, rels, excess = {}, [], {}
                for ds, r in res.items():
                    b = r["oracle"] if rn == "oracle" else r["rule"][rn]
                    ratios[ds] = b / r["raw"]
                    excess[ds] = b / r["oracle"]
                    rels.append(b / ref[ds]["rule"]["R0"])
                worst = max(ratios, key=ratios.get)
                over = sum(1 for v in ratios.values() if v > 1.01)
                met = np.mean(rels) <= 1.10 and over == 0
                print(f"{rn:8s} {cname:10s} {np.mean(list(ratios.values())):7.4f} "
                      f"{np.mean(rels):7.4f} {ratios[worst]:7.4f} ({worst:18s}) {over:2d} "
                      f"{'met   ' if met else 'MISSED'} "
                      f"{max(excess.values()):7.4f} ({max(excess, key=excess.get)})")
        print(f"\n-- mode {mode}, edge chunks {edges}: per chunking and dataset, full chunk -> "
              f"its R1 folding; ratio for R0 / R1 / R3@0.75 / oracle --")
        for cname in chunk_names:
            for ds, r in res_mode.get(cname, {}).items():
                k = rule_r1(r["chunk"])
                print(f"{cname:10s} {ds:20s} {fmt(r['chunk']):14s} -> "
                      f"{fmt(foldings(r['chunk'])[k]):14s} "
                      + " ".join(f"{v / r['raw']:7.4f}" for v in
                                 (r["rule"]["R0"], r["rule"]["R1"], r["rule"]["R3@0.75"],
                                  r["oracle"])))

    print("\n== full chunk shapes whose best folding leaves > 1/2 of the elements in the border ==")
    for ds, cname, chunk, bc, sug, sbc, sfold in warnings:
        print(f"{ds:20s} {cname:10s} {fmt(chunk):14s} best coverage {bc:.3f}; suggest "
              f"{fmt(sug)} (best coverage {sbc:.3f}, coded as {fmt(sfold)})")
    if not warnings:
        print("(none)")


if __name__ == "__main__":
    main()
