# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Included by CTest after the test cases that doctest_discover_tests found (see CMakeLists.txt).
if(ndzip_unit_tests)
  set_tests_properties(${ndzip_unit_tests} PROPERTIES
                       ENVIRONMENT "OMP_PROC_BIND=false;OMP_WAIT_POLICY=passive")
endif()
