# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# ndzip_find_python_with(VARIABLE MODULES DOC): caches in VARIABLE (unless already set) the first
# Python 3 interpreter that imports MODULES (a comma-separated import list): the one on PATH, then
# the system's. Debian's python3-* packages are not in a pyenv or venv interpreter that may come
# first on PATH.
function(ndzip_find_python_with variable modules doc)
  if(${variable})
    return()
  endif()
  find_program(ndzip_path_python3 NAMES python3)
  foreach(candidate IN ITEMS "${ndzip_path_python3}" /usr/bin/python3)
    if(candidate AND EXISTS "${candidate}")
      execute_process(COMMAND "${candidate}" -c "import ${modules}"
                      RESULT_VARIABLE missing OUTPUT_QUIET ERROR_QUIET)
      if(missing EQUAL 0)
        set(${variable} "${candidate}" CACHE FILEPATH "${doc}")
        return()
      endif()
    endif()
  endforeach()
endfunction()
