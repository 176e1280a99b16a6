# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# doctest, the unit-test framework of ndzip-kokkos +tests. Spack 0.23's builtin repository has
# none, and Spack resolves a conditional dependency's package even where its condition is off:
# without this recipe no ndzip-kokkos spec concretizes there. Where the builtin repository has
# one (Spack 1.x), `spack repo add` puts this repository first, so this recipe is used.
from spack.package import *


class Doctest(CMakePackage):
    """doctest: a single-header C++ testing framework, installed with its CMake package
    (doctest::doctest)."""

    homepage = "https://github.com/doctest/doctest"
    url = "https://github.com/doctest/doctest/archive/refs/tags/v2.4.11.tar.gz"

    license("MIT")

    version("2.4.11", sha256="632ed2c05a7f53fa961381497bf8069093f0d6628c5f26286161fbd32a560186")
    version("2.4.9", sha256="19b2df757f2f3703a5e63cee553d85596875f06d91a3333acd80a969ef210856")

    depends_on("cmake@3.8:", type="build")

    def cmake_args(self):
        # The header and its CMake package only: doctest's own tests and examples are not
        # what a dependent needs.
        return [self.define("DOCTEST_WITH_TESTS", False)]
