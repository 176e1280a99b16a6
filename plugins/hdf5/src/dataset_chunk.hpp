// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The chunks of a dataset that is being created with the filter, from what HDF5 hands the
// can_apply and set_local callbacks.

#include <hdf5.h>

#include <stdexcept>

#include "chunk_parameters.hpp"

namespace ndzip::hdf5_plugin {

// A dataset the filter cannot compress.
class unsupported_dataset : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The chunk of a dataset of datatype `type` created with the property list `dcpl`. Throws
// unsupported_dataset saying why the filter cannot compress it: a datatype other than
// little-endian IEEE float or double, a rank outside 1-3, or a chunk too large for ndzip.
chunk_parameters chunk_of_dataset(hid_t dcpl, hid_t type);

}  // namespace ndzip::hdf5_plugin
