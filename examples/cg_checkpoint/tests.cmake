# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The example's tests inside the project's build (ctest -L example): restarts bit for bit, for
# both storages, and refused checkpoints (example-cg-restart); --help, forged checkpoints,
# endless inputs, planted symbolic links and concurrent writers (example-cg-hostile); outputs
# on a full disk (example-cg-full-disk).
add_test(NAME example-cg-restart
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/cg_restart.sh $<TARGET_FILE:ndzip-cg-checkpoint>
                 ${CMAKE_CURRENT_BINARY_DIR}/cg-restart)
add_test(NAME example-cg-hostile
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/cg_hostile.sh $<TARGET_FILE:ndzip-cg-checkpoint>
                 ${CMAKE_CURRENT_BINARY_DIR}/cg-hostile)
# --history, --x-out and the checkpoint on a full 64 KiB tmpfs (root only; skipped, status 77,
# saying why, where none can be mounted).
add_test(NAME example-cg-full-disk
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/cg_full_disk.sh $<TARGET_FILE:ndzip-cg-checkpoint>
                 ${CMAKE_CURRENT_BINARY_DIR}/cg-full-disk)
set_tests_properties(example-cg-restart example-cg-hostile example-cg-full-disk PROPERTIES
                     ENVIRONMENT "OMP_PROC_BIND=false;OMP_WAIT_POLICY=passive"
                     LABELS example TIMEOUT 300)
set_tests_properties(example-cg-full-disk PROPERTIES SKIP_RETURN_CODE 77)
