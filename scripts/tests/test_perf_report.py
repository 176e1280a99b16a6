#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""scripts/perf-report.py on a copy of the repository's documents and CSVs: --check passes on
the committed documents, fails (exit 1, with a diff) when a generated number was edited by hand,
and stops with a message (exit 2) on a missing CSV or a marker without its pair; a rewrite
restores the committed text byte for byte. Run by ctest (perf_report_detects)."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(copy, *args):
    result = subprocess.run([sys.executable, os.path.join(copy, "scripts", "perf-report.py"),
                             *args], capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def expect(condition, message):
    if not condition:
        print("FAIL: " + message)
        sys.exit(1)


def make_copy(where):
    copy = os.path.join(where, "repo")
    os.makedirs(os.path.join(copy, "scripts"))
    shutil.copy(os.path.join(ROOT, "scripts", "perf-report.py"), os.path.join(copy, "scripts"))
    shutil.copytree(os.path.join(ROOT, "docs"), os.path.join(copy, "docs"))
    shutil.copy(os.path.join(ROOT, "README.md"), copy)
    return copy


def main():
    with tempfile.TemporaryDirectory() as where:
        copy = make_copy(where)
        performance = os.path.join(copy, "docs", "PERFORMANCE.md")
        with open(performance, encoding="utf-8") as f:
            committed = f.read()

        status, output = run(copy, "--check")
        expect(status == 0, f"--check on the committed documents: exit {status}\n{output}")

        # A generated GB/s figure, edited by hand: the first "N.N / N.N" pair of a table row.
        begin = committed.index("<!-- perf-report:begin gpu-default-gensyn-h200 -->")
        figure = re.compile(r"\| (\d+\.\d) / ").search(committed, begin)
        expect(figure is not None, "no GB/s figure found in the gpu-default-gensyn-h200 table")
        edited = figure.group(1)[:-1] + str((int(figure.group(1)[-1]) + 1) % 10)
        stale = committed[:figure.start(1)] + edited + committed[figure.end(1):]
        with open(performance, "w", encoding="utf-8") as f:
            f.write(stale)
        status, output = run(copy, "--check")
        expect(status == 1 and edited in output and "PERFORMANCE.md" in output,
               f"--check on an edited figure ({figure.group(1)} -> {edited}): exit {status}\n"
               f"{output}")

        status, output = run(copy)
        with open(performance, encoding="utf-8") as f:
            expect(status == 0 and f.read() == committed,
                   f"the rewrite does not restore the committed text: exit {status}\n{output}")

        # A marker without its pair.
        with open(performance, "w", encoding="utf-8") as f:
            f.write(committed.replace("<!-- perf-report:end gpu-default-gensyn-h200 -->\n", "", 1))
        status, output = run(copy, "--check")
        expect(status == 2 and "gpu-default-gensyn-h200" in output,
               f"--check with an unpaired marker: exit {status}\n{output}")
        with open(performance, "w", encoding="utf-8") as f:
            f.write(committed)

        # A CSV the manifest names, missing: the one behind the H200 table.
        with open(os.path.join(copy, "docs", "bench", "current.json"), encoding="utf-8") as f:
            csv_path = json.load(f)["sources"]["gensyn-default-h200"]["csv"]
        os.remove(os.path.join(copy, csv_path))
        status, output = run(copy, "--check")
        expect(status == 2 and os.path.basename(csv_path) in output,
               f"--check with a missing CSV: exit {status}\n{output}")
    print("perf-report: --check passes, and fails on an edited figure, an unpaired marker and a "
          "missing CSV")


if __name__ == "__main__":
    main()
