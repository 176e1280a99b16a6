// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How the filter reports a failure: an entry on HDF5's error stack, which HDF5 prints with the
// error of the call that failed (and h5py raises as the message of its exception).

#include <hdf5.h>

namespace ndzip::hdf5_plugin {

// Pushes `message` as an error of HDF5's filter pipeline (major H5E_PLINE) with the minor code
// `minor` (H5E_CANAPPLY, H5E_SETLOCAL, H5E_CANTFILTER), from the callback `function`.
void push_hdf5_error(const char* function, hid_t minor, const char* message) noexcept;

}  // namespace ndzip::hdf5_plugin
