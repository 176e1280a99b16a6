#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The main job: installs what is missing, builds the demo, and compresses a generated 64 MiB
# smooth 3-D float field on every enabled backend, verifying the round trip bit for bit.
# Arguments go to build/bin/ndzip-demo (see --help), e.g. `scripts/run-demo.sh -b serial`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ndzip_configure
ndzip_build --target ndzip-demo
"$build/bin/ndzip-demo" "$@"
