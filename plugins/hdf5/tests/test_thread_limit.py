#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""More host threads than Kokkos holds: Kokkos' OpenMP backend keeps its thread pool in an array
of 512, and an application started with OMP_NUM_THREADS=600 made the plugin initialise Kokkos
with 600 threads (h5dump died of SIGSEGV). The plugin lowers the count to 512: `h5dump -d` of an
ndzip dataset prints the values h5py wrote, and exits 0. A KOKKOS_NUM_THREADS above 512, which
Kokkos reads itself, fails the read with an HDF5 error instead of a crash.

    HDF5_PLUGIN_PATH=build/hdf5-plugin python3 test_thread_limit.py --filter-id 310 --h5dump h5dump
"""
import os
import re
import subprocess
import tempfile

import h5py
import numpy as np

from plugin_test_support import parse_args, require_filter, run, smooth


def h5dump(tool, path, *options, **environment):
    """h5dump OPTIONS -d /a of `path`, in the environment with `environment` added."""
    env = {name: value for name, value in os.environ.items() if name != "KOKKOS_NUM_THREADS"}
    env.update(OMP_WAIT_POLICY="passive", OMP_PROC_BIND="false", **environment)
    return subprocess.run([tool, *options, "-d", "/a", "-m", "%.9g", "-y", "-w", "0", path], env=env,
                          capture_output=True, text=True, timeout=300)


def check_values(tool, path, values):
    result = h5dump(tool, path, OMP_NUM_THREADS="600")
    assert result.returncode == 0, (f"OMP_NUM_THREADS=600 h5dump exited with "
                                    f"{result.returncode}: {result.stdout[:2000]}{result.stderr}")
    data = re.search(r"DATA {(.*?)}", result.stdout, re.S)
    assert data, f"h5dump printed no data:\n{result.stdout[:2000]}"
    printed = np.array(data.group(1).replace(",", " ").split(), dtype=values.dtype)
    np.testing.assert_array_equal(printed, values.ravel(), "OMP_NUM_THREADS=600 h5dump -d /a")


def check_kokkos_num_threads(tool, path):
    result = h5dump(tool, path, "--enable-error-stack", KOKKOS_NUM_THREADS="600")
    assert result.returncode > 0, (f"KOKKOS_NUM_THREADS=600 h5dump exited with "
                                   f"{result.returncode}, expected an error: {result.stderr}")
    assert "KOKKOS_NUM_THREADS=600" in result.stderr, f"no reason given:\n{result.stderr}"


def main():
    args = parse_args(__doc__, tools=("h5dump",))
    require_filter(args.filter_id)
    values = smooth(np.float32, (64, 96))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f.h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("a", data=values, chunks=(32, 96), compression=args.filter_id)
        check_values(args.h5dump, path, values)
        check_kokkos_num_threads(args.h5dump, path)
    print("OMP_NUM_THREADS=600: h5dump printed the values on 512 threads; KOKKOS_NUM_THREADS=600: "
          "an HDF5 error, no crash")


if __name__ == "__main__":
    run(main)
