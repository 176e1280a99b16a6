// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip::host_instruction_set(): which clone of the host kernels runs (backends/host/isa.hpp).

#include "backends/host/isa.hpp"
#include "ndzip/backends.hpp"

const char* ndzip::host_instruction_set() { return backend::to_string(backend::active_host_isa()); }
