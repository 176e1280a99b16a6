// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#define NDZIP_INSTANTIATED_ELEMENT float
#include "core/instantiate.hpp"
