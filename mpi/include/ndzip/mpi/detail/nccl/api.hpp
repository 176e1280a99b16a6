// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// NCCL's API: nccl.h with CUDA, RCCL's header (the same API) with HIP. Not part of the API.

#include <Kokkos_Macros.hpp>

#if defined(KOKKOS_ENABLE_HIP) && !defined(KOKKOS_ENABLE_CUDA)
#if __has_include(<rccl/rccl.h>)
#include <rccl/rccl.h>
#else
#include <rccl.h>
#endif
#else
#include <nccl.h>
#endif
