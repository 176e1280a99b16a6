// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Which kernel a lane-ops trait is asked about: the backends tune some things (launch bounds)
// per kernel.

namespace ndzip::backend {

enum class kernel_role { encode, decode };

}  // namespace ndzip::backend
