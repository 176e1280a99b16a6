// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Explicit instantiation of ndzip::compressor, ndzip::batch_compressor and
// ndzip::high_ratio_compressor for one element type,
// every dimensionality and every execution space Kokkos was built with: Serial, OpenMP, Threads,
// CUDA, HIP, so that whichever Kokkos makes default has one (one translation unit per element
// type keeps the build parallel and small).

#include "core/batch_impl.hpp"
#include "core/compressor_impl.hpp"
#include "core/high_ratio/engine.hpp"

// Exported explicitly: an instantiation is otherwise as hidden as its least visible template
// argument, and the Kokkos execution spaces are hidden in the library (-fvisibility=hidden).
#define NDZIP_INSTANTIATE_FOR_SPACE(T, SPACE)                      \
  template class NDZIP_EXPORT ndzip::compressor<T, 1, SPACE>;       \
  template class NDZIP_EXPORT ndzip::compressor<T, 2, SPACE>;       \
  template class NDZIP_EXPORT ndzip::compressor<T, 3, SPACE>;       \
  template class NDZIP_EXPORT ndzip::batch_compressor<T, 1, SPACE>; \
  template class NDZIP_EXPORT ndzip::batch_compressor<T, 2, SPACE>; \
  template class NDZIP_EXPORT ndzip::batch_compressor<T, 3, SPACE>; \
  template class NDZIP_EXPORT ndzip::high_ratio_compressor<T, 1, SPACE>; \
  template class NDZIP_EXPORT ndzip::high_ratio_compressor<T, 2, SPACE>; \
  template class NDZIP_EXPORT ndzip::high_ratio_compressor<T, 3, SPACE>;

#ifdef KOKKOS_ENABLE_SERIAL
#define NDZIP_INSTANTIATE_SERIAL(T) NDZIP_INSTANTIATE_FOR_SPACE(T, Kokkos::Serial)
#else
#define NDZIP_INSTANTIATE_SERIAL(T)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
#define NDZIP_INSTANTIATE_OPENMP(T) NDZIP_INSTANTIATE_FOR_SPACE(T, Kokkos::OpenMP)
#else
#define NDZIP_INSTANTIATE_OPENMP(T)
#endif
#ifdef KOKKOS_ENABLE_THREADS
#define NDZIP_INSTANTIATE_THREADS(T) NDZIP_INSTANTIATE_FOR_SPACE(T, Kokkos::Threads)
#else
#define NDZIP_INSTANTIATE_THREADS(T)
#endif

#ifdef KOKKOS_ENABLE_CUDA
#define NDZIP_INSTANTIATE_CUDA(T) NDZIP_INSTANTIATE_FOR_SPACE(T, Kokkos::Cuda)
#else
#define NDZIP_INSTANTIATE_CUDA(T)
#endif

#ifdef KOKKOS_ENABLE_HIP
#if KOKKOS_VERSION >= 40000
#define NDZIP_INSTANTIATE_HIP(T) NDZIP_INSTANTIATE_FOR_SPACE(T, Kokkos::HIP)
#else
#define NDZIP_INSTANTIATE_HIP(T) NDZIP_INSTANTIATE_FOR_SPACE(T, Kokkos::Experimental::HIP)
#endif
#else
#define NDZIP_INSTANTIATE_HIP(T)
#endif

#define NDZIP_INSTANTIATE(T)   \
  NDZIP_INSTANTIATE_SERIAL(T)  \
  NDZIP_INSTANTIATE_OPENMP(T)  \
  NDZIP_INSTANTIATE_THREADS(T) \
  NDZIP_INSTANTIATE_CUDA(T)    \
  NDZIP_INSTANTIATE_HIP(T)
