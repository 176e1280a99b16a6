# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The Python package's tests (pytest), run by CTest (ctest --test-dir build -L python) against
# the package in the build tree: round trips and errors (test_module.py), DLPack and
# __cuda_array_interface__ objects (test_protocols.py), hostile array descriptions
# (test_hostile_intake.py: DLPack capsules built with ctypes, forged __cuda_array_interface__
# dicts), the package's metadata (test_entry_points.py), the CLI interchange, the numcodecs/Zarr
# codec (test_zarr.py), h5py with the plugin (test_h5.py), folding (test_folding.py) and reading
# part of an array (test_region.py: every frame version, hostile input). GPU arrays
# (test_device.py) are tested on a GPU machine by scripts/test-python-gpu.sh.

# A sanitized extension cannot be loaded into the uninstrumented interpreter: compiled, not run.
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=")
  message(STATUS "ndzip-kokkos: Python tests not registered in a sanitizer build")
  return()
endif()
execute_process(COMMAND "${NDZIP_PYTHON}" -c "import pytest"
                RESULT_VARIABLE no_pytest OUTPUT_QUIET ERROR_QUIET)
if(NOT no_pytest EQUAL 0)
  message(WARNING "Python module: ${NDZIP_PYTHON} has no pytest (Debian: python3-pytest), its "
                  "tests are not registered")
  return()
endif()

# The CLI and h5dump where there are (their tests skip otherwise).
set(python_test_environment
    "PYTHONPATH=${CMAKE_CURRENT_BINARY_DIR}"
    "NDZIP_H5DUMP=${NDZIP_H5DUMP}"
    # ctest -j runs tests side by side on few cores: no OpenMP threads spinning against each other.
    "OMP_PROC_BIND=false" "OMP_WAIT_POLICY=passive")
if(TARGET ndzip-cli)
  list(APPEND python_test_environment "NDZIP_CLI=$<TARGET_FILE:ndzip-cli>")
endif()
foreach(test_file IN ITEMS test_module test_protocols test_hostile_intake test_entry_points test_zarr
                        test_h5 test_folding test_region)
  add_test(NAME python-${test_file}
           COMMAND "${NDZIP_PYTHON}" -m pytest -q -p no:cacheprovider
                   ${CMAKE_CURRENT_SOURCE_DIR}/tests/${test_file}.py)
  set_tests_properties(python-${test_file} PROPERTIES
                       ENVIRONMENT "${python_test_environment}" LABELS python TIMEOUT 600)
endforeach()
