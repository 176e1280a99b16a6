#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Offline checks of the Spack recipe spack/packages/ndzip-kokkos/package.py.

Spack is not available in this project's CI, so the recipe is loaded against a small stand-in
for `spack.package` that records the directives and mimics the few package methods the recipe
calls (define, define_from_variant, self["dep"], spec.satisfies). Run:

    python3 spack/tests/test_package.py
"""
import importlib.util
import os
import re
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_PY = os.path.normpath(os.path.join(HERE, "..", "packages", "ndzip-kokkos", "package.py"))

# --- the stand-in for spack.package ------------------------------------------------------------

DIRECTIVES = []  # (name, args, kwargs) in declaration order
CALLS = []  # (executable path, args, kwargs) of every fake Executable call
EXAMPLE_OUTPUT = ["ndzip-kokkos 0.1.0 on Serial: 96^3 doubles, ... (2.000x smaller), bit-exact\n"]


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


def make_spec(**overrides):
    variants = {
        "serial": True,
        "openmp": False,
        "cuda": False,
        "rocm": False,
        "cli": True,
        "tests": False,
        "perf_tests": False,
        "cuda_arch": "none",
        "amdgpu_target": "none",
    }
    variants.update(overrides)
    kokkos_variants = {
        k: variants[k] for k in ("serial", "openmp", "cuda", "rocm", "cuda_arch", "amdgpu_target")
    }
    kokkos_variants["wrapper"] = variants["cuda"]
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
    return FakeSpec("ndzip-kokkos", PREFIX, variants, [kokkos, cmake])


def defines(args):
    """{'NAME': 'value'} from ['-DNAME:TYPE=value', ...]."""
    out = {}
    for arg in args:
        match = re.fullmatch(r"-D([^:=]+)(?::[A-Z]+)?=(.*)", arg)
        if not match:
            raise AssertionError(f"not a CMake definition: {arg!r}")
        out[match.group(1)] = match.group(2)
    return out


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
        self.assertTrue(self.cls.git.endswith(".git"))

    def test_versions(self):
        versions = self.named("version")
        self.assertEqual(versions, [(("main",), {"branch": "main", "preferred": True})])
        self.assertEqual(self.named("license"), [], "no license file in the project yet")

    def test_variants_and_defaults(self):
        variants = {args[0]: kwargs for args, kwargs in self.named("variant")}
        expected = {
            "serial": True,
            "openmp": False,
            "cli": True,
            "tests": False,
            "perf_tests": False,
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
            ("kokkos@3.4:", None),
            ("kokkos+serial", "+serial"),
            ("kokkos+openmp", "+openmp"),
            ("kokkos+cuda+cuda_lambda+wrapper", "+cuda"),
            ("kokkos+rocm", "+rocm"),
            ("xxhash", "+cli"),
            ("doctest", "+tests"),
            ("openssl", "+tests"),
            ("python@3:", "+tests"),
        ]
        for key in expected:
            self.assertIn(key, deps, f"depends_on({key[0]!r}, when={key[1]!r}) missing")
        self.assertEqual(deps[("cmake@3.16:", None)].get("type"), "build")
        self.assertEqual(deps[("cxx", None)].get("type"), "build")
        self.assertEqual(set(deps[("doctest", "+tests")].get("type")), {"build", "test"})
        self.assertEqual(deps[("python@3:", "+tests")].get("type"), "test")
        self.assertNotIn("type", deps[("openssl", "+tests")], "openssl is linked by the tests")

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
            ("~serial~openmp~cuda~rocm", None),
            ("^kokkos+cuda", "~cuda"),
            ("^kokkos+rocm", "~rocm"),
        ]:
            self.assertIn(key, conflicts, f"conflicts({key[0]!r}, when={key[1]!r}) missing")
            self.assertTrue(conflicts[key].get("msg"), f"conflict {key} has no message")

    # -- cmake_args

    def test_cmake_args_openmp(self):
        args = self.instance(serial=False, openmp=True).cmake_args()
        d = defines(args)
        self.assertEqual(d["Kokkos_ROOT"], KOKKOS_PREFIX)
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

    def test_cmake_args_cuda(self):
        d = defines(self.instance(cuda=True, cuda_arch="90").cmake_args())
        self.assertEqual(d["CMAKE_CXX_COMPILER"], NVCC_WRAPPER)
        self.assertEqual(d["Kokkos_ROOT"], KOKKOS_PREFIX)

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
        EXAMPLE_OUTPUT[0] = "ndzip-kokkos 0.1.0 on Serial: ... MISMATCH\n"
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
