# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# CPU peer codecs that ndzip-bench runs beside ndzip (peers.hpp / peers.cpp): zstd, LZ4, Blosc,
# fpzip and zfp (reversible mode). Each library is optional: when it is found, peers.cpp is compiled
# with NDZIP_HAVE_<FAMILY> and linked against it; when not, that family is skipped at run time with
# a message (available_peers). On Debian the libraries come from libzstd-dev, liblz4-dev,
# libblosc-dev, libfpzip-dev and libzfp-dev (scripts/install-deps.sh).
# Included from perf_tests/CMakeLists.txt.

set(NDZIP_PEERS_DISABLE "" CACHE STRING
    "Peer families not to build even when found (any of zstd;lz4;blosc;fpzip;zfp)")

add_library(ndzip-peers STATIC ${CMAKE_CURRENT_LIST_DIR}/peers.cpp)
target_include_directories(ndzip-peers PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_features(ndzip-peers PUBLIC cxx_std_17)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(ndzip-peers PRIVATE -Wall -Wextra)
endif()

# Header and library name of each family, for find_path / find_library. fpzip and zfp ship CMake
# package configs (fpzip::fpzip, zfp::zfp), which are tried first. Debian's zfp config runs
# find_package(OpenMP REQUIRED COMPONENTS C), a hard error in a project without C enabled, so it is
# only tried when C is enabled.
set(_ndzip_peer_zstd_header zstd.h)
set(_ndzip_peer_zstd_lib zstd)
set(_ndzip_peer_lz4_header lz4.h)
set(_ndzip_peer_lz4_lib lz4)
set(_ndzip_peer_blosc_header blosc.h)
set(_ndzip_peer_blosc_lib blosc)
set(_ndzip_peer_fpzip_header fpzip.h)
set(_ndzip_peer_fpzip_lib fpzip)
set(_ndzip_peer_fpzip_config fpzip::fpzip)
set(_ndzip_peer_zfp_header zfp.h)
set(_ndzip_peer_zfp_lib zfp)
set(_ndzip_peer_zfp_config zfp::zfp)

get_property(_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
set(_ndzip_peers_found "")
set(_ndzip_peers_missing "")
foreach(_family IN ITEMS zstd lz4 blosc fpzip zfp)
  string(TOUPPER "${_family}" _FAMILY)
  if(_family IN_LIST NDZIP_PEERS_DISABLE)
    list(APPEND _ndzip_peers_missing "${_family} (disabled by NDZIP_PEERS_DISABLE)")
    continue()
  endif()

  set(_link "")
  set(_include "")
  if(DEFINED _ndzip_peer_${_family}_config AND (NOT _family STREQUAL "zfp" OR "C" IN_LIST _languages))
    find_package(${_family} CONFIG QUIET)
    if(TARGET ${_ndzip_peer_${_family}_config})
      set(_link ${_ndzip_peer_${_family}_config})
    endif()
  endif()
  if(NOT _link)
    find_path(NDZIP_PEER_${_FAMILY}_INCLUDE_DIR ${_ndzip_peer_${_family}_header})
    find_library(NDZIP_PEER_${_FAMILY}_LIBRARY NAMES ${_ndzip_peer_${_family}_lib})
    if(NDZIP_PEER_${_FAMILY}_INCLUDE_DIR AND NDZIP_PEER_${_FAMILY}_LIBRARY)
      set(_link ${NDZIP_PEER_${_FAMILY}_LIBRARY})
      set(_include ${NDZIP_PEER_${_FAMILY}_INCLUDE_DIR})
    endif()
  endif()

  if(_link)
    target_link_libraries(ndzip-peers PRIVATE ${_link})
    if(_include)
      target_include_directories(ndzip-peers SYSTEM PRIVATE ${_include})
    endif()
    target_compile_definitions(ndzip-peers PRIVATE NDZIP_HAVE_${_FAMILY})
    list(APPEND _ndzip_peers_found ${_family})
  else()
    list(APPEND _ndzip_peers_missing "${_family} (not found)")
  endif()
endforeach()

string(REPLACE ";" ", " _found "${_ndzip_peers_found}")
string(REPLACE ";" ", " _missing "${_ndzip_peers_missing}")
if(NOT _found)
  set(_found "none")
endif()
if(NOT _missing)
  set(_missing "none")
endif()
message(STATUS "ndzip-kokkos peers: found ${_found}; missing ${_missing}")

# Round trip of every available peer on generated float/double 1-3-D arrays, bit-exact.
add_executable(ndzip-peers-selftest ${CMAKE_CURRENT_LIST_DIR}/peers_selftest.cpp)
target_link_libraries(ndzip-peers-selftest PRIVATE ndzip-peers)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(ndzip-peers-selftest PRIVATE -Wall -Wextra)
endif()
if(NDZIP_BUILD_TESTS)
  add_test(NAME ndzip-peers-selftest COMMAND ndzip-peers-selftest)
endif()
