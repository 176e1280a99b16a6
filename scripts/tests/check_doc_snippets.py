#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Runs the code snippets of README.md and docs/*.md as written, so that the docs cannot rot.

Every fenced block with a language (```cpp, ```python, ```sh, ```cmake) must follow a marker
line saying how it is checked:

    <!-- snippet: run [setup=NAME] -->      Python and shell: run in a scratch folder, status 0;
                                            C++: compiled, linked against libndzip and run
    <!-- snippet: compile [setup=NAME] -->  C++ that needs a peer (MPI, NCCL): compiled only
    <!-- snippet: skip: REASON -->          not run here, saying why (it installs, builds the
                                            project, needs a GPU, or another test covers it)

A C++ snippet's #include lines stay at file scope and the rest becomes a function body; its
setup (below) declares what the snippet takes from its context (extents, a View, a
communicator), as the surrounding prose does. A marker that names `kokkos=4` compiles only
against Kokkos 4 (a snippet of another form covers Kokkos 3). Python snippets get the build
tree's package on PYTHONPATH and their setup's lines first; shell snippets the build's bin/ on
PATH and their setup's files in the scratch folder; where the setup also writes
expected_output.txt (a checksum the snippet must print), the snippet's output must hold it.

Usage (ctest doc_snippets passes these): check_doc_snippets.py --source-dir DIR --binary-dir DIR
  --cxx COMPILER --kokkos-dir DIR --kokkos-version X.Y.Z --ndzip-lib FILE [--python PYTHON]
  [--list]
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = re.compile(r"^\s*<!-- snippet: (run|compile|skip)(?::\s*(.*?)|((?:\s+\w+=\S+)*))\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\w+)\s*$")

# C++ setups: (file-scope lines, lines before the snippet in its function).
CPP_SETUPS = {
    "grid": ("", "const int nz = 24, ny = 40, nx = 72;"),
    "dynamic": ("#include <vector>", ""),
    "async": ("#include <mpi.h>\n#include <ndzip/ndzip.hpp>",
              "auto exec = Kokkos::DefaultExecutionSpace();\n"
              "ndzip::compressor<float, 2> codec(exec, ndzip::extent<2>(64, 96));\n"
              "Kokkos::View<float**> face(\"face\", 64, 96);\n"
              "Kokkos::View<std::byte*> stream(\"stream\", codec.size_bound());\n"
              "Kokkos::View<std::byte*> received(\"received\", codec.size_bound());\n"
              "const int peer = 1, tag = 7;\nMPI_Comm comm = MPI_COMM_WORLD;\n"
              "MPI_Request requests[2];"),
    "batch": ("#include <vector>\n#include <ndzip/ndzip.hpp>\n"
              # `pinned`, as the asynchronous snippet before it defines it.
              "#if KOKKOS_VERSION >= 40000\nusing pinned = Kokkos::SharedHostPinnedSpace;\n"
              "#elif defined(KOKKOS_ENABLE_CUDA)\nusing pinned = Kokkos::CudaHostPinnedSpace;\n"
              "#else\nusing pinned = Kokkos::HostSpace;\n#endif",
              "auto exec = Kokkos::DefaultExecutionSpace();\n"
              "const int nz = 24, ny = 40, nx = 72;\nconst std::size_t i = 0;\n"
              "Kokkos::View<ndzip::decompress_outcome*, Kokkos::HostSpace> outcomes_host(\"o\", 6);"),
    "mpi": ("#include <vector>",
            "auto exec = Kokkos::DefaultExecutionSpace();\n"
            "Kokkos::View<double***> field(\"field\", 16, 16, 16);\n"
            "auto face = Kokkos::subview(field, 0, Kokkos::ALL, Kokkos::ALL);\n"
            "const int dest = 1, source = 0, tag = 7;\n"
            "MPI_Comm comm = MPI_COMM_WORLD, cart = MPI_COMM_WORLD;\n"
            "using face_view = Kokkos::View<double***, Kokkos::LayoutStride>;\n"
            "std::vector<ndzip::mpi::piece<face_view>> sends, receives;"),
    "collectives": ("#include <vector>",
                    "auto exec = Kokkos::DefaultExecutionSpace();\n"
                    "Kokkos::View<double***> field(\"field\", 16, 16, 16), "
                    "mine(\"mine\", 16, 16, 16);\n"
                    "std::vector<Kokkos::View<double***>> pieces(2, mine), to(2, mine), "
                    "from(2, mine);\n"
                    "const int root = 0;\nMPI_Comm comm = MPI_COMM_WORLD;"),
    "halo": ("#include <array>\n#include <vector>\n#include <ndzip/mpi.hpp>\n"
             "using direction = std::array<int, 3>;\n"
             "inline direction operator-(const direction& d) { return {-d[0], -d[1], -d[2]}; }\n"
             "template <class V> Kokkos::View<double***, Kokkos::LayoutStride> "
             "interior_layer(const V& v, const direction&) { return Kokkos::subview(v, "
             "std::pair<int, int>(1, 2), Kokkos::ALL, Kokkos::ALL); }\n"
             "template <class V> Kokkos::View<double***, Kokkos::LayoutStride> "
             "ghost_layer(const V& v, const direction&) { return Kokkos::subview(v, "
             "std::pair<int, int>(0, 1), Kokkos::ALL, Kokkos::ALL); }\n"
             "inline int neighbour(const direction&) { return 0; }\n"
             "inline int tag_of(const direction& d) { return 9 * (d[0] + 1) + 3 * (d[1] + 1) + "
             "d[2] + 1; }\n"
             "template <class E, class V> void diffuse(const E&, const V&, const V&) {}",
             "auto exec = Kokkos::DefaultExecutionSpace();\n"
             "Kokkos::View<double***> block(\"block\", 10, 10, 10), next(\"next\", 10, 10, 10);\n"
             "const std::vector<direction> directions = {{1, 0, 0}, {-1, 0, 0}};\n"
             "MPI_Comm cart = MPI_COMM_WORLD;\nconst int steps = 2;"),
}

# Python setups: lines run first, in the scratch folder.
PY_SETUPS = {
    # The corpus's DEM (2161 x 4320 float32) as a smooth stand-in: CI has no ../shared/data.
    "etopo": ("import numpy as _np\n"
              "_y, _x = _np.mgrid[0:2161, 0:4320].astype(_np.float32)\n"
              "(_np.sin(_y / 97) * _np.cos(_x / 61) * 3000).astype(_np.float32)"
              ".tofile('dem_etopo5.f32')\n"),
    "field2d": ("import numpy as np\n"
                "field2d = np.cumsum(np.ones((720, 1440), np.float32), axis=1)\n"),
    "array3d": ("import numpy as np\n"
                "array = np.cumsum(np.ones((128, 128, 128), np.float32), axis=2)\n"),
}

# Shell setups: Python run first in the scratch folder (to make input files, and the checksum
# the snippet must print where it prints one).
SH_SETUPS = {
    "etopo": PY_SETUPS["etopo"],
    "frame": ("import numpy as np, ndzip\n"
              "frame = ndzip.compress(np.arange(4096, dtype=np.float32))\n"
              "open('FILE.nz', 'wb').write(frame)\n"
              "open('expected_output.txt', 'w').write(frame[40:48][::-1].hex())\n"),
    # A stored chunk of a float 64x96 dataset, as the FORMAT.md example's cd_values describe it.
    "chunk": ("import numpy as np, h5py, ndzip, ndzip.h5\n"
              "with h5py.File('c.h5', 'w') as f:\n"
              "    f.create_dataset('t', data=np.cumsum(np.ones((64, 96), np.float32), axis=1),\n"
              "                     chunks=(64, 96), **ndzip.h5.filter())\n"
              "with h5py.File('c.h5', 'r') as f:\n"
              "    chunk = f['t'].id.read_direct_chunk((0, 0))[1]\n"
              "open('CHUNK', 'wb').write(chunk)\n"
              "open('expected_output.txt', 'w').write(chunk[:8][::-1].hex())\n"),
}


def snippets(source_dir, only):
    """(file, line, language, action, options or reason, code) of every fenced block with a
    language in README.md and docs/*.md (or the files `only` names); a block without a marker
    is an error."""
    files = only or ["README.md"] + sorted(
        os.path.relpath(p, source_dir) for p in glob.glob(os.path.join(source_dir, "docs", "*.md")))
    found, errors = [], []
    for name in files:
        with open(os.path.join(source_dir, name), encoding="utf-8") as f:
            lines = f.read().split("\n")
        i = 0
        while i < len(lines):
            fence = FENCE.match(lines[i])
            if not fence:
                i += 1
                continue
            indent, language = fence.groups()
            end = i + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            code = "\n".join(line[len(indent):] if line.startswith(indent) else line
                             for line in lines[i + 1:end])
            previous = i - 1
            while previous >= 0 and not lines[previous].strip():
                previous -= 1
            marker = MARKER.match(lines[previous]) if previous >= 0 else None
            if not marker:
                errors.append(f"{name}:{i + 1}: a ```{language} block without a "
                              "<!-- snippet: run|compile|skip: ... --> line before it")
            else:
                action, reason, options = marker.groups()
                if action == "skip" and not reason:
                    errors.append(f"{name}:{i + 1}: 'skip' needs a reason")
                parsed = dict(o.split("=", 1) for o in (options or "").split())
                found.append((name, i + 1, language, action, reason or parsed, code))
            i = end + 1
    return found, errors


def cpp_source(code, setup, index):
    file_scope, body_scope = CPP_SETUPS.get(setup, ("", ""))
    includes = [line for line in code.split("\n") if line.lstrip().startswith("#include")]
    body = [line for line in code.split("\n") if not line.lstrip().startswith("#include")]
    return "\n".join(["#include <Kokkos_Core.hpp>", *includes, file_scope,
                      f"void snippet_{index}() {{", body_scope, *body, "}", ""])


def check_cpp(selected, args, work):
    """Builds the C++ snippets as one CMake project against the build's Kokkos and libndzip:
    the `run` ones into a program that calls each in turn, the `compile` ones as objects."""
    project = os.path.join(work, "cpp")
    os.makedirs(project)
    runs, compiles = [], []
    for index, (name, line, _, action, options, code) in enumerate(selected):
        source = f"snippet_{index}.cpp"
        with open(os.path.join(project, source), "w", encoding="utf-8") as f:
            f.write(f"// {name}:{line}\n" + cpp_source(code, options.get("setup"), index))
        (runs if action == "run" else compiles).append((index, source, options))
    with open(os.path.join(project, "main.cpp"), "w", encoding="utf-8") as f:
        f.write("#include <Kokkos_Core.hpp>\n")
        f.writelines(f"void snippet_{i}();\n" for i, _, _ in runs)
        f.write("int main(int argc, char** argv) {\n  Kokkos::ScopeGuard guard(argc, argv);\n")
        f.writelines(f"  snippet_{i}();\n" for i, _, _ in runs)
        f.write("}\n")
    mpi_sources = [s for _, s, o in compiles if o.get("setup") in ("mpi", "halo", "async", "collectives")]
    plain_sources = [s for _, s, _ in compiles if s not in mpi_sources]
    with open(os.path.join(project, "CMakeLists.txt"), "w", encoding="utf-8") as f:
        f.write(f"""cmake_minimum_required(VERSION 3.16)
project(doc_snippets LANGUAGES CXX)
find_package(Kokkos REQUIRED)
set(CMAKE_CXX_STANDARD 17)
# The source folder too: the device-callable decoder's internals (core/, backends/), which an
# install puts under include/ndzip/kernels.
include_directories({args.source_dir}/include {args.binary_dir}/include {args.source_dir})
add_executable(run_snippets main.cpp {" ".join(s for _, s, _ in runs)})
target_link_libraries(run_snippets PRIVATE {args.ndzip_lib} Kokkos::kokkos)
if(NOT "{' '.join(plain_sources)}" STREQUAL "")
  add_library(compiled_snippets OBJECT {" ".join(plain_sources)})
  target_link_libraries(compiled_snippets PRIVATE Kokkos::kokkos)
endif()
if(NOT "{' '.join(mpi_sources)}" STREQUAL "")
  find_package(MPI REQUIRED COMPONENTS CXX)
  add_library(mpi_snippets OBJECT {" ".join(mpi_sources)})
  target_include_directories(mpi_snippets PRIVATE {args.source_dir}/mpi/include)
  target_link_libraries(mpi_snippets PRIVATE Kokkos::kokkos MPI::MPI_CXX)
endif()
""")
    build = os.path.join(work, "cpp-build")
    steps = [["cmake", "-S", project, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
              f"-DCMAKE_CXX_COMPILER={args.cxx}", f"-DKokkos_DIR={args.kokkos_dir}"],
             ["cmake", "--build", build, "-j", "2"],
             [os.path.join(build, "run_snippets")]]
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_PROC_BIND="false")
    for step in steps:
        result = subprocess.run(step, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            print(result.stdout[-6000:], result.stderr[-6000:], sep="\n")
            where = ", ".join(f"{n}:{l}" for n, l, *_ in selected)
            return [f"C++ snippets ({where}): '{' '.join(step[:3])}' failed"]
    return []


def check_script(snippet, args, work, index):
    name, line, language, _, options, code = snippet
    folder = os.path.join(work, f"{language}-{index}")
    os.makedirs(folder)
    setup = options.get("setup")
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_PROC_BIND="false",
               PATH=os.path.join(args.binary_dir, "bin") + os.pathsep + os.environ["PATH"],
               PYTHONPATH=os.path.join(args.binary_dir, "python"))
    if language == "python":
        command = [args.python, "-c", PY_SETUPS.get(setup, "") + code]
    else:
        if setup:
            made = subprocess.run([args.python, "-c", SH_SETUPS[setup]], cwd=folder, env=env,
                                  capture_output=True, text=True)
            if made.returncode != 0:
                return [f"{name}:{line}: its setup '{setup}' failed: {made.stderr[-2000:]}"]
        command = ["bash", "-euo", "pipefail", "-c", code]
    result = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                            timeout=600)
    if result.returncode != 0:
        return [f"{name}:{line}: the ```{language} snippet fails (status {result.returncode}):\n"
                f"{result.stdout[-3000:]}{result.stderr[-3000:]}"]
    expected = os.path.join(folder, "expected_output.txt")
    if os.path.exists(expected):
        with open(expected, encoding="utf-8") as f:
            want = f.read().strip()
        if want not in result.stdout:
            return [f"{name}:{line}: the snippet printed {result.stdout.strip()!r}, not {want}"]
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--binary-dir", required=True)
    parser.add_argument("--cxx")
    parser.add_argument("--kokkos-dir")
    parser.add_argument("--kokkos-version", default="0")
    parser.add_argument("--ndzip-lib")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--list", action="store_true", help="list the snippets and how")
    parser.add_argument("--only", nargs="+", help="these Markdown files (relative to the source "
                        "folder) instead of all")
    args = parser.parse_args()
    found, errors = snippets(args.source_dir, args.only)
    if args.list:
        for name, line, language, action, options, _ in found:
            print(f"{name}:{line}: {language} {action} {options}")
    kokkos4 = int(args.kokkos_version.split(".")[0]) >= 4
    cpp, scripts = [], []
    for snippet in found:
        name, line, language, action, options, _ = snippet
        if action == "skip":
            continue
        if language == "cpp":
            if options.get("kokkos") == "4" and not kokkos4:
                print(f"{name}:{line}: Kokkos 4 form, not compiled against Kokkos "
                      f"{args.kokkos_version}")
                continue
            cpp.append(snippet)
        elif language in ("python", "sh"):
            scripts.append(snippet)
        else:
            errors.append(f"{name}:{line}: a ```{language} snippet can only be skipped")
    if errors:
        print("\n".join(errors))
        return 1
    work = tempfile.mkdtemp(prefix="ndzip-doc-snippets-")
    try:
        for index, snippet in enumerate(scripts):
            errors += check_script(snippet, args, work, index)
        if cpp:
            errors += check_cpp(cpp, args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    skipped = sum(1 for s in found if s[3] == "skip")
    if errors:
        print("\n".join(errors))
        return 1
    print(f"doc snippets: {len(scripts)} scripts run, {len(cpp)} C++ snippets built, "
          f"{skipped} skipped with their reasons")
    return 0


if __name__ == "__main__":
    sys.exit(main())
