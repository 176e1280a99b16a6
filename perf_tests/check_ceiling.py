#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ndzip-bench --ceiling-mib: every row of a backend takes its ceiling (the deep_copy column and
the % beside the GB/s) from the one copy rate measured for that backend and printed before the
rows; a size of 0 is a usage error. usage: check_ceiling.py NDZIP_BENCH"""

import csv
import os
import re
import subprocess
import sys
import tempfile


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    bench = sys.argv[1]
    with tempfile.TemporaryDirectory() as where:
        table = os.path.join(where, "rows.csv")
        run = subprocess.run([bench, "--sweep", "--max-mib", "4", "--ceiling-mib", "2",
                              "-b", "serial", "--csv", table], capture_output=True, text=True)
        if run.returncode != 0:
            fail(f"ndzip-bench exited {run.returncode}\n{run.stdout}{run.stderr}")
        rates = dict(re.findall(r"^ceiling: (\S+) copies 2 MiB at ([0-9.]+) GB/s$", run.stdout,
                                re.MULTILINE))
        if set(rates) != {"serial"}:
            fail(f"expected one ceiling line for serial, got {rates}\n{run.stdout}")
        with open(table) as f:
            rows = list(csv.DictReader(f))
        if len(rows) != 2:  # the 1 and 4 MiB fields
            fail(f"expected 2 rows, got {len(rows)}")
        for row in rows:
            if abs(float(row["deep_copy_gbps"]) - float(rates["serial"])) > 0.01:
                fail(f"{row['dataset']}: deep_copy {row['deep_copy_gbps']} GB/s, not the "
                     f"ceiling's {rates['serial']}")
            ceiling = 2 * float(rates["serial"]) / (1 + float(row["ratio"]))
            if abs(float(row["compress_fraction"]) - float(row["compress_gbps"]) / ceiling) > 1e-3:
                fail(f"{row['dataset']}: compress_fraction {row['compress_fraction']} is not "
                     f"compress_gbps / the ceiling's 2 * copy / (1 + ratio)")
    zero = subprocess.run([bench, "--sweep", "--ceiling-mib", "0"], capture_output=True,
                          text=True)
    if zero.returncode != 2:
        fail(f"--ceiling-mib 0: exit {zero.returncode}, expected 2 (usage)")
    print("ndzip-bench --ceiling-mib: every row takes the backend's one copy rate")


if __name__ == "__main__":
    main()
