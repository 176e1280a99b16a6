#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Offline checks of the Spack recipe spack/packages/ndzip-kokkos/package.py.

Without Spack (scripts/test-spack.sh runs a real Spack 0.23 where its kit is present), the
recipe is loaded against a small stand-in for `spack.package` that records the directives and
mimics the few package methods the recipe calls (define, define_from_variant, self["dep"] of
Spack 1.0, spec.satisfies). Beside the recipe itself it
reads the project it packages: every variant must map onto something the project's CMake builds
(a KOKKOS_ENABLE_<X> entry of the execution-space list that core/instantiate.hpp instantiates,
or a CMake option), and a released
version's tarball, made from its tag in this checkout, must have the recipe's sha256. Run:

    python3 spack/tests/test_package.py
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_PY = os.path.normpath(os.path.join(HERE, "..", "packages", "ndzip-kokkos", "package.py"))
PROJECT_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SPDX = "SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception"

# --- the stand-in for spack.package ------------------------------------------------------------

DIRECTIVES = []  # (name, args, kwargs) in declaration order
CALLS = []  # (executable path, args, kwargs) of every fake Executable call
EXAMPLE_OUTPUT = ["ndzip-kokkos 0.2.0 on Serial: 96^3 doubles, ... (2.000x smaller), bit-exact\n"]


def _directive(name):
    def record(*args, **kwargs):
        DIRECTIVES.append((name, args, kwargs))

    record.__name__ = name
    return record


def run_after(*phases):
    def mark(func):
        func.run_after = phases
        return func

    return mark


def run_before(*phases):
    def mark(func):
        func.run_before = phases
        return func

    return mark


def on_package_attributes(**attrs):
    def mark(func):
        func.on_package_attributes = attrs
        return func

    return mark


class Executable:
    def __init__(self, path):
        self.path = str(path)

    def __call__(self, *args, **kwargs):
        CALLS.append((self.path, args, kwargs))
        if kwargs.get("output") is str:
            return EXAMPLE_OUTPUT[0]
        return None


def which(name):
    return Executable(name)


class Prefix(str):
    """Like Spack's Prefix: attribute access joins a path component."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Prefix(os.path.join(self, name))


def _cmake_define(name, value):
    """Spack's CMakePackage.define: -DNAME:BOOL=ON|OFF, lists joined with ';', else STRING."""
    if isinstance(value, bool):
        kind, value = "BOOL", "ON" if value else "OFF"
    elif isinstance(value, (list, tuple)):
        kind, value = "STRING", ";".join(str(v) for v in value)
    else:
        kind, value = "STRING", str(value)
    return f"-D{name}:{kind}={value}"


class CMakePackage:
    def __init__(self, spec):
        self.spec = spec
        self.run_tests = False
        self.stage = types.SimpleNamespace(path="/stage/ndzip-kokkos")
        self.test_suite = None

    @property
    def prefix(self):
        return self.spec.prefix

    def __getitem__(self, name):
        # Spack 1.0: self["dep"] is the dependency's package object.
        return self.spec[name].package

    @staticmethod
    def define(name, value):
        return _cmake_define(name, value)

    def define_from_variant(self, cmake_var, variant):
        return _cmake_define(cmake_var, self.spec.variants[variant])


class CudaPackage:
    cuda_arch_values = ("70", "80", "90")


class ROCmPackage:
    amdgpu_targets = ("gfx90a", "gfx942")


def _install_fake_spack():
    package = types.ModuleType("spack.package")
    for name in (
        "version",
        "variant",
        "depends_on",
        "conflicts",
        "maintainers",
        "license",
        "requires",
        "provides",
    ):
        setattr(package, name, _directive(name))
    for obj in (run_after, run_before, on_package_attributes, Executable, which):
        setattr(package, obj.__name__, obj)
    package.join_path = os.path.join
    package.Prefix = Prefix
    package.CMakePackage = CMakePackage
    package.CudaPackage = CudaPackage
    package.ROCmPackage = ROCmPackage
    spack = types.ModuleType("spack")
    spack.package = package
    sys.modules["spack"] = spack
    sys.modules["spack.package"] = package


def load_recipe():
    sys.dont_write_bytecode = True  # leave no __pycache__ in the Spack repository
    _install_fake_spack()
    del DIRECTIVES[:]
    spec = importlib.util.spec_from_file_location("ndzip_kokkos_recipe", PACKAGE_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- a fake concrete spec ----------------------------------------------------------------------


class FakeSpec:
    """A concrete spec: boolean and single-valued variants, named dependencies.

    satisfies() understands what the recipe asks: '+v', '~v', 'v=value', several of them
    together, and '^dep<constraints>' for a dependency."""

    def __init__(self, name, prefix, variants, deps=(), package=None):
        self.name = name
        self.prefix = Prefix(prefix)
        self.variants = dict(variants)
        self._deps = {d.name: d for d in deps}
        self.package = package

    def __getitem__(self, name):
        if name == self.name:
            return self
        for dep in self._deps.values():
            if name == dep.name:
                return dep
            try:
                return dep[name]
            except KeyError:
                pass
        raise KeyError(name)

    def satisfies(self, constraint):
        constraint = constraint.strip()
        if constraint.startswith("^"):
            match = re.match(r"\^([\w-]+)(.*)", constraint)
            try:
                dep = self[match.group(1)]
            except KeyError:
                return False
            return dep.satisfies(match.group(2))
        tokens = re.findall(r"([+~])(\w+)|(\w+)=(\S+)", constraint)
        if "".join("".join(t) for t in tokens).replace("=", "") != re.sub(
            r"[\s=]", "", constraint
        ):
            raise ValueError(f"FakeSpec.satisfies cannot parse {constraint!r}")
        for sign, flag, key, value in tokens:
            if sign:
                if bool(self.variants.get(flag, False)) != (sign == "+"):
                    return False
            elif str(self.variants.get(key)) != value:
                return False
        return True

    def __contains__(self, constraint):
        return self.satisfies(constraint)


KOKKOS_PREFIX = "/opt/kokkos"
NVCC_WRAPPER = "/opt/kokkos-nvcc-wrapper/bin/nvcc_wrapper"
HIPCC = "/opt/rocm/bin/hipcc"
PREFIX = "/opt/ndzip-kokkos"
HDF5_PREFIX = "/opt/hdf5"
MPICXX = "/opt/openmpi/bin/mpicxx"


def make_spec(**overrides):
    variants = {
        "serial": True,
        "openmp": False,
        "threads": False,
        "cuda": False,
        "rocm": False,
        "shared": True,
        "cli": True,
        "tests": False,
        "perf_tests": False,
        "hdf5": False,
        "mpi": False,
        "cuda_arch": "none",
        "amdgpu_target": "none",
    }
    variants.update(overrides)
    kokkos_variants = {
        k: variants[k]
        for k in ("serial", "openmp", "threads", "cuda", "rocm", "cuda_arch", "amdgpu_target")
    }
    kokkos_variants["wrapper"] = variants["cuda"]
    kokkos_variants["shared"] = variants["shared"]
    kokkos_variants["pic"] = False
    deps = []
    if variants["rocm"]:
        hip = FakeSpec("hip", "/opt/rocm", {})
        hip.hipcc = HIPCC  # hip's setup_dependent_package sets spec.hipcc
        deps.append(hip)
    # Spack 1.0's kokkos has kokkos_cxx on its package, not on its spec.
    kokkos_package = types.SimpleNamespace(
        kokkos_cxx=NVCC_WRAPPER if variants["cuda"] else "/spack/env/c++"
    )
    kokkos = FakeSpec("kokkos", KOKKOS_PREFIX, kokkos_variants, deps, package=kokkos_package)
    cmake = FakeSpec("cmake", "/opt/cmake", {})
    own_deps = [kokkos, cmake]
    if variants["hdf5"]:
        own_deps.append(FakeSpec("hdf5", HDF5_PREFIX, {}))
    if variants["mpi"]:
        mpi = FakeSpec("mpi", "/opt/openmpi", {})
        mpi.mpicxx = MPICXX  # the mpi provider's setup_dependent_package sets spec.mpicxx
        own_deps.append(mpi)
    return FakeSpec("ndzip-kokkos", PREFIX, variants, own_deps)


def defines(args):
    """{'NAME': 'value'} from ['-DNAME:TYPE=value', ...]."""
    out = {}
    for arg in args:
        match = re.fullmatch(r"-D([^:=]+)(?::[A-Z]+)?=(.*)", arg)
        if not match:
            raise AssertionError(f"not a CMake definition: {arg!r}")
        out[match.group(1)] = match.group(2)
    return out


# --- what the project builds --------------------------------------------------------------------

# Backend variants and the Kokkos execution space each stands for: KOKKOS_ENABLE_<X>, the macro
# core/instantiate.hpp instantiates the codec under.
BACKEND_VARIANTS = {
    "serial": "SERIAL",
    "openmp": "OPENMP",
    "threads": "THREADS",
    "cuda": "CUDA",
    "rocm": "HIP",
}
# GPU-architecture variants: forwarded to Kokkos (test_gpu_architectures_forwarded), for the
# backend variant named here.
ARCH_VARIANTS = {"cuda_arch": "cuda", "amdgpu_target": "rocm"}


def offered_variants(cls, directives):
    """Every variant the recipe offers: its own and those of CudaPackage / ROCmPackage."""
    names = {args[0] for name, args, _ in directives if name == "variant"}
    if issubclass(cls, CudaPackage):
        names |= {"cuda", "cuda_arch"}
    if issubclass(cls, ROCmPackage):
        names |= {"rocm", "amdgpu_target"}
    return names


def instantiated_backends(instantiate_source, spaces_source):
    """The execution spaces core/instantiate.hpp instantiates the codec for: it expands
    NDZIP_FOR_EACH_EXECUTION_SPACE with a macro that expands NDZIP_INSTANTIATE_FOR_SPACE, and
    the list (include/ndzip/detail/execution_spaces.hpp) holds each X with a KOKKOS_ENABLE_X
    branch that defines NDZIP_DETAIL_X_SPACE(X) as X(space, name) and that
    NDZIP_FOR_EACH_EXECUTION_SPACE(X) expands."""
    code = re.sub(r"\\\n", " ", instantiate_source)  # join continued lines
    per_space = re.search(
        r"^\s*#\s*define\s+(\w+)\(SPACE, name\)\s+NDZIP_INSTANTIATE_FOR_SPACE\(", code, re.M
    )
    if not per_space or not re.search(
        rf"^\s*NDZIP_FOR_EACH_EXECUTION_SPACE\({per_space.group(1)}\)", code, re.M
    ):
        return set()
    text = re.sub(r"\\\n", " ", spaces_source)
    umbrella = re.search(r"^\s*#\s*define\s+NDZIP_FOR_EACH_EXECUTION_SPACE\(X\)(.*)$", text, re.M)
    listed = umbrella.group(1) if umbrella else ""
    expanded = set(re.findall(r"NDZIP_DETAIL_(\w+)_SPACE\(X\)", listed))
    found = set()
    branch = re.compile(
        r"^\s*#\s*(?:ifdef\s+KOKKOS_ENABLE_(\w+)|if\s+defined\s*\(?\s*KOKKOS_ENABLE_(\w+)\s*\)?)"
        r"[^\n]*\n(.*?)^\s*#\s*(?:else|elif|endif)",
        re.M | re.S,
    )
    for match in branch.finditer(text):
        space = match.group(1) or match.group(2)
        body = match.group(3)
        define = rf"#\s*define\s+NDZIP_DETAIL_{space}_SPACE\(X\)\s+X\("
        if re.search(define, body) and space in expanded:
            found.add(space)
    return found


def project_cmake_files(root):
    """The project's CMakeLists.txt and *.cmake files: not build trees (a folder holding a
    CMakeCache.txt), not hidden folders (.git, .deps with third-party sources)."""
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [
            d
            for d in subfolders
            if not d.startswith(".")
            and not os.path.exists(os.path.join(folder, d, "CMakeCache.txt"))
        ]
        for name in files:
            if name == "CMakeLists.txt" or name.endswith(".cmake"):
                yield os.path.join(folder, name)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# --- the tests ---------------------------------------------------------------------------------


class RecipeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.module = load_recipe()
        cls.cls = cls.module.NdzipKokkos
        cls.directives = list(DIRECTIVES)

    def named(self, name):
        return [(args, kwargs) for n, args, kwargs in self.directives if n == name]

    def depends(self):
        return {(args[0], kwargs.get("when")): kwargs for args, kwargs in self.named("depends_on")}

    def conflicts(self):
        return {(args[0], kwargs.get("when")): kwargs for args, kwargs in self.named("conflicts")}

    def instance(self, **variants):
        return self.cls(make_spec(**variants))

    # -- class and directives

    def test_class_and_bases(self):
        for base in (CMakePackage, CudaPackage, ROCmPackage):
            self.assertTrue(issubclass(self.cls, base), f"NdzipKokkos does not derive {base}")
        self.assertTrue((self.cls.__doc__ or "").strip(), "the package has no docstring")

    def versions(self):
        return {args[0]: kwargs for args, kwargs in self.named("version")}

    def test_versions(self):
        versions = self.versions()
        self.assertEqual(set(versions), {"main", "0.2.0"})
        self.assertEqual(versions["main"], {"branch": "main"}, "main: the branch, not preferred")
        for name, kwargs in versions.items():
            # A release is the tarball of its tag, checked by its sha256 (the url below).
            if name != "main":
                self.assertEqual(set(kwargs), {"sha256"}, f"version {name}: {kwargs}")
                self.assertRegex(kwargs["sha256"], r"^[0-9a-f]{64}$", f"version {name}")
        self.assertTrue(self.cls.git.endswith(".git"))
        # Spack derives every release's address from this one by its version.
        self.assertTrue(
            self.cls.url.endswith("/releases/download/v0.2.0/ndzip-kokkos-0.2.0.tar"), self.cls.url
        )

    def test_release_tarballs_match_their_checksums(self):
        """Each release's tarball, made from its tag by scripts/make-release-tarball.sh, has the
        sha256 the recipe names; where this clone lacks the tag (a clone made with --no-tags or
        --depth), there is nothing to make it from, and the test says so."""
        git = shutil.which("git")
        if not git:
            self.skipTest("git is not installed: no release tarball can be made")
        # A copy of the tree inside another checkout (a Spack stage) is no clone of its own:
        # git would answer for the checkout around it.
        top = subprocess.run(
            [git, "-C", PROJECT_ROOT, "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
        )
        if top.returncode != 0 or os.path.realpath(top.stdout.strip()) != os.path.realpath(
            PROJECT_ROOT
        ):
            self.skipTest(f"{PROJECT_ROOT} is not the top of a git clone: no tag to check")
        script = os.path.join(PROJECT_ROOT, "scripts", "make-release-tarball.sh")
        checked = []
        for name, kwargs in self.versions().items():
            if name == "main":
                continue
            has_tag = subprocess.run(
                [git, "-C", PROJECT_ROOT, "rev-parse", "--verify", "--quiet", f"refs/tags/v{name}"],
                capture_output=True,
            )
            if has_tag.returncode != 0:
                continue
            with tempfile.TemporaryDirectory() as out:
                made = subprocess.run(
                    ["bash", script, name, out], capture_output=True, text=True, check=True
                )
            self.assertEqual(
                made.stdout.strip(), kwargs["sha256"], f"version {name}: tarball of v{name}"
            )
            checked.append(name)
        if not checked:
            self.skipTest("this clone has no release tag (git fetch --tags): no tarball checked")

    def test_license_and_maintainers(self):
        self.assertEqual(
            [args[0] for args, _ in self.named("license")], ["Apache-2.0 WITH LLVM-exception"]
        )
        license_file = os.path.join(PROJECT_ROOT, "LICENSE")
        if os.path.exists(license_file):
            self.assertIn("LLVM Exceptions", read(license_file))
        maintainers = self.named("maintainers")
        self.assertEqual(len(maintainers), 1, "one maintainers(...) directive")
        self.assertTrue(maintainers[0][0], "maintainers() names nobody")
        self.assertTrue(self.cls.homepage.startswith("https://"))
        for path in (PACKAGE_PY, os.path.abspath(__file__)):
            with open(path, encoding="utf-8") as f:
                head = f.readline() + f.readline()
            self.assertIn(SPDX, head, f"{path}: no SPDX identifier in its first two lines")

    def test_variants_and_defaults(self):
        variants = {args[0]: kwargs for args, kwargs in self.named("variant")}
        expected = {
            "serial": True,
            "openmp": False,
            "threads": False,
            "shared": True,
            "cli": True,
            "tests": False,
            "perf_tests": False,
            "hdf5": False,
            "mpi": False,
        }
        for name, default in expected.items():
            self.assertIn(name, variants, f"variant {name} missing")
            self.assertIs(variants[name].get("default"), default, f"default of variant {name}")
            self.assertTrue(variants[name].get("description"), f"variant {name} undescribed")

    def test_dependencies(self):
        deps = self.depends()
        expected = [
            ("cxx", None),
            ("cmake@3.16:", None),
            ("kokkos@3.4:4", None),
            ("kokkos+serial", "+serial"),
            ("kokkos+openmp", "+openmp"),
            ("kokkos+threads", "+threads"),
            ("kokkos+cuda+wrapper", "+cuda"),
            ("kokkos+cuda_lambda", "+cuda ^kokkos@:4"),
            ("kokkos+rocm", "+rocm"),
            ("kokkos+shared", "+shared"),
            ("hdf5", "+hdf5"),
            ("kokkos+shared", "+hdf5"),
            ("mpi", "+mpi"),
            ("xxhash", None),
            ("cli11@2.1:", "+cli"),
            ("cli11@2.1:", "+perf_tests"),
            ("doctest", "+tests"),
            ("openssl", "+tests"),
            ("python@3:", "+tests"),
        ]
        for key in expected:
            self.assertIn(key, deps, f"depends_on({key[0]!r}, when={key[1]!r}) missing")
        self.assertEqual(deps[("cmake@3.16:", None)].get("type"), "build")
        # The library itself needs xxhash.h (the frame checksum), whatever the variants.
        self.assertEqual(deps[("xxhash", None)].get("type"), "build")
        self.assertEqual(deps[("cxx", None)].get("type"), "build")
        # CLI11 is header only: the tool and the benchmark need it to build, nothing at run time.
        for when in ("+cli", "+perf_tests"):
            self.assertEqual(deps[("cli11@2.1:", when)].get("type"), "build")
        self.assertEqual(set(deps[("doctest", "+tests")].get("type")), {"build", "test"})
        self.assertEqual(deps[("python@3:", "+tests")].get("type"), "test")
        self.assertNotIn("type", deps[("openssl", "+tests")], "openssl is linked by the tests")

    def test_kokkos_bound(self):
        """Kokkos 3.4 to 4.x, the versions the project is built and tested with: an open upper
        bound lets a host build concretise an untested Kokkos 5."""
        bounds = [
            spec for spec, when in self.depends() if spec.startswith("kokkos@") and when is None
        ]
        self.assertEqual(bounds, ["kokkos@3.4:4"])
        for spec, when in self.depends():
            if spec.startswith("kokkos") and "@" in spec:
                self.assertNotRegex(spec, r"@[\w.]*:(\s|$)", f"{spec}: no upper bound")

    def test_cuda_lambda_only_where_kokkos_has_it(self):
        """cuda_lambda exists in Spack's kokkos only @:4: asked for unconditionally with +cuda
        it would cap +cuda at Kokkos 4 on its own."""
        lambdas = [(spec, when) for spec, when in self.depends() if "cuda_lambda" in spec]
        self.assertEqual(len(lambdas), 1, lambdas)
        spec, when = lambdas[0]
        self.assertIn("+cuda", when or "")
        self.assertIn("^kokkos@:4", when or "", f"{spec} is asked for beyond Kokkos 4")

    def test_gpu_architectures_forwarded(self):
        deps = self.depends()
        for arch in CudaPackage.cuda_arch_values:
            key = (f"kokkos cuda_arch={arch}", f"+cuda cuda_arch={arch}")
            self.assertIn(key, deps, f"cuda_arch={arch} not forwarded to kokkos")
        for target in ROCmPackage.amdgpu_targets:
            key = (f"kokkos amdgpu_target={target}", f"+rocm amdgpu_target={target}")
            self.assertIn(key, deps, f"amdgpu_target={target} not forwarded to kokkos")
        forwarded = [s for s, _ in deps if "cuda_arch=" in s or "amdgpu_target=" in s]
        self.assertEqual(
            len(forwarded), len(CudaPackage.cuda_arch_values) + len(ROCmPackage.amdgpu_targets)
        )

    def test_conflicts(self):
        conflicts = self.conflicts()
        for key in [
            ("+cuda", "cuda_arch=none"),
            ("+rocm", "amdgpu_target=none"),
            ("+cuda", "+rocm"),
            ("+threads", "+openmp"),
            ("^kokkos+cuda", "~cuda"),
            ("^kokkos+rocm", "~rocm"),
        ]:
            self.assertIn(key, conflicts, f"conflicts({key[0]!r}, when={key[1]!r}) missing")
            self.assertTrue(conflicts[key].get("msg"), f"conflict {key} has no message")
        # ~serial only stops requiring Serial: a conflict on a spec that requires no backend
        # would make the concretizer turn +openmp on unasked.
        self.assertFalse([k for k in conflicts if "~serial" in k[0]], "a conflict on ~serial")

    def test_shared_is_never_turned_off_unasked(self):
        """`ndzip-kokkos ^kokkos~shared` must be refused, not concretized silently as ~shared
        (depends_on("kokkos+shared", when="+shared") alone lets the concretizer flip it)."""
        variants = {args[0]: kwargs for args, kwargs in self.named("variant")}
        self.assertIs(variants["shared"].get("sticky"), True)
        self.assertIn(("kokkos+shared", "+shared"), self.depends())

    # -- every variant maps onto something the project's CMake builds

    def test_every_variant_is_classified(self):
        """A variant this test does not know is neither checked below nor, likely, built."""
        offered = offered_variants(self.cls, self.directives)
        build_options = offered - set(BACKEND_VARIANTS) - set(ARCH_VARIANTS)
        variants = {args[0]: kwargs for args, kwargs in self.named("variant")}
        for name in build_options:
            self.assertIn(name, variants, name)
            self.assertIsInstance(
                variants[name].get("default"),
                bool,
                f"variant {name}: not a backend, and not a boolean build option this test can "
                "switch; classify it in BACKEND_VARIANTS / ARCH_VARIANTS or extend the test",
            )

    def test_backend_variants_have_instantiations(self):
        """Each backend variant stands for an execution space that core/instantiate.hpp
        instantiates the codec for, and each instantiated space has a variant (+rocm was once
        offered while the library had no HIP code)."""
        instantiate = os.path.join(PROJECT_ROOT, "core", "instantiate.hpp")
        space_list = os.path.join(PROJECT_ROOT, "include", "ndzip", "detail", "execution_spaces.hpp")
        if not os.path.exists(instantiate):
            self.skipTest(f"{instantiate} is missing: not in the project's source tree")
        spaces = instantiated_backends(read(instantiate), read(space_list))
        offered = offered_variants(self.cls, self.directives)
        unbuilt = [
            f"+{variant} (KOKKOS_ENABLE_{space})"
            for variant, space in BACKEND_VARIANTS.items()
            if variant in offered and space not in spaces
        ]
        self.assertFalse(
            unbuilt,
            f"variants offered for which core/instantiate.hpp instantiates nothing: "
            f"{', '.join(unbuilt)} (it does for: {sorted(spaces)})",
        )
        by_space = {space: variant for variant, space in BACKEND_VARIANTS.items()}
        for space in spaces:
            self.assertIn(space, by_space, f"KOKKOS_ENABLE_{space}: no backend variant known")
            self.assertIn(by_space[space], offered, f"{space} is built but has no variant")

    def test_build_option_variants_reach_cmake_options(self):
        """Each other variant changes a CMake definition in cmake_args(), and at least one of
        those is an option() or cache variable of the project's CMake (or BUILD_SHARED_LIBS, declared by the top
        CMakeLists.txt); every name it passes is read by the project's CMake."""
        top = os.path.join(PROJECT_ROOT, "CMakeLists.txt")
        if not os.path.exists(top):
            self.skipTest(f"{top} is missing: not in the project's source tree")
        sources = {path: read(path) for path in project_cmake_files(PROJECT_ROOT)}
        text = "\n".join(sources.values())
        options = set(re.findall(r"^\s*option\s*\(\s*(\w+)", text, re.M | re.I))
        # Cache variables a user sets (set(NAME value CACHE ...)) are options too.
        options |= set(re.findall(r"^\s*set\s*\(\s*(\w+)\s[^)]*\bCACHE\b", text, re.M | re.I))
        if re.search(r"\bBUILD_SHARED_LIBS\b", read(top)):
            options.add("BUILD_SHARED_LIBS")
        offered = offered_variants(self.cls, self.directives)
        for variant in sorted(offered - set(BACKEND_VARIANTS) - set(ARCH_VARIANTS)):
            on = defines(self.instance(**{variant: True}).cmake_args())
            off = defines(self.instance(**{variant: False}).cmake_args())
            changed = {k for k in set(on) | set(off) if on.get(k) != off.get(k)}
            self.assertTrue(changed, f"variant {variant} changes nothing in cmake_args()")
            self.assertTrue(
                changed & options,
                f"variant {variant} sets {sorted(changed)}, none of them an option() of the "
                f"project's CMake (options: {sorted(options)})",
            )
            for name in changed - options:
                if name.startswith("CMAKE_"):
                    continue  # CMake's own
                self.assertRegex(
                    text,
                    rf"\b{re.escape(name)}\b",
                    f"variant {variant}: no CMake file reads {name}",
                )

    # -- cmake_args

    def test_cmake_args_openmp(self):
        args = self.instance(serial=False, openmp=True).cmake_args()
        d = defines(args)
        self.assertEqual(d["Kokkos_ROOT"], KOKKOS_PREFIX)
        self.assertEqual(d["BUILD_SHARED_LIBS"], "ON")
        self.assertEqual(d["NDZIP_BUILD_TOOLS"], "ON")
        self.assertEqual(d["NDZIP_BUILD_TESTS"], "OFF")
        self.assertEqual(d["NDZIP_BUILD_PERF_TESTS"], "OFF")
        self.assertNotIn("CMAKE_CXX_COMPILER", d)
        self.assertNotIn("NDZIP_PEERS_DISABLE", d)
        self.assertIn("-DNDZIP_BUILD_TOOLS:BOOL=ON", args)

    def test_cmake_args_variants_switch_options(self):
        d = defines(self.instance(cli=False, tests=True, perf_tests=True).cmake_args())
        self.assertEqual(d["NDZIP_BUILD_TOOLS"], "OFF")
        self.assertEqual(d["NDZIP_BUILD_TESTS"], "ON")
        self.assertEqual(d["NDZIP_BUILD_PERF_TESTS"], "ON")
        peers = d["NDZIP_PEERS_DISABLE"].split(";")
        self.assertEqual(peers, ["zstd", "lz4", "blosc", "fpzip", "zfp"])

    def test_cmake_args_shared(self):
        self.assertEqual(defines(self.instance().cmake_args())["BUILD_SHARED_LIBS"], "ON")
        d = defines(self.instance(shared=False).cmake_args())
        self.assertEqual(d["BUILD_SHARED_LIBS"], "OFF")
        self.assertIn("-DBUILD_SHARED_LIBS:BOOL=OFF", self.instance(shared=False).cmake_args())
        # Only a shared libndzip and the HDF5 plugin (a shared object that shares Kokkos with
        # the application loading it) constrain how Kokkos was built.
        kokkos_link = [(s, w) for s, w in self.depends() if re.search(r"[+~](shared|pic)\b", s)]
        self.assertEqual(kokkos_link, [("kokkos+shared", "+shared"), ("kokkos+shared", "+hdf5")])

    def test_cmake_args_mpi(self):
        d = defines(self.instance().cmake_args())
        self.assertEqual(d["NDZIP_ENABLE_MPI"], "OFF", "off unless asked for, never AUTO")
        self.assertNotIn("MPI_CXX_COMPILER", d)
        d = defines(self.instance(mpi=True).cmake_args())
        self.assertEqual(d["NDZIP_ENABLE_MPI"], "ON")
        self.assertEqual(d["MPI_CXX_COMPILER"], MPICXX, "ndzip::mpi links Spack's MPI")

    def test_cmake_args_python(self):
        d = defines(self.instance().cmake_args())
        self.assertEqual(d["NDZIP_BUILD_PYTHON"], "OFF", "never from the build host's Python")
        self.assertEqual(d["CMAKE_DISABLE_FIND_PACKAGE_KokkosKernels"], "ON",
                         "the Kokkos Kernels example never from the build host")

    def test_cmake_args_hdf5(self):
        d = defines(self.instance().cmake_args())
        self.assertEqual(d["NDZIP_BUILD_HDF5_PLUGIN"], "OFF", "off unless asked for")
        self.assertNotIn("HDF5_ROOT", d)
        d = defines(self.instance(hdf5=True).cmake_args())
        self.assertEqual(d["NDZIP_BUILD_HDF5_PLUGIN"], "ON")
        self.assertEqual(d["HDF5_ROOT"], HDF5_PREFIX, "the plugin links Spack's hdf5")

    def test_cmake_args_threads(self):
        d = defines(self.instance(serial=False, threads=True).cmake_args())
        self.assertNotIn("CMAKE_CXX_COMPILER", d)
        self.assertEqual(d["Kokkos_ROOT"], KOKKOS_PREFIX)

    def test_cmake_args_cuda(self):
        d = defines(self.instance(cuda=True, cuda_arch="90").cmake_args())
        self.assertEqual(d["CMAKE_CXX_COMPILER"], NVCC_WRAPPER)
        self.assertEqual(d["Kokkos_ROOT"], KOKKOS_PREFIX)

    def test_cmake_args_cuda_spack_0x(self):
        """Spack 0.x (0.23 tried): kokkos sets kokkos_cxx on its spec, and a package cannot be
        indexed (self["kokkos"] raises TypeError there)."""
        pkg = self.instance(cuda=True, cuda_arch="90")
        pkg.spec["kokkos"].kokkos_cxx = NVCC_WRAPPER
        pkg.spec["kokkos"].package = None

        def unsubscriptable(package, name):
            raise TypeError(f"'{type(package).__name__}' object is not subscriptable")

        with mock.patch.object(type(pkg), "__getitem__", unsubscriptable):
            d = defines(pkg.cmake_args())
        self.assertEqual(d["CMAKE_CXX_COMPILER"], NVCC_WRAPPER)

    def test_cmake_args_rocm(self):
        d = defines(self.instance(rocm=True, amdgpu_target="gfx90a").cmake_args())
        self.assertEqual(d["CMAKE_CXX_COMPILER"], HIPCC)

    # -- the downstream-example tests

    def test_build_time_check_is_registered(self):
        check = getattr(self.cls, "check_downstream_example", None)
        self.assertIsNotNone(check, "check_downstream_example missing")
        self.assertEqual(getattr(check, "run_after", None), ("install",))
        self.assertEqual(getattr(check, "on_package_attributes", None), {"run_tests": True})
        test = getattr(self.cls, "test_downstream_example", None)
        self.assertIsNotNone(test, "test_downstream_example missing")
        self.assertTrue((test.__doc__ or "").strip(), "test_downstream_example has no docstring")

    def run_example(self, method, **variants):
        pkg = self.instance(**variants)
        pkg.test_suite = types.SimpleNamespace(test_dir_for_spec=lambda spec: "/tests/ndzip")
        del CALLS[:]
        getattr(pkg, method)()
        return list(CALLS)

    def test_example_configures_builds_and_runs(self):
        calls = self.run_example("check_downstream_example", serial=False, openmp=True)
        self.assertEqual(len(calls), 3, calls)
        (cmake1, configure, _), (cmake2, build, _), (exe, run_args, run_kwargs) = calls
        self.assertEqual(cmake1, "/opt/cmake/bin/cmake")
        self.assertEqual(cmake2, cmake1)
        build_dir = configure[configure.index("-B") + 1]
        self.assertTrue(build_dir.startswith("/stage/ndzip-kokkos/"), build_dir)
        source = configure[configure.index("-S") + 1]
        self.assertEqual(source, f"{PREFIX}/share/ndzip-kokkos/examples/downstream")
        d = defines(a for a in configure if a.startswith("-D"))
        self.assertEqual(d["CMAKE_PREFIX_PATH"], f"{PREFIX};{KOKKOS_PREFIX}")
        self.assertNotIn("CMAKE_CXX_COMPILER", d)
        self.assertEqual(build, ("--build", build_dir))
        self.assertEqual(exe, os.path.join(build_dir, "ndzip-downstream-example"))
        self.assertIs(run_kwargs.get("output"), str)

    def test_example_uses_device_compiler(self):
        calls = self.run_example("test_downstream_example", cuda=True, cuda_arch="80")
        configure = calls[0][1]
        self.assertTrue(configure[configure.index("-B") + 1].startswith("/tests/ndzip/"))
        d = defines(a for a in configure if a.startswith("-D"))
        self.assertEqual(d["CMAKE_CXX_COMPILER"], NVCC_WRAPPER)
        calls = self.run_example("test_downstream_example", rocm=True, amdgpu_target="gfx942")
        d = defines(a for a in calls[0][1] if a.startswith("-D"))
        self.assertEqual(d["CMAKE_CXX_COMPILER"], HIPCC)

    def test_example_failure_is_reported(self):
        saved = EXAMPLE_OUTPUT[0]
        EXAMPLE_OUTPUT[0] = "ndzip-kokkos 0.2.0 on Serial: ... MISMATCH\n"
        try:
            with self.assertRaises(AssertionError):
                self.run_example("check_downstream_example")
        finally:
            EXAMPLE_OUTPUT[0] = saved


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    if not result.wasSuccessful():
        print(f"FAIL: {PACKAGE_PY} does not meet the checks above", file=sys.stderr)
        sys.exit(1)
