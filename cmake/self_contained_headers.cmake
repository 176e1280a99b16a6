# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# ndzip_self_contained_headers(TARGET LIBRARY HEADER...): an object library TARGET with one
# translation unit per HEADER (a path as it is included), each including it twice, built with
# LIBRARY's usage requirements alone: every header compiles on its own and is include-guarded.
# Not in a sanitizer build, which compiles the same headers as the plain one.
function(ndzip_self_contained_headers target library)
  if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=")
    return()
  endif()
  set(sources)
  foreach(header IN LISTS ARGN)
    string(MAKE_C_IDENTIFIER ${header} name)
    set(source ${CMAKE_CURRENT_BINARY_DIR}/self_contained/${name}.cpp)
    file(WRITE ${source}.in "#include <${header}>\n#include <${header}>\n")
    configure_file(${source}.in ${source} COPYONLY)  # rewritten only when it changes
    list(APPEND sources ${source})
  endforeach()
  add_library(${target} OBJECT ${sources})
  target_link_libraries(${target} PRIVATE ${library})
endfunction()
