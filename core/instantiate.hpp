// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Explicit instantiation of ndzip::compressor and ndzip::batch_compressor (and so of every
// mode's engine) for one element type, every dimensionality and every execution
// space Kokkos was built with, so that whichever Kokkos makes default has one (one translation
// unit per element type keeps the build parallel and small). Included once, by a file that
// defines NDZIP_INSTANTIATED_ELEMENT.

#include "core/batch_impl.hpp"
#include "core/compressor_impl.hpp"
#include "ndzip/detail/execution_spaces.hpp"

// Exported explicitly: an instantiation is otherwise as hidden as its least visible template
// argument, and the Kokkos execution spaces are hidden in the library (-fvisibility=hidden).
#define NDZIP_INSTANTIATE_FOR_SPACE(T, SPACE)                      \
  template class NDZIP_EXPORT ndzip::compressor<T, 1, SPACE>;       \
  template class NDZIP_EXPORT ndzip::compressor<T, 2, SPACE>;       \
  template class NDZIP_EXPORT ndzip::compressor<T, 3, SPACE>;       \
  template class NDZIP_EXPORT ndzip::batch_compressor<T, 1, SPACE>; \
  template class NDZIP_EXPORT ndzip::batch_compressor<T, 2, SPACE>; \
  template class NDZIP_EXPORT ndzip::batch_compressor<T, 3, SPACE>;

// Every execution space of the one list (ndzip/detail/execution_spaces.hpp), for the element
// type NDZIP_INSTANTIATED_ELEMENT, which the including file defines.
#define NDZIP_INSTANTIATE_SPACE(SPACE, name) \
  NDZIP_INSTANTIATE_FOR_SPACE(NDZIP_INSTANTIATED_ELEMENT, SPACE)

NDZIP_FOR_EACH_EXECUTION_SPACE(NDZIP_INSTANTIATE_SPACE)
