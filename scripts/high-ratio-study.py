#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Issue #27's prototype study: what each candidate high-ratio stage would store, on a corpus.

Reads a manifest (`file;float|double;dims slowest first`, as ndzip-bench) and prints, per
dataset and as the mean, the ratio (stored / original bytes) of each candidate, computed with
NumPy from the ndzip transform (rotl1, integer Lorenzo per hypercube, sign fold; format spec
sections 5.2-5.5). Entropy figures are ideal order-0 costs; the Huffman figures use real code
lengths (unlimited) and include 128 bytes of code lengths per context table.

  scripts/high-ratio-study.py ../shared/data/manifest.csv [--zstd]

--zstd also runs `zstd -1` on the default stream (the reference the issue quotes).
"""
import heapq, os, subprocess, sys
import numpy as np

SIDE = {1: 4096, 2: 64, 3: 16}


def rotl1(v, W):
    return (v << v.dtype.type(1)) | (v >> v.dtype.type(W - 1))


def fold(r, W):
    top = r.dtype.type(1) << r.dtype.type(W - 1)
    return np.where(r & top, r ^ (top - r.dtype.type(1)), r)


def gray(r, W):  # bit b <- bit b XOR bit b+1, below the sign bit
    low = (r.dtype.type(1) << r.dtype.type(W - 1)) - r.dtype.type(1)
    return r ^ ((r & low) >> r.dtype.type(1))


def hypercube_residuals(a, W):
    s = SIDE[a.ndim]
    C = [n // s for n in a.shape]
    if min(C) == 0:
        return np.zeros((0, 4096), a.dtype)
    v = rotl1(a[tuple(slice(0, c * s) for c in C)], W)
    if a.ndim == 1:
        h = v.reshape(C[0], s)
    elif a.ndim == 2:
        h = v.reshape(C[0], s, C[1], s).transpose(0, 2, 1, 3)
    else:
        h = v.reshape(C[0], s, C[1], s, C[2], s).transpose(0, 2, 4, 1, 3, 5)
    h = h.reshape((-1,) + (s,) * a.ndim)
    for ax in range(1, a.ndim + 1):
        h = np.diff(h, axis=ax, prepend=np.zeros_like(np.take(h, [0], axis=ax)))
    return fold(h.reshape(-1, 4096), W)


def border_values(a):
    s = SIDE[a.ndim]
    inside = np.zeros(a.shape, bool)
    inside[tuple(slice(0, (n // s) * s) for n in a.shape)] = True
    return a[~inside]  # row-major order, as the stream stores it


def border_residuals(a, W):
    """The border as 1-D pieces of 4096 (zero-padded), 1-D Lorenzo + fold."""
    b = rotl1(border_values(a), W)
    if b.size == 0:
        return np.zeros((0, 4096), a.dtype)
    v = np.zeros((b.size + 4095) // 4096 * 4096, a.dtype)
    v[: b.size] = b
    v = v.reshape(-1, 4096)
    return fold(np.diff(v, axis=1, prepend=np.zeros((v.shape[0], 1), a.dtype)), W)


def blocks(res, W):
    """Chunk heads (words) and the column words as bytes, with each column's plane and its
    rank among its chunk's present planes (0: the highest)."""
    U, H, n = W // 8, 4096 // W, res.shape[0]
    ch = res.reshape(n, H, W)
    heads = np.bitwise_or.reduce(ch, axis=2)
    bits = np.unpackbits(ch.view(np.uint8).reshape(n, H, W, U)[..., ::-1], axis=-1)
    planes = bits.transpose(0, 1, 3, 2)  # (block, chunk, plane from the top, row)
    present = planes.any(-1)
    cols = np.packbits(planes[present], axis=-1)
    rank = (np.cumsum(present, axis=2) - 1)[present]
    plane = (W - 1 - np.broadcast_to(np.arange(W), present.shape))[present]
    return heads, cols, plane, rank


def entropy_bytes(x):
    if x.size == 0:
        return 0.0
    c = np.bincount(x.ravel(), minlength=256)
    p = c[c > 0] / x.size
    return float(-(p * np.log2(p)).sum() * x.size / 8)


def huffman_bytes(x):
    counts = np.bincount(x.ravel(), minlength=256)
    live = [(int(n), i) for i, n in enumerate(counts) if n]
    if len(live) <= 1:
        return sum(n for n, _ in live) / 8
    length = {i: 0 for _, i in live}
    heap = [(n, k, [i]) for k, (n, i) in enumerate(live)]
    heapq.heapify(heap)
    k = len(heap)
    while len(heap) > 1:
        a, b = heapq.heappop(heap), heapq.heappop(heap)
        for i in a[2] + b[2]:
            length[i] += 1
        heapq.heappush(heap, (a[0] + b[0], k, a[2] + b[2]))
        k += 1
    return sum(int(counts[i]) * l for i, l in length.items()) / 8


def by_context(x, ctx, cost, table_bytes=0):
    if x.size == 0:
        return 0.0
    order = np.argsort(ctx, kind="stable")
    xs, cs = x[order], ctx[order]
    parts = np.split(xs, np.flatnonzero(np.diff(cs)) + 1)
    return sum(cost(p) + table_bytes for p in parts)


def candidates(a, W, raw_stream):
    U = W // 8
    res, bres = hypercube_residuals(a, W), border_residuals(a, W)
    n = res.shape[0]
    table = -(-4 * n // U) * U
    border_raw = border_values(a).size * U
    out = {"default ndzip": len(raw_stream)}
    b = np.frombuffer(raw_stream, np.uint8)
    out["order-0 entropy of the default stream"] = entropy_bytes(b)
    for use_gray in (False, True):
        all_res = np.concatenate([res, bres])
        if use_gray:
            all_res = gray(all_res, W)
        heads, cols, plane, rank = blocks(all_res, W)
        hb = heads.view(np.uint8).reshape(-1, U)
        pos_h = np.tile(np.arange(U), len(hb))
        words = heads.size + cols.shape[0]
        tag = "gray, " if use_gray else ""
        out[tag + "border as 1-D hypercubes"] = 4 * len(all_res) + words * U
        ent_h = by_context(hb.ravel(), pos_h, entropy_bytes)
        ctx_plane = (plane[:, None] * U + np.arange(U)).ravel()
        out[tag + "border 1-D + order-0 entropy (heads by byte, columns by plane x byte)"] = (
            4 * len(all_res) + ent_h + by_context(cols.ravel(), ctx_plane, entropy_bytes))
        if use_gray:
            ctx_rank = np.repeat(np.minimum(rank, 3), U)
            out[tag + "border 1-D + Huffman (heads by byte, columns by rank 0/1/2/3+), tables"] = (
                4 * len(all_res) + by_context(hb.ravel(), pos_h, huffman_bytes, 128)
                + by_context(cols.ravel(), ctx_rank, huffman_bytes, 128))
    del table, border_raw
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    manifest = sys.argv[1]
    root = os.path.dirname(os.path.abspath(manifest))
    ndzip = os.environ.get("NDZIP", "build/bin/ndzip")
    rows = []
    for line in open(manifest):
        if not line.strip():
            continue
        name, kind, dims = line.strip().split(";")
        W = 32 if kind == "float" else 64
        shape = [int(x) for x in dims.split()]
        a = np.fromfile(os.path.join(root, name), np.uint32 if W == 32 else np.uint64).reshape(shape)
        stream = subprocess.run([ndzip, "compress", "--raw", "-q", "-t", kind, "-n", "x".join(map(str, shape)), "-c",
                                 os.path.join(root, name)], check=True, capture_output=True).stdout
        r = candidates(a, W, stream)
        if "--zstd" in sys.argv:
            r["zstd -1 of the default stream"] = len(subprocess.run(
                ["zstd", "-q", "-1", "-c"], input=stream, check=True, capture_output=True).stdout)
        raw = a.size * (W // 8)
        rows.append((name, {k: v / raw for k, v in r.items()}))
        print(name, " ".join(f"{v / raw:.3f}" for v in r.values()), flush=True)
    keys = list(rows[0][1].keys())
    print("\n| candidate | mean ratio | " + " | ".join(n.split(".")[0] for n, _ in rows) + " |")
    print("|---|---:|" + "---:|" * len(rows))
    for k in keys:
        v = [r[k] for _, r in rows]
        print(f"| {k} | **{np.mean(v):.3f}** | " + " | ".join(f"{x:.3f}" for x in v) + " |")


if __name__ == "__main__":
    main()
