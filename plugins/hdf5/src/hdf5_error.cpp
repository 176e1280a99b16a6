// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "hdf5_error.hpp"

namespace ndzip::hdf5_plugin {

void push_hdf5_error(const char* function, hid_t minor, const char* message) noexcept {
  H5Epush2(H5E_DEFAULT, __FILE__, function, __LINE__, H5E_ERR_CLS, H5E_PLINE, minor, "%s", message);
}

}  // namespace ndzip::hdf5_plugin
