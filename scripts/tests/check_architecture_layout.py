#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Fails when the Layout table of docs/ARCHITECTURE.md misses a folder: every top-level folder
that git tracks (hidden ones included, .git excepted) and every folder under backends/ must
have a row whose first cell names it or a folder inside it (`include/ndzip/` covers `include/`),
and every row must name a folder that exists."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tracked_folders():
    """Top-level folders and backends/ folders of the tracked files (the working tree where git
    is not available, as in a source tarball)."""
    try:
        files = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True,
                               check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        files = [os.path.relpath(os.path.join(d, f), ROOT)
                 for d, _, names in os.walk(ROOT) for f in names]
    folders = set()
    for f in files:
        parts = f.split("/")
        if len(parts) > 1 and parts[0] != ".git":
            folders.add(parts[0] + "/")
            if parts[0] == "backends" and len(parts) > 2:
                folders.add("backends/" + parts[1] + "/")
    return folders


def table_folders(text):
    section = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    named = set()
    for line in section.split("\n"):
        cells = line.split("|")
        if len(cells) > 2:
            match = re.fullmatch(r"\s*`([^`]+/)`\s*", cells[1])
            if match:
                named.add(match.group(1))
    return named


def main():
    with open(os.path.join(ROOT, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
        named = table_folders(f.read())
    missing = sorted(f for f in tracked_folders() if not any(n.startswith(f) for n in named))
    stale = sorted(n for n in named if not os.path.isdir(os.path.join(ROOT, n)))
    for folder in missing:
        print(f"docs/ARCHITECTURE.md: the Layout table has no row for {folder}")
    for folder in stale:
        print(f"docs/ARCHITECTURE.md: the Layout table names {folder}, which does not exist")
    if missing or stale:
        return 1
    print(f"docs/ARCHITECTURE.md: the Layout table names all {len(named)} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
