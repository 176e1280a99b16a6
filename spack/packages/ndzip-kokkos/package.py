# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Spack package for ndzip-kokkos, kept in this project's own Spack repository (spack/repo.yaml).
# scripts/test-spack.sh installs and tests it with a real Spack 0.23 (CI), and
# spack/tests/test_package.py checks it against a stand-in for `spack.package` with Spack 1.0's
# API (spack/README.md).
import os
import shutil

from spack.package import *


class NdzipKokkos(CMakePackage, CudaPackage, ROCmPackage):
    """ndzip-kokkos: a lossless compressor for float and double arrays (the ndzip stream
    format), written once in Kokkos and compiled for every execution space Kokkos was built
    with. Installs the ndzip::ndzip CMake package and, optionally, the `ndzip` command-line
    tool."""

    # The project has no public git remote yet: these are the addresses it is meant to have.
    # Until they exist, a release comes from a mirror holding its tarball, and a checkout is
    # built with `spack develop` (spack/README.md, both with their commands).
    homepage = "https://github.com/ndzip-kokkos/ndzip-kokkos"
    git = "https://github.com/ndzip-kokkos/ndzip-kokkos.git"
    # A release's source is the tarball scripts/make-release-tarball.sh makes from the
    # annotated tag v<version> (uncompressed `git archive`: the same bytes from any clone that
    # has the tag), published as the release's asset under this name.
    url = "https://github.com/ndzip-kokkos/ndzip-kokkos/releases/download/v0.2.0/ndzip-kokkos-0.2.0.tar"

    # Placeholder: the GitHub handle(s) of the people who look after this recipe go here.
    maintainers("ndzip-kokkos")

    license("Apache-2.0 WITH LLVM-exception")

    # Spack prefers a numbered version over a branch, so plain `ndzip-kokkos` is the newest
    # release and `@main` is opt-in. (0.1.0 is not offered: it was never tagged, and it had
    # none of plugins/, mpi/ and python/ that the hdf5 and mpi variants build.)
    version("main", branch="main")
    version("0.2.0", sha256="ce1c5cd2d2f8529d28f061ba6e9bb3f32ecfa9d4a10e3acafd875bbeb287b3ed")

    # The library is compiled for every backend the Kokkos it finds was built with
    # (core/instantiate.hpp); these variants say which backends that Kokkos must have.
    variant("serial", default=True, description="Require a Kokkos with the Serial backend")
    variant("openmp", default=False, description="Require a Kokkos with the OpenMP backend")
    variant("threads", default=False, description="Require a Kokkos with the Threads backend")
    # Sticky: the concretizer may not turn it off by itself (as it would for a static Kokkos,
    # below); `ndzip-kokkos ^kokkos~shared` is refused, and `~shared` has to be asked for.
    variant(
        "shared", default=True, sticky=True, description="Build libndzip as a shared library"
    )
    variant("cli", default=True, description="Build the ndzip command-line tool")
    variant("tests", default=False, description="Build the unit tests (NDZIP_BUILD_TESTS)")
    variant(
        "perf_tests",
        default=False,
        description="Build the benchmark and demo binaries (NDZIP_BUILD_PERF_TESTS)",
    )
    variant(
        "hdf5",
        default=False,
        description="Build the HDF5 filter plugin (NDZIP_BUILD_HDF5_PLUGIN; plugins/hdf5)",
    )
    variant(
        "mpi",
        default=False,
        description="Build ndzip::mpi, compressed MPI transfers of Views (NDZIP_ENABLE_MPI; mpi/)",
    )

    # Spack 1.0 and newer only provide a compiler to packages that declare the language.
    depends_on("cxx", type="build")
    depends_on("cmake@3.16:", type="build")

    # The Kokkos versions the project builds and tests with: 3.4.01 in CI, 4.6.01 on the GPU
    # machine. Kokkos 5 is untested, so it is kept out. (Spack's own kokkos recipe starts at
    # 3.7.02; an older Kokkos can only come in as an external.)
    depends_on("kokkos@3.4:4")
    depends_on("kokkos+serial", when="+serial")
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos+threads", when="+threads")
    # The kernels use device lambdas, and a Kokkos CUDA build compiles through nvcc_wrapper.
    depends_on("kokkos+cuda+wrapper", when="+cuda")
    # Extended lambdas are always on from Kokkos 4.1, and Spack's kokkos recipe offers the
    # cuda_lambda variant only @:4: ask for it only there, so that this line does not by itself
    # cap +cuda at Kokkos 4 once the bound above is raised.
    depends_on("kokkos+cuda_lambda", when="+cuda ^kokkos@:4")
    depends_on("kokkos+rocm", when="+rocm")

    # A shared libndzip links Kokkos into a shared object. Kokkos Kernels asks for kokkos+pic
    # here (depends_on("kokkos+pic", when="+shared")), which makes a static Kokkos linkable;
    # this project asks for a shared Kokkos instead (CMakeLists.txt, BUILD_SHARED_LIBS): with a
    # static Kokkos, libndzip.so and the application linking it would each carry their own copy
    # of Kokkos' global state. +shared is also kokkos' default, so an existing Kokkos is reused,
    # where +pic (default off) would build another. ~shared gives a static, position-independent
    # libndzip.a that links with either kind of Kokkos.
    depends_on("kokkos+shared", when="+shared")

    # Kokkos compiles for one GPU architecture: hand ours on to it.
    for arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos cuda_arch={arch}", when=f"+cuda cuda_arch={arch}")
    for target in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos amdgpu_target={target}", when=f"+rocm amdgpu_target={target}")

    conflicts("+cuda", when="cuda_arch=none", msg="+cuda needs a cuda_arch, e.g. cuda_arch=90")
    conflicts(
        "+rocm", when="amdgpu_target=none", msg="+rocm needs an amdgpu_target, e.g. gfx90a"
    )
    conflicts("+cuda", when="+rocm", msg="Kokkos has one device backend: pick +cuda or +rocm")
    conflicts(
        "+threads",
        when="+openmp",
        msg="Kokkos has at most one host-parallel backend: pick +openmp or +threads",
    )
    # No conflict for a spec that requires no backend: `~serial` only stops requiring Serial,
    # and Kokkos itself always has a host backend (Serial by default). A conflict there made
    # the concretizer turn +openmp on unasked.
    # A device Kokkos needs its device compiler, which cmake_args only selects with +cuda/+rocm.
    conflicts("^kokkos+cuda", when="~cuda", msg="a Kokkos with CUDA needs ndzip-kokkos +cuda")
    conflicts("^kokkos+rocm", when="~rocm", msg="a Kokkos with HIP needs ndzip-kokkos +rocm")

    # The filter plugin links the HDF5 the applications that load it use, and shares Kokkos with
    # them: a static Kokkos would put a second copy into the plugin.
    depends_on("hdf5", when="+hdf5")
    depends_on("kokkos+shared", when="+hdf5")
    # ndzip::mpi links the MPI the application uses (any provider of the mpi virtual).
    depends_on("mpi", when="+mpi")

    # The library computes the frame checksum (XXH3) from xxhash.h alone: a build dependency.
    depends_on("xxhash", type="build")
    # The tool and the benchmark parse their options with CLI11 (header only).
    depends_on("cli11@2.1:", type="build", when="+cli")
    depends_on("cli11@2.1:", type="build", when="+perf_tests")
    depends_on("doctest", type=("build", "test"), when="+tests")
    depends_on("openssl", when="+tests")  # SHA-256 of streams in the unit tests
    depends_on("python@3:", type="test", when="+tests")  # the CLI's ctest scripts

    # The downstream example is compiled when the package is tested.
    test_requires_compiler = True

    def _kokkos_cxx_compiler(self):
        """The C++ compiler a device Kokkos requires of its users, or None for the default."""
        if self.spec.satisfies("+cuda"):
            # Kokkos' nvcc_wrapper (from kokkos +wrapper). Spack 0.x's kokkos sets kokkos_cxx on
            # its spec (setup_dependent_package); Spack 1.0's offers it on the package, reached
            # as self["kokkos"], which Spack 0.x packages cannot be indexed for.
            kokkos_cxx = getattr(self.spec["kokkos"], "kokkos_cxx", None)
            return kokkos_cxx if kokkos_cxx else self["kokkos"].kokkos_cxx
        if self.spec.satisfies("+rocm"):
            return self.spec["hip"].hipcc
        return None

    def cmake_args(self):
        args = [
            self.define("Kokkos_ROOT", self.spec["kokkos"].prefix),
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
            self.define_from_variant("NDZIP_BUILD_TOOLS", "cli"),
            self.define_from_variant("NDZIP_BUILD_TESTS", "tests"),
            self.define_from_variant("NDZIP_BUILD_PERF_TESTS", "perf_tests"),
            self.define_from_variant("NDZIP_BUILD_HDF5_PLUGIN", "hdf5"),
            # ON or OFF, never AUTO: an MPI that happens to be on the build host stays out.
            self.define("NDZIP_ENABLE_MPI", "ON" if self.spec.satisfies("+mpi") else "OFF"),
            # The Python package (python/) is not part of this recipe: a Python with pybind11
            # and NumPy that happens to be on the build host stays out.
            self.define("NDZIP_BUILD_PYTHON", False),
            # Nor is examples/cg_checkpoint (its tests need Kokkos Kernels): a Kokkos Kernels on
            # the build host stays out too.
            self.define("CMAKE_DISABLE_FIND_PACKAGE_KokkosKernels", True),
        ]
        if self.spec.satisfies("+hdf5"):
            args.append(self.define("HDF5_ROOT", self.spec["hdf5"].prefix))
        if self.spec.satisfies("+mpi"):
            args.append(self.define("MPI_CXX_COMPILER", self.spec["mpi"].mpicxx))
        cxx = self._kokkos_cxx_compiler()
        if cxx:
            args.append(self.define("CMAKE_CXX_COMPILER", cxx))
        if self.spec.satisfies("+perf_tests"):
            # The benchmark's peer codecs are optional and are not Spack dependencies here:
            # keep the build from linking whatever copies the build host happens to have.
            args.append(self.define("NDZIP_PEERS_DISABLE", "zstd;lz4;blosc;fpzip;zfp"))
        return args

    def _build_and_run_example(self, build_dir):
        """Configure and build the installed downstream example in a fresh build_dir against
        this prefix, run it, and check that it reports a bit-exact round trip. With +cuda or
        +rocm it runs on the GPU, so the machine needs one."""
        source_dir = join_path(self.prefix.share, "ndzip-kokkos", "examples", "downstream")
        if os.path.exists(build_dir):
            shutil.rmtree(build_dir)

        cmake = Executable(self.spec["cmake"].prefix.bin.cmake)
        configure = [
            "-S",
            source_dir,
            "-B",
            build_dir,
            self.define("CMAKE_BUILD_TYPE", "Release"),
            self.define("CMAKE_PREFIX_PATH", [self.prefix, self.spec["kokkos"].prefix]),
        ]
        cxx = self._kokkos_cxx_compiler()
        if cxx:
            configure.append(self.define("CMAKE_CXX_COMPILER", cxx))
        cmake(*configure)
        cmake("--build", build_dir)

        example = Executable(join_path(build_dir, "ndzip-downstream-example"))
        out = example(output=str, error=str)
        assert "bit-exact" in out, f"the downstream example did not round-trip: {out}"
        # Into the build or test log, without Kokkos' warnings around it.
        verdict = next(line for line in out.splitlines() if "bit-exact" in line)
        print(f"downstream example: {verdict}")

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_downstream_example(self):
        # `spack install --test=root`: build the example in the stage, away from the prefix.
        self._build_and_run_example(join_path(self.stage.path, "downstream-example-build"))

    def test_downstream_example(self):
        """build and run the installed downstream example against the installed package"""
        self._build_and_run_example(
            join_path(self.test_suite.test_dir_for_spec(self.spec), "downstream-example-build")
        )
