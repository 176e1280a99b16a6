// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "core/instantiate.hpp"

NDZIP_INSTANTIATE(double)
