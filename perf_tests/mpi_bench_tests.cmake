# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# ndzip-mpi-bench's refusals of options and manifests it cannot run (tests/mpi_bench_refusals.py,
# on 2 ranks as the bench runs), in every build: the refusals come before any timed work. Open
# MPI's allocations kept past MPI_Finalize are no concern of this test (the ndzip::mpi tests
# check leaks with their suppressions), so a sanitized build does not look for leaks here.
if(NDZIP_BUILD_TESTS)
  add_test(NAME mpi-bench-refusals
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/tests/mpi_bench_refusals.py
                   ${MPIEXEC_EXECUTABLE} --oversubscribe -- $<TARGET_FILE:ndzip-mpi-bench>)
  set_tests_properties(mpi-bench-refusals PROPERTIES
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMP_NUM_THREADS=1;OMPI_MCA_btl_vader_single_copy_mechanism=none;ASAN_OPTIONS=abort_on_error=1:detect_leaks=0"
    TIMEOUT 300 PROCESSORS 2)
endif()
