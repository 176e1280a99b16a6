# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sourced before using Debian's CUDA 11.8 toolkit with g++-11 (its newest supported host
# compiler here). A machine may also have a newer CUDA of its own (CUDA_HOME, LIBRARY_PATH, its
# bin/ early in PATH): none of it may leak in, or nvcc 11.8 runs that CUDA's cudafe++ and the
# generated lambda stubs no longer compile. Kokkos' nvcc_wrapper takes nvcc from CUDA_ROOT; it
# defaults to sm_35, which CUDA 11.8 rejects, so callers pass -arch explicitly.
unset CUDA_HOME CUDA_PATH LIBRARY_PATH
export PATH="/usr/bin:$PATH"
export CUDA_ROOT=/usr
export NVCC_WRAPPER_DEFAULT_COMPILER=g++-11
