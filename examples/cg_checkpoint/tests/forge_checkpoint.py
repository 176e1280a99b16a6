#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""forge_checkpoint.py: hostile checkpoints for cg_restart.sh, made from a valid one.

  forge_checkpoint.py scalars IN OUT [--iteration V] [--n V] [--rr V] [--bnorm V]
      IN with the scalars replaced (any double: nan, inf, 1024, ...). In an ndzip checkpoint the
      scalars' frame gets a recomputed checksum, as a writer with a bug (or a forger) would
      write it, so that only the example's own checks of the values can refuse it.
  forge_checkpoint.py swap IN OUT A B
      IN with sections A and B (0-3) exchanged, each with its name.

Standard library only. The frame checksum is XXH3-64 (seed 0); the scalars' frame hashes 72
bytes, so only XXH3's path for inputs of 17 to 128 bytes is implemented here, and every use
first checks that it reproduces the checksum the untouched frame records.
"""
import struct
import sys

MASK = (1 << 64) - 1
PRIME64_1 = 0x9E3779B185EBCA87
# The first 128 bytes of XXH3's default secret (the xxHash specification's kSecret): all that
# inputs of up to 128 bytes use.
SECRET = bytes.fromhex(
    "b8fe6c3923a44bbe7c01812cf721ad1c"
    "ded46de9839097db7240a4a4b7b3671f"
    "cb79e64eccc0e578825ad07dccff7221"
    "b8084674f743248ee03590e6813a264c"
    "3c2852bb91c300cb88d0658b1b532ea3"
    "71644897a20df94e3819ef46a9deacd8"
    "a8fa763fe39c343ff9dcbbc7c70b4f1d"
    "8a51e04bcdb45931c89f7ec9d9787364")


def u64(data, at):
    return struct.unpack_from("<Q", data, at)[0]


def mix16(data, at, secret_at):
    lo = u64(data, at) ^ u64(SECRET, secret_at)
    hi = u64(data, at + 8) ^ u64(SECRET, secret_at + 8)
    product = lo * hi
    return (product ^ (product >> 64)) & MASK


def xxh3_64(data):
    n = len(data)
    if not 17 <= n <= 128:
        raise ValueError("only inputs of 17 to 128 bytes are implemented")
    acc = (n * PRIME64_1) & MASK
    pairs = [(0, 0)]
    if n > 32:
        pairs.append((16, 32))
    if n > 64:
        pairs.append((32, 64))
    if n > 96:
        pairs.append((48, 96))
    for front, secret_at in pairs:
        acc = (acc + mix16(data, front, secret_at)) & MASK
        acc = (acc + mix16(data, n - 16 - front, secret_at + 16)) & MASK
    acc ^= acc >> 37
    acc = (acc * 0x165667919E3779F9) & MASK
    return acc ^ (acc >> 32)


def frame_checksum(frame):
    return xxh3_64(frame[:40] + frame[48:])


def sections(data):
    """[(start, end, payload_start, payload_end)] of the four sections of a checkpoint."""
    if data[:8] != b"NDZCGCK2" or u64(data, 16) != 4:
        sys.exit("forge_checkpoint: not a checkpoint of layout NDZCGCK2")
    at, found = 24, []
    for _ in range(4):
        size = u64(data, at + 8)
        end = at + 16 + size + (8 - size % 8) % 8
        found.append((at, end, at + 16, at + 16 + size))
        at = end
    return found


def forge_scalars(data, changes):
    _, _, start, end = sections(data)[0]
    section = bytearray(data[start:end])
    ndzip = u64(data, 8) == 0
    values_at = 48 if ndzip else 0
    if ndzip:
        # A 1-D array of 4 doubles has no whole hypercube: its stream is the values themselves.
        if section[:4] != b"NDZK" or u64(section, 32) != 32 or len(section) != 80:
            sys.exit("forge_checkpoint: the scalars are not a frame of 4 doubles")
        if frame_checksum(section) != u64(section, 40):
            sys.exit("forge_checkpoint: the XXH3-64 here does not reproduce the frame's checksum")
    values = list(struct.unpack_from("<4d", section, values_at))
    for index, value in changes.items():
        values[index] = value
    struct.pack_into("<4d", section, values_at, *values)
    if ndzip:
        struct.pack_into("<Q", section, 40, frame_checksum(section))
    return data[:start] + bytes(section) + data[end:]


def swap(data, a, b):
    found = sections(data)
    a, b = sorted((a, b))
    (a0, a1, _, _), (b0, b1, _, _) = found[a], found[b]
    return data[:a0] + data[b0:b1] + data[a1:b0] + data[a0:a1] + data[b1:]


def main(argv):
    if len(argv) >= 3 and argv[0] == "scalars":
        names = {"--iteration": 0, "--n": 1, "--rr": 2, "--bnorm": 3}
        changes, rest = {}, argv[3:]
        if len(rest) % 2 or any(k not in names for k in rest[::2]):
            sys.exit(__doc__)
        for key, value in zip(rest[::2], rest[1::2]):
            changes[names[key]] = float(value)
        data = forge_scalars(open(argv[1], "rb").read(), changes)
    elif len(argv) == 5 and argv[0] == "swap":
        data = swap(open(argv[1], "rb").read(), int(argv[3]), int(argv[4]))
    else:
        sys.exit(__doc__)
    with open(argv[2], "wb") as out:
        out.write(data)


if __name__ == "__main__":
    main(sys.argv[1:])
