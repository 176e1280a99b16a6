#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The ndzip tool and NumPy's .npy files (issue 63, item 3).

Usage: cli_npy.py NDZIP_BINARY

In: a .npy file (format 1.0, 2.0 and 3.0, '<f4' and '<f8', 1-3-D) compresses without -t or -n
to exactly the frame of its values under its header's type and shape (so the header is never
compressed as values), from a file or standard input; -t and -n, where given, must match the
header. Refused with exit 1, an "ndzip: error:" naming the file and the reason, and no output
nor temporary file: Fortran order (unless one extent alone exceeds 1), big-endian and other
dtypes, 0-D, 4-D and empty arrays, headers whose length field lies (too long, too short, past
the end of the file, 4 GiB), truncated files and extra bytes, and malformed dicts.
Out: -d writes a .npy file for an output named *.npy and with --npy (also to standard output),
which numpy.load reads back bit for bit (NaN payloads and -0.0 included). Skipped (77) without
NumPy.
"""
import glob
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("skipped: NumPy is not installed")
    sys.exit(77)

TIMEOUT_S = 60


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def check(what):
    print("check: " + what)


def run(ndzip, args, stdin=None):
    source = {"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}
    try:
        return subprocess.run([ndzip] + args, capture_output=True, timeout=TIMEOUT_S, **source)
    except subprocess.TimeoutExpired:
        fail(f"'ndzip {' '.join(args)}' did not finish within {TIMEOUT_S} s")


def expect_ok(ndzip, args, stdin=None):
    proc = run(ndzip, args, stdin)
    if proc.returncode != 0:
        fail(f"'ndzip {' '.join(args)}' exited with {proc.returncode}: "
             f"{proc.stderr.decode(errors='replace')}")
    return proc


def expect_refused(ndzip, path, message, extra=()):
    """Compressing `path` fails with exit 1 naming it and `message`, and writes nothing."""
    args = list(extra) + [path]
    proc = run(ndzip, args)
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 1:
        fail(f"'ndzip {' '.join(args)}' exited with {proc.returncode}, expected 1: {err}")
    if "ndzip: error:" not in err or f"'{path}'" not in err or message not in err:
        fail(f"'ndzip {' '.join(args)}': stderr lacks the file and '{message}': {err}")
    left = glob.glob(path + ".ndz*")
    if left:
        fail(f"'ndzip {' '.join(args)}' left {left} behind")


def values(shape, dtype):
    """A smooth field with a few special values, whose bits must all come back."""
    count = int(np.prod(shape))
    a = np.sin(np.arange(count, dtype=np.float64) * 0.01).astype(dtype)
    a[0] = np.nan
    a[-1] = -0.0
    if count > 2:
        a[1] = np.inf
    return a.reshape(shape)


def bits(a):
    return a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint64)


def same_array(path, expected, what):
    loaded = np.load(path)
    if loaded.dtype != expected.dtype or loaded.shape != expected.shape:
        fail(f"{what}: numpy.load gives {loaded.dtype} {loaded.shape}, expected "
             f"{expected.dtype} {expected.shape}")
    if not np.array_equal(bits(loaded), bits(expected)):
        fail(f"{what}: the values differ")


def header(descr, fortran, shape, version=1, text_length=None):
    """The bytes of a .npy header, built by hand (NumPy writes no bad ones); `text_length`
    overrides the length field."""
    text = ("{'descr': %s, 'fortran_order': %s, 'shape': %s, }"
            % (descr, fortran, shape)).encode("latin1")
    preamble = 10 if version == 1 else 12
    text += b" " * (63 - (preamble + len(text)) % 64) + b"\n"
    length = len(text) if text_length is None else text_length
    size = struct.pack("<H" if version == 1 else "<I", length)
    return b"\x93NUMPY" + bytes([version, 0]) + size + text


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} NDZIP_BINARY", file=sys.stderr)
        return 2
    ndzip = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="ndzip-cli-npy.") as work:
        os.chdir(work)
        round_trips(ndzip)
        agreement(ndzip)
        refusals(ndzip)
    print("cli_npy: all checks passed")
    return 0


def round_trips(ndzip):
    check(".npy in (versions 1.0, 2.0, 3.0) without -t/-n: the frame of the values alone; "
          "-d to *.npy, --npy -o and --npy -c: numpy.load reads them bit for bit")
    cases = [((1000,), np.float32), ((40, 50), np.float32), ((5, 40, 50), np.float32),
             ((17,), np.float64), ((33, 34), np.float64), ((3, 20, 30), np.float64)]
    for shape, dtype in cases:
        a = values(shape, dtype)
        extents = "x".join(str(n) for n in shape)
        type_name = "float" if dtype == np.float32 else "double"
        a.tofile("raw.bin")
        for f in glob.glob("raw.bin.ndz"):
            os.remove(f)
        expect_ok(ndzip, ["-q", "-t", type_name, "-n", extents, "raw.bin"])
        with open("raw.bin.ndz", "rb") as f:
            reference = f.read()
        for version in ((1, 0), (2, 0), (3, 0)):
            what = f"{np.dtype(dtype).str} {extents} in format {version}"
            with open("a.npy", "wb") as f:
                np.lib.format.write_array(f, a, version=version)
            for f in glob.glob("a.npy.ndz") + glob.glob("out*"):
                os.remove(f)
            expect_ok(ndzip, ["-q", "a.npy"])
            with open("a.npy.ndz", "rb") as f:
                if f.read() != reference:
                    fail(f"{what}: the frame is not that of -t {type_name} -n {extents} "
                         "of its values (was the header compressed?)")
            os.rename("a.npy", "original.npy")
            expect_ok(ndzip, ["-q", "-d", "a.npy.ndz"])  # a.npy.ndz -> a.npy
            same_array("a.npy", a, what + ", -d to a.npy")
            os.remove("a.npy")
            expect_ok(ndzip, ["-q", "-d", "--npy", "-o", "out.bin", "a.npy.ndz"])
            same_array("out.bin", a, what + ", -d --npy -o out.bin")
            proc = expect_ok(ndzip, ["-q", "-d", "--npy", "-c", "a.npy.ndz"])
            write("out.npy", proc.stdout)
            same_array("out.npy", a, what + ", -d --npy -c")
            os.remove("out.npy")
            expect_ok(ndzip, ["-q", "-d", "-o", "out.npy", "a.npy.ndz"])
            same_array("out.npy", a, what + ", -d -o out.npy")
            expect_ok(ndzip, ["-q", "-d", "-o", "out.raw", "a.npy.ndz"])
            with open("out.raw", "rb") as f:
                if f.read() != a.tobytes():
                    fail(f"{what}: -d -o out.raw is not the raw values")
            os.remove("original.npy")
            os.remove("a.npy.ndz")

    check("a .npy file on standard input; one whose header says one extent in Fortran order")
    a = values((64, 64), np.float32)
    np.save("a.npy", a)
    with open("a.npy", "rb") as f:
        piped = expect_ok(ndzip, ["-q"], stdin=f.read()).stdout
    back = expect_ok(ndzip, ["-q", "-d", "--npy"], stdin=piped).stdout
    write("back.npy", back)
    same_array("back.npy", a, "stdin to stdout")
    row = values((1, 300), np.float32)
    write("row.npy", header("'<f4'", True, "(1, 300)") + row.tobytes())
    expect_ok(ndzip, ["-q", "row.npy"])
    os.rename("row.npy", "row.original.npy")
    expect_ok(ndzip, ["-q", "-d", "row.npy.ndz"])
    same_array("row.npy", row, "Fortran order with one extent above 1")


def agreement(ndzip):
    check("-t and -n given with a .npy file must match its header (any spelling, x or X)")
    np.save("m.npy", values((40, 50), np.float32))
    for extra in (["-t", "float"], ["-t", "FLOAT32"], ["-t", "f4"], ["-n", "40x50"],
                  ["-n", "40X50"], ["-t", "float", "-n", "40", "50"]):
        for f in glob.glob("m.npy.ndz"):
            os.remove(f)
        expect_ok(ndzip, ["-q"] + extra + ["m.npy"])
    os.remove("m.npy.ndz")
    expect_refused(ndzip, "m.npy", "-t double does not match 'm.npy', which holds a float 40x50",
                   ["-t", "double"])
    expect_refused(ndzip, "m.npy", "-n 50x40 does not match", ["-n", "50x40"])
    expect_refused(ndzip, "m.npy", "-n 2000 does not match", ["-n", "2000"])
    expect_refused(ndzip, "m.npy", "-n 40x50x1 does not match", ["-n", "40x50x1"])
    proc = run(ndzip, ["--npy", "m.npy"])  # .npy input is recognised, not asked for
    if proc.returncode != 2 or b"--npy applies to decompression only" not in proc.stderr:
        fail(f"--npy to compress: exit {proc.returncode}, {proc.stderr!r}")


def refusals(ndzip):
    check("refused, nothing written: Fortran order, other dtypes, ranks and empty arrays")
    a = values((40, 50), np.float32)
    np.save("f.npy", np.asfortranarray(a))
    expect_refused(ndzip, "f.npy", "in Fortran order; ndzip compresses C-order arrays")
    expect_refused(ndzip, "f.npy", "in Fortran order", ["-n", "50x40"])
    np.save("big.npy", a.astype(">f4"))
    expect_refused(ndzip, "big.npy", "a big-endian float32 array (dtype '>f4')")
    np.save("big8.npy", a.astype(">f8"))
    expect_refused(ndzip, "big8.npy", "a big-endian float64 array (dtype '>f8')")
    for dtype in ("<i4", "<f2", "<c8", "|u1"):
        np.save("other.npy", np.zeros((40, 50), dtype))
        expect_refused(ndzip, "other.npy", f"an array of dtype '{dtype}'")
    for descr in ("'|f4'", "'=f4'", "'f4'", "'float32'"):
        write("other.npy", header(descr, False, "(40, 50)") + a.tobytes())
        expect_refused(ndzip, "other.npy", "an array of dtype")
    np.save("scalar.npy", np.float32(1.5))
    expect_refused(ndzip, "scalar.npy", "holds a 0-D array (shape ()); ndzip compresses 1- to 3-D")
    np.save("four.npy", values((2, 3, 4, 5), np.float32))
    expect_refused(ndzip, "four.npy", "holds a 4-D array (shape 2x3x4x5)")
    np.save("empty.npy", np.zeros((0, 5), np.float32))
    expect_refused(ndzip, "empty.npy", "of no values")

    check("refused, nothing written: headers whose length field lies, truncated and extended "
          "files, a shape whose bytes differ from the data")
    body = a.tobytes()
    good = header("'<f4'", False, "(40, 50)")
    text_length = len(good) - 10
    write("long.npy", header("'<f4'", False, "(40, 50)", text_length=text_length + 16) + body)
    expect_refused(ndzip, "long.npy", "bytes other than blanks after the header's dict")
    write("short.npy", header("'<f4'", False, "(40, 50)", text_length=20) + body)
    expect_refused(ndzip, "short.npy", "not a valid .npy file")
    write("past.npy", good[:60])
    expect_refused(ndzip, "past.npy", "it ends inside its header (60 of 128 bytes)")
    write("huge.npy", header("'<f4'", False, "(40, 50)", version=2, text_length=0xFFFFFFFF) + body)
    expect_refused(ndzip, "huge.npy", "announces a header of 4294967295 bytes")
    for length in (6, 8, 9, 11):
        write("cut.npy", header("'<f4'", False, "(40, 50)", version=2)[:length])
        expect_refused(ndzip, "cut.npy", "it ends inside its header")
    write("cut.npy", good[:3])  # not even the magic: taken for raw values, which need -t
    expect_refused(ndzip, "cut.npy", "its name ends in .npy, but it does not start with NumPy's")
    write("truncated.npy", good + body[:-4])
    expect_refused(ndzip, "truncated.npy",
                   "has 7996 bytes of values after its 128-byte .npy header, but its float "
                   "40x50 array has 8000 bytes (a truncated file?)")
    write("extended.npy", good + body + b"\0" * 4)
    expect_refused(ndzip, "extended.npy", "has 8004 bytes of values after its 128-byte .npy header")
    write("shape.npy", header("'<f4'", False, "(40, 60)") + body)
    expect_refused(ndzip, "shape.npy", "has 8000 bytes of values")
    write("shape.npy", header("'<f4'", False, "(40, 40)") + body)
    expect_refused(ndzip, "shape.npy", "has 8000 bytes of values")
    write("wide.npy", header("'<f4'", False, "(4294967296, 4294967296, 4294967296)") + body)
    expect_refused(ndzip, "wide.npy", "too large")

    check("refused, nothing written: malformed headers")
    malformed = {
        "version 4.0": b"\x93NUMPY\x04\x00" + good[8:],
        "version 1.1": b"\x93NUMPY\x01\x01" + good[8:],
        "a missing key": header("'<f4'", False, "(40, 50)").replace(b"'fortran_order'",
                                                                     b"'fortran_ordex'"),
        "a number, not a tuple": header("'<f4'", False, "(2000)"),
        "a negative extent": header("'<f4'", False, "(-40, 50)"),
        "a list": header("'<f4'", False, "[40, 50]"),
        "an unquoted dtype": header("<f4", False, "(40, 50)"),
        "fortran_order 0": header("'<f4'", 0, "(40, 50)"),
        "a duplicate key": header("'<f4'", "False, 'shape': (8000,)", "(40, 50)"),
        "no dict": b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) + b" " * 117 + b"\n",
        "non-ASCII": header("'<f4\xe9'", False, "(40, 50)"),
    }
    for what, data in malformed.items():
        write("bad.npy", data + body)
        proc = run(ndzip, ["bad.npy"])
        err = proc.stderr.decode(errors="replace")
        if proc.returncode != 1 or "ndzip: error: 'bad.npy'" not in err:
            fail(f"a header with {what}: exit {proc.returncode}, {err}")
        if glob.glob("bad.npy.ndz*"):
            fail(f"a header with {what}: output left behind")

    check("a lying header on a pipe fails at once, reading no more than its bound")
    endless = subprocess.Popen(["sh", "-c", "head -c 12 huge.npy; exec cat /dev/zero"],
                               stdout=subprocess.PIPE)
    proc = subprocess.run([ndzip, "-c"], stdin=endless.stdout, capture_output=True,
                          timeout=TIMEOUT_S)
    endless.stdout.close()
    endless.kill()
    endless.wait()
    if proc.returncode != 1 or b"announces a header of 4294967295" not in proc.stderr:
        fail(f"a 4 GiB header on a pipe: exit {proc.returncode}, {proc.stderr!r}")


if __name__ == "__main__":
    sys.exit(main())
