# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Finds HDF5's C library for the plugin and defines the imported target ndzip::hdf5_c, with
# NDZIP_HDF5_FOUND, NDZIP_HDF5_VERSION and NDZIP_HDF5_DEFAULT_PLUGIN_DIR (the folder HDF5 searches
# when HDF5_PLUGIN_PATH is unset). Not CMake's FindHDF5: it test-compiles C, and enabling C for
# it here would make every later find_package(OpenMP) of the project look for OpenMP in C too
# (the enabled languages are global), which fails outside this directory.
#
# Searches HDF5_ROOT, then CMake's prefixes; the hdf5/serial subfolders are Debian's serial
# flavour (the one h5py uses there). A parallel HDF5 brings MPI's C++ target along (its headers
# include mpi.h); not found, the HDF5 counts as not found.

find_path(NDZIP_HDF5_INCLUDE_DIR H5PLextern.h
          HINTS ${HDF5_ROOT} ENV HDF5_ROOT
          PATH_SUFFIXES include/hdf5/serial include hdf5/serial
          DOC "Directory holding HDF5's C headers (hdf5.h, H5PLextern.h)")
find_library(NDZIP_HDF5_LIBRARY NAMES hdf5 hdf5_serial
             HINTS ${HDF5_ROOT} ENV HDF5_ROOT
             PATH_SUFFIXES hdf5/serial lib/hdf5/serial lib
             DOC "HDF5's C library (libhdf5)")
mark_as_advanced(NDZIP_HDF5_INCLUDE_DIR NDZIP_HDF5_LIBRARY)

set(NDZIP_HDF5_FOUND OFF)
set(parallel_line "")
set(NDZIP_HDF5_VERSION "")
set(NDZIP_HDF5_DEFAULT_PLUGIN_DIR "")
if(NDZIP_HDF5_INCLUDE_DIR AND NDZIP_HDF5_LIBRARY)
  set(NDZIP_HDF5_FOUND ON)
  set(pubconf "${NDZIP_HDF5_INCLUDE_DIR}/H5pubconf.h")
  if(EXISTS "${pubconf}")
    file(STRINGS "${pubconf}" version_line REGEX "define H5_VERSION ")
    if(version_line MATCHES "\"([^\"]*)\"")
      set(NDZIP_HDF5_VERSION "${CMAKE_MATCH_1}")
    endif()
    file(STRINGS "${pubconf}" plugindir_line REGEX "define H5_DEFAULT_PLUGINDIR ")
    if(plugindir_line MATCHES "\"([^\"]*)\"")
      set(NDZIP_HDF5_DEFAULT_PLUGIN_DIR "${CMAKE_MATCH_1}")
    endif()
    # A parallel HDF5 (Spack's default hdf5 +mpi) includes mpi.h from its headers.
    file(STRINGS "${pubconf}" parallel_line REGEX "define H5_HAVE_PARALLEL ")
  endif()
  set(hdf5_needs)
  if(parallel_line)
    find_package(MPI COMPONENTS CXX)
    if(MPI_CXX_FOUND)
      set(hdf5_needs MPI::MPI_CXX)
    else()
      set(NDZIP_HDF5_FOUND OFF)
      message(STATUS "ndzip-kokkos: the HDF5 at ${NDZIP_HDF5_INCLUDE_DIR} is parallel and needs "
                     "MPI, which was not found")
    endif()
  endif()
  if(NDZIP_HDF5_FOUND AND NOT TARGET ndzip::hdf5_c)
    add_library(ndzip::hdf5_c UNKNOWN IMPORTED)
    set_target_properties(ndzip::hdf5_c PROPERTIES
                          IMPORTED_LOCATION "${NDZIP_HDF5_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${NDZIP_HDF5_INCLUDE_DIR}"
                          INTERFACE_LINK_LIBRARIES "${hdf5_needs}")
  endif()
endif()
