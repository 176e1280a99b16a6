#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Every source, build and script file of the project carries the SPDX identifier of its license
# (LICENSE: Apache-2.0 WITH LLVM-exception) in its first two lines. Run by CTest
# (license_headers); prints the files that lack it and exits 1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tag="SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception"
[ -f "$root/LICENSE" ] || { echo "LICENSE is missing" >&2; exit 1; }
grep -q "Apache License" "$root/LICENSE" && grep -q "LLVM Exceptions" "$root/LICENSE" ||
  { echo "LICENSE is not Apache-2.0 with LLVM exceptions" >&2; exit 1; }
missing=0
while IFS= read -r -d '' f; do
  if ! head -n 2 "$f" | grep -qF "$tag"; then
    echo "no SPDX license identifier: ${f#"$root"/}"
    missing=$((missing + 1))
  fi
done < <(find "$root/backends" "$root/cmake" "$root/core" "$root/examples" "$root/fuzz" "$root/mpi" \
  "$root/include" "$root/perf_tests" "$root/plugins" "$root/scripts" "$root/spack" "$root/tools" \
  "$root/unit_tests" "$root/.ci" -type f \
  \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' -o -name '*.in' -o -name '*.py' \
     -o -name '*.sh' -o -name '*.cmake' -o -name 'CMakeLists.txt' -o -name 'run' \) \
  -print0 2>/dev/null; printf '%s\0' "$root/CMakeLists.txt")
[ "$missing" -eq 0 ] || { echo "$missing file(s) without the license identifier" >&2; exit 1; }
echo "license headers: all present"
