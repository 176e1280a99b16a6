#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ndzip-mpi-bench refuses options and manifests it cannot run: a message naming the option or
dataset and what is allowed, a non-zero exit status and no signal, before any transfer (issue
62, rows 11 and 12: negative and NaN sizes were measured as 2-4 MiB, a link of -1 GB/s modelled,
manifest extents whose product wraps around 2^64 read 16 bytes and crashed in compress_raw).
The refusals come before the rank count is checked, so each runs as one process (MPI's singleton
start, a tenth of mpiexec's); those of --collective, which checks its root against the rank
count, run on 2 ranks under mpiexec; then a valid manifest still runs on 2 ranks under mpiexec.
usage: mpi_bench_refusals.py MPIEXEC FLAGS... -- NDZIP_MPI_BENCH"""

import os
import subprocess
import sys
import tempfile

FLOAT_BYTES = 16  # every forged dataset's file: 4 floats

# (arguments, or a manifest line written to a temporary manifest; what the message must say)
OPTION_CASES = [
    (["--sizes-mib", "-1"], "--sizes-mib: needs a finite number above 0, got '-1'"),
    (["--sizes-mib", "nan"], "--sizes-mib: needs a finite number above 0, got 'nan'"),
    (["--sizes-mib", "0.0625,0"], "--sizes-mib: needs a finite number above 0, got '0'"),
    (["--link-gbps", "0,-1,nan"], "--link-gbps: needs a finite number above 0, got '0'"),
    (["--link-gbps", "12.5,nan"], "--link-gbps: needs a finite number above 0, got 'nan'"),
    (["--max-mib", "-3"], "--max-mib: needs a finite number above 0, got '-3'"),
    (["--segment-mib", "-1"], "--segment-mib: needs a finite number of 0 or more, got '-1'"),
    (["--pipeline-depth", "0"], "--pipeline-depth: needs a positive number, got '0'"),
    (["--repetitions", "-2"], "--repetitions: needs a positive number, got '-2'"),
    (["--scale", "0"], "--scale: needs a finite number above 0, got '0'"),
    (["--scale", "inf"], "--scale: needs a finite number above 0, got 'inf'"),
    (["--synthetic", "--scale", "9.5367431640625e-07"],  # 2^-20
     "--scale 9.53674e-07: the synthetic field float 536870912x512x512 needs 5.629e+14 bytes"),
    (["--incompressible", "--scale", "1e-12"],
     "--scale 1e-12: the random field float 2.68435456e+20 needs"),
]

# --collective's refusals, on 2 ranks (arguments; what the message must say).
COLLECTIVE_CASES = [
    (["--collective", "reduce"], "--collective: unknown operation 'reduce'; expected bcast, "
     "gather, scatter, allgather, alltoall or all"),
    (["--collective", "bcast", "--root", "2"], "--root 2: no rank of the 2 (0 to 1)"),
]
# Only where the bench lacks NCCL, where --transport offers no nccl (CLI11 refuses the value
# before run_collectives could); where it has NCCL, the NCCL collectives run (a GPU per rank).
NCCL_CASE = (["--collective", "all", "--transport", "nccl"], "--transport: Check nccl value in")

# A manifest line of a forged dataset (its file: FLOAT_BYTES zero bytes), and the message, with
# {manifest} and {dir} for the temporary manifest and its folder.
MANIFEST_CASES = [
    # 4 x (2^62 + 1) elements wrap around to 4: before, 16 bytes read, then SIGSEGV.
    ("f.f32;float;4611686018427387905 4",
     "{manifest}: f.f32: float 4611686018427387905x4 takes more than 2^64 bytes"),
    ("f.f32;float;4294967296 4294967296 4",
     "{manifest}: f.f32: float 4294967296x4294967296x4 takes more than 2^64 bytes"),
    ("f.f32;float;65536 65536 65536",
     "{manifest}: f.f32: float 65536x65536x65536 takes 1125899906842624 bytes, but "
     "'{dir}/f.f32' holds 16"),
    ("f.f32;float;10", "{manifest}: f.f32: float 10 takes 40 bytes, but '{dir}/f.f32' holds 16"),
    ("f.f32;double;4", "{manifest}: f.f32: double 4 takes 32 bytes, but '{dir}/f.f32' holds 16"),
    ("f.f32;float;0 4",
     "{manifest}: f.f32: extent 0 in float 0x4; every extent is a whole number of 1 or more"),
    ("f.f32;float;-5", "{manifest}: f.f32: extent 18446744073709551611 in float "
     "18446744073709551611 (a negative number?); every extent is a whole number of 1 or more"),
    ("f.f32;float;1 1 2 2",
     "{manifest}:1: expected `file;float|double;N0 [N1 [N2]]`, got `f.f32;float;1 1 2 2`"),
    ("missing.f32;float;4", "{manifest}: missing.f32: cannot read '{dir}/missing.f32'"),
]


def run(command, env):
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    except subprocess.TimeoutExpired:
        return None


def main():
    split = sys.argv.index("--")
    mpiexec, bench = sys.argv[1:split], sys.argv[split + 1]
    env = dict(os.environ)
    failures = []
    with tempfile.TemporaryDirectory() as where:
        with open(os.path.join(where, "f.f32"), "wb") as f:
            f.write(bytes(FLOAT_BYTES))
        cases = [(args, expected) for args, expected in OPTION_CASES]
        for number, (line, expected) in enumerate(MANIFEST_CASES):
            manifest = os.path.join(where, f"manifest{number}.csv")
            with open(manifest, "w") as f:
                f.write(line + "\n")
            cases.append((["--manifest", manifest], expected.format(manifest=manifest, dir=where)))
        cases = [([bench] + args, args, expected) for args, expected in cases]
        collective_cases = list(COLLECTIVE_CASES)
        usage = run([bench, "--help"], env)
        if usage is not None and "nccl->" not in usage.stdout:
            collective_cases.append(NCCL_CASE)
        else:
            print("skipped: " + " ".join(NCCL_CASE[0]) + ": built with NCCL, so no refusal")
        cases += [(mpiexec + ["-n", "2", bench] + args, args, expected)
                  for args, expected in collective_cases]
        for command, args, expected in cases:
            done = run(command, env)
            what = " ".join(args)
            if done is None:
                failures.append(f"{what}: no exit within 120 s")
                continue
            output = done.stdout + done.stderr
            if done.returncode <= 0 or "signal" in output.lower():
                failures.append(f"{what}: exit status {done.returncode}, expected a refusal "
                                f"(positive, no signal)\n{output}")
            elif expected not in done.stderr:
                failures.append(f"{what}: the message lacks \"{expected}\"\n{output}")
            elif "ping-pong" in done.stdout or "operation" in done.stdout:
                failures.append(f"{what}: refused only after measuring\n{output}")
            else:
                print(f"ok: {what}: {done.stderr.strip().splitlines()[0]}")
        # A valid dataset of the same form still runs (4096 smooth floats).
        with open(os.path.join(where, "smooth.f32"), "wb") as f:
            f.write(b"".join(int(0x3f800000 + 64 * i).to_bytes(4, "little") for i in range(4096)))
        manifest = os.path.join(where, "valid.csv")
        with open(manifest, "w") as f:
            f.write("smooth.f32;float;64 64\n")
        done = run(mpiexec + ["-n", "2", bench, "--manifest", manifest, "--sizes-mib", "1",
                             "--repetitions", "1"], env)
        if done is None or done.returncode != 0 or "smooth.f32" not in done.stdout:
            failures.append("a valid manifest: " + ("no exit within 120 s" if done is None else
                            f"exit status {done.returncode}\n{done.stdout}{done.stderr}"))
        else:
            print("ok: a valid manifest runs")
    for failure in failures:
        print("FAIL: " + failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
