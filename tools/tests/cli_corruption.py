#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Corruption campaign against the ndzip tool, on every backend of the build.

Usage: cli_corruption.py NDZIP_BINARY [MUTANTS_PER_FILE]

Compresses a smooth 3-D float array (framed) and a smooth 2-D double array (raw stream, so that
the decoder itself sees every mutation: a frame's checksum catches most stream damage first),
then feeds mutated copies to `ndzip decompress` and `ndzip info` on every backend: truncations,
bit flips, overwritten byte runs and forged header fields. Every run must exit 0 or 1 within the
time limit (no signal, no hang); a failed decompress leaves no output and no temporary file; a
successful one writes exactly the array's size. The frame's checksum covers every other byte,
so every changed frame must fail both commands. Exits 1 at the first violation.
"""
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

TIMEOUT_S = 120


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def run(ndzip, args, what):
    try:
        proc = subprocess.run([ndzip] + args, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        fail(f"{what}: 'ndzip {' '.join(args)}' did not finish within {TIMEOUT_S} s")
    if proc.returncode not in (0, 1):
        fail(f"{what}: 'ndzip {' '.join(args)}' exited with {proc.returncode}; stderr: "
             f"{proc.stderr.decode(errors='replace')}")
    if proc.returncode == 1 and b"ndzip: error:" not in proc.stderr:
        fail(f"{what}: failed without an 'ndzip: error:' message")
    return proc.returncode


def smooth(shape, fmt):
    values = []
    for index in range(math.prod(shape)):
        rest, coords = index, []
        for n in reversed(shape):
            coords.append(rest % n)
            rest //= n
        values.append(sum(math.sin(0.05 * (a + 1) * c) for a, c in enumerate(coords)))
    return struct.pack("<%d%s" % (len(values), fmt), *values)


def mutants(data, count, rng, header_bytes):
    """(description, bytes) pairs; the first 48 bytes of a frame are its header."""
    out = []
    for length in sorted(rng.sample(range(len(data)), min(count // 4, len(data)))):
        out.append((f"truncated to {length}", data[:length]))
    for _ in range(count // 4):
        bit = rng.randrange(len(data) * 8)
        m = bytearray(data)
        m[bit // 8] ^= 1 << (bit % 8)
        out.append((f"bit {bit % 8} of byte {bit // 8} flipped", bytes(m)))
    for _ in range(count // 4):
        at = rng.randrange(len(data))
        m = bytearray(data)
        for i in range(at, min(at + 8, len(data))):
            m[i] = rng.randrange(256)
        out.append((f"bytes {at}..{at + 7} overwritten", bytes(m)))
    for _ in range(count - len(out)):  # forged header fields: frame header or offset table
        at = rng.randrange(0, header_bytes, 4)
        m = bytearray(data)
        value = rng.choice([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, rng.randrange(1 << 32)])
        m[at:at + 4] = struct.pack("<I", value)
        out.append((f"header word at {at} set to {value:#x}", bytes(m)))
    return out


def main():
    if len(sys.argv) not in (2, 3):
        fail("usage: cli_corruption.py NDZIP_BINARY [MUTANTS_PER_FILE]")
    ndzip = os.path.abspath(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) == 3 else 120
    backends = subprocess.run([ndzip, "--list-backends"], capture_output=True, check=True,
                              text=True).stdout.split()
    rng = random.Random(20260522)
    with tempfile.TemporaryDirectory(prefix="ndzip-cli-corruption.") as work:
        os.chdir(work)
        cases = [  # name, raw?, type, shape, header bytes to forge (frame or offset table)
            ("float3d", False, "float", (40, 36, 20), 48 + 8),
            ("double2d", True, "double", (130, 200), 8),
        ]
        runs = 0
        for name, raw, type_name, shape, header_bytes in cases:
            array = smooth(shape, "f" if type_name == "float" else "d")
            with open(name + ".raw", "wb") as f:
                f.write(array)
            shape_args = ["-t", type_name, "-n"] + [str(n) for n in shape]
            raw_args = ["--raw"] + shape_args if raw else []
            compress_args = ["compress"] + shape_args + (["--raw"] if raw else [])
            if run(ndzip, compress_args + [name + ".raw", name + ".ndz"], "compress") != 0:
                fail(f"cannot compress {name}")
            with open(name + ".ndz", "rb") as f:
                stream = f.read()
            for description, data in mutants(stream, count, rng, header_bytes):
                with open("in.ndz", "wb") as f:
                    f.write(data)
                for backend in backends:
                    what = f"{name}, {description}, backend {backend}"
                    status = run(ndzip, ["decompress", "-b", backend] + raw_args +
                                 ["in.ndz", "out.raw"], what)
                    left = [p for p in os.listdir(".") if p.startswith("out.raw")]
                    if status == 1 and left:
                        fail(f"{what}: failed but left {left}")
                    if status == 0 and not raw and data != stream:
                        fail(f"{what}: a changed frame was decompressed")
                    if status == 0:
                        if os.path.getsize("out.raw") != len(array):
                            fail(f"{what}: output of {os.path.getsize('out.raw')} bytes, "
                                 f"expected {len(array)}")
                        os.remove("out.raw")
                    runs += 1
                if not raw:
                    status = run(ndzip, ["info", "in.ndz"], f"{name}, {description}, info")
                    if status == 0 and data != stream:
                        fail(f"{name}, {description}: info did not report a changed frame")
                    runs += 1
        print(f"cli_corruption: {runs} runs on backends {', '.join(backends)}: no crash, no hang, "
              "no partial output")


if __name__ == "__main__":
    main()
