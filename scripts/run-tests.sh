#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The test command: installs what is missing, builds everything and runs all tests with ctest.
# Binaries land in build/bin (ndzip, ndzip-unit-tests, ndzip-demo).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ndzip_configure -DNDZIP_BUILD_TESTS=ON -DNDZIP_BUILD_TOOLS=ON -DNDZIP_BUILD_PERF_TESTS=ON
ndzip_build
ctest --test-dir "$build" --output-on-failure -j "$jobs"
