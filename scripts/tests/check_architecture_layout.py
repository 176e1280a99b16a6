#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Fails when the Layout table of docs/ARCHITECTURE.md misses a folder: every top-level folder
that git tracks (hidden ones included, .git excepted), every folder under backends/ and every
folder under mpi/include/ndzip/mpi/detail/ must have a row whose first cell names it or a folder inside it (`include/ndzip/` covers `include/`),
and every row must name a folder that exists. --without-git walks the working tree as in a copy
made by `git archive` or from a tarball, where the folders .gitignore names (the dependencies and
build folders the scripts make) are not the project's."""
import fnmatch
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def ignored_folder_patterns():
    """The folder patterns of .gitignore (lines ending in '/'), as fnmatch patterns of a path."""
    try:
        with open(os.path.join(ROOT, ".gitignore"), encoding="utf-8") as f:
            lines = [line.strip() for line in f]
    except OSError:
        return []
    return [line.strip("/") for line in lines
            if line.endswith("/") and not line.startswith(("#", "!"))]


def working_tree_files():
    """The files of the working tree but those under folders .gitignore names."""
    patterns = ignored_folder_patterns()
    files = []
    for folder, subfolders, names in os.walk(ROOT):
        relative = os.path.relpath(folder, ROOT)
        subfolders[:] = [d for d in subfolders if d != ".git" and not any(
            fnmatch.fnmatch(d, p) or fnmatch.fnmatch(os.path.normpath(os.path.join(relative, d)), p)
            for p in patterns)]
        files += [os.path.normpath(os.path.join(relative, f)) for f in names]
    return files


def tracked_folders(use_git=True):
    """Top-level folders, backends/ folders and ndzip::mpi's detail/ folders of the tracked files (the working tree where git
    is not available, as in a source tarball)."""
    try:
        if not use_git:
            raise OSError("asked to do without git")
        files = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True,
                               check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        files = working_tree_files()
    folders = set()
    for f in files:
        parts = f.split("/")
        if len(parts) > 1 and parts[0] != ".git":
            folders.add(parts[0] + "/")
            if parts[0] == "backends" and len(parts) > 2:
                folders.add("backends/" + parts[1] + "/")
            # ndzip::mpi's internals: a folder per link (and the core and seams they share).
            mpi_detail = ["mpi", "include", "ndzip", "mpi", "detail"]
            if parts[:5] == mpi_detail and len(parts) > 6:
                folders.add("/".join(parts[:6]) + "/")
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
    folders = tracked_folders(use_git="--without-git" not in sys.argv[1:])
    missing = sorted(f for f in folders if not any(n.startswith(f) for n in named))
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
