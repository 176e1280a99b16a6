# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The plugin's tests, run by CTest (ctest -L hdf5): h5py round trips, h5dump, h5repack between
# filters, damaged chunks, edited filter parameters, and who owns Kokkos. They load the plugin as
# any application would, through HDF5_PLUGIN_PATH: the build's plugin folder, then HDF5's default
# folder (where Debian's hdf5-filter-plugin-* packages put the zfp, Blosc and LZ4 filters that
# the h5repack test converts from).

# The Python tests need h5py, hdf5plugin and numpy: the first interpreter that has them.
include(${PROJECT_SOURCE_DIR}/cmake/find_python_with.cmake)
ndzip_find_python_with(NDZIP_HDF5_TEST_PYTHON "h5py, hdf5plugin, numpy"
                       "Python 3 with h5py, hdf5plugin and numpy, for the HDF5 plugin's tests")
find_program(NDZIP_H5DUMP h5dump)
find_program(NDZIP_H5REPACK h5repack)

set(plugin_test_environment
    "HDF5_PLUGIN_PATH=${NDZIP_HDF5_PLUGIN_DIR}:${NDZIP_HDF5_DEFAULT_PLUGIN_DIR}"
    # ctest -j runs tests side by side on few cores: no OpenMP threads spinning against each other.
    "OMP_PROC_BIND=false" "OMP_WAIT_POLICY=passive")

# A sanitized plugin cannot be loaded into the uninstrumented python3, h5dump and h5repack (and
# HDF5's and Kokkos' own allocations at exit would fail the leak check): the plugin is compiled
# there, not tested.
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=")
  message(STATUS "ndzip-kokkos: HDF5 plugin tests not registered in a sanitizer build")
  return()
endif()

set(tests_dir ${CMAKE_CURRENT_SOURCE_DIR}/tests)
set(filter_id_arg --filter-id ${NDZIP_HDF5_FILTER_ID})
if(NDZIP_HDF5_TEST_PYTHON)
  set(python ${NDZIP_HDF5_TEST_PYTHON})
  add_test(NAME hdf5-plugin-h5py-roundtrip
           COMMAND ${python} ${tests_dir}/test_h5py_roundtrip.py ${filter_id_arg})
  add_test(NAME hdf5-plugin-damaged-chunks
           COMMAND ${python} ${tests_dir}/test_damaged_chunks.py ${filter_id_arg})
  # Edited cd_values: read with h5py, and with h5dump where there is one.
  set(h5dump_if_found)
  if(NDZIP_H5DUMP)
    set(h5dump_if_found --h5dump ${NDZIP_H5DUMP})
  endif()
  add_test(NAME hdf5-plugin-edited-parameters
           COMMAND ${python} ${tests_dir}/test_edited_parameters.py ${filter_id_arg}
                   ${h5dump_if_found})
  set(tool_tests hdf5-plugin-h5py-roundtrip hdf5-plugin-damaged-chunks
      hdf5-plugin-edited-parameters)
  if(NDZIP_H5DUMP)
    add_test(NAME hdf5-plugin-h5dump
             COMMAND ${python} ${tests_dir}/test_h5dump.py ${filter_id_arg} --h5dump ${NDZIP_H5DUMP})
    add_test(NAME hdf5-plugin-checksummed-chunks
             COMMAND ${python} ${tests_dir}/test_checksummed_chunks.py ${filter_id_arg}
                     --h5dump ${NDZIP_H5DUMP})
    add_test(NAME hdf5-plugin-thread-limit
             COMMAND ${python} ${tests_dir}/test_thread_limit.py ${filter_id_arg}
                     --h5dump ${NDZIP_H5DUMP})
    list(APPEND tool_tests hdf5-plugin-h5dump hdf5-plugin-checksummed-chunks
         hdf5-plugin-thread-limit)
  endif()
  if(NDZIP_H5REPACK)
    add_test(NAME hdf5-plugin-h5repack
             COMMAND ${python} ${tests_dir}/test_h5repack.py ${filter_id_arg}
                     --h5repack ${NDZIP_H5REPACK})
    list(APPEND tool_tests hdf5-plugin-h5repack)
  endif()
  if(NDZIP_H5DUMP AND NDZIP_H5REPACK)
    add_test(NAME hdf5-plugin-layout1-compat
             COMMAND ${python} ${tests_dir}/test_layout1_compat.py ${filter_id_arg}
                     --h5dump ${NDZIP_H5DUMP} --h5repack ${NDZIP_H5REPACK})
    list(APPEND tool_tests hdf5-plugin-layout1-compat)
  endif()
  if(NOT NDZIP_H5DUMP OR NOT NDZIP_H5REPACK)
    message(WARNING "HDF5 plugin: h5dump or h5repack not found (Debian: hdf5-tools), their "
                    "tests are not registered")
  endif()
  set_tests_properties(${tool_tests} PROPERTIES ENVIRONMENT "${plugin_test_environment}"
                                                LABELS hdf5)
else()
  message(WARNING "HDF5 plugin: no python3 with h5py, hdf5plugin and numpy (Debian: "
                  "python3-h5py python3-hdf5plugin python3-numpy; or set "
                  "NDZIP_HDF5_TEST_PYTHON), the plugin's Python tests are not registered")
endif()

# Who owns Kokkos: an application that initialised it keeps it, else the plugin initialises it
# and finalises it at exit, after HDF5 has flushed the files left open.
add_executable(ndzip-hdf5-kokkos-ownership tests/kokkos_ownership.cpp)
target_compile_definitions(ndzip-hdf5-kokkos-ownership PRIVATE
                           NDZIP_HDF5_FILTER_ID=${NDZIP_HDF5_FILTER_ID})
target_link_libraries(ndzip-hdf5-kokkos-ownership PRIVATE Kokkos::kokkos ndzip::hdf5_c)
add_dependencies(ndzip-hdf5-kokkos-ownership ndzip-hdf5-plugin)
set(ownership $<TARGET_FILE:ndzip-hdf5-kokkos-ownership>)
set(ownership_file ${CMAKE_CURRENT_BINARY_DIR}/kokkos_ownership.h5)
add_test(NAME hdf5-plugin-kokkos-application-owned
         COMMAND ${ownership} application-owned ${CMAKE_CURRENT_BINARY_DIR}/kokkos_application.h5)
add_test(NAME hdf5-plugin-kokkos-plugin-owned-write
         COMMAND ${ownership} plugin-owned-left-open ${ownership_file})
add_test(NAME hdf5-plugin-kokkos-plugin-owned-check
         COMMAND ${ownership} check ${ownership_file})
set_tests_properties(hdf5-plugin-kokkos-plugin-owned-write PROPERTIES
                     FIXTURES_SETUP hdf5_left_open_file)
set_tests_properties(hdf5-plugin-kokkos-plugin-owned-check PROPERTIES
                     FIXTURES_REQUIRED hdf5_left_open_file)
set_tests_properties(hdf5-plugin-kokkos-application-owned hdf5-plugin-kokkos-plugin-owned-write
                     hdf5-plugin-kokkos-plugin-owned-check
                     PROPERTIES ENVIRONMENT "${plugin_test_environment}" LABELS hdf5)
