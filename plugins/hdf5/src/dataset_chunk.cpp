// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dataset_chunk.hpp"

#include <string>

namespace ndzip::hdf5_plugin {
namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw unsupported_dataset("ndzip HDF5 filter: " + why);
}

bool equal_types(hid_t a, hid_t b) { return H5Tequal(a, b) > 0; }

element_type element_type_of(hid_t type) {
  // The chunks reach the filter in the file's byte order and ndzip reads them as this machine's
  // words: both must be little endian for the streams to be ndzip streams.
  if (!equal_types(H5T_NATIVE_FLOAT, H5T_IEEE_F32LE) ||
      !equal_types(H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE))
    refuse("this machine's float and double are not little-endian IEEE 754");
  if (equal_types(type, H5T_IEEE_F32LE)) return element_type::float32;
  if (equal_types(type, H5T_IEEE_F64LE)) return element_type::float64;
  const H5T_class_t type_class = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  if (type_class == H5T_FLOAT)
    refuse("the dataset's datatype is a floating-point type of " + std::to_string(size) +
           " bytes that is not little-endian IEEE 754 float or double");
  refuse("the dataset's datatype is not float or double (HDF5 type class " +
         std::to_string(static_cast<int>(type_class)) + ", " + std::to_string(size) + " bytes)");
}

}  // namespace

chunk_parameters chunk_of_dataset(hid_t dcpl, hid_t type) {
  chunk_parameters chunk;
  const element_type element = element_type_of(type);
  hsize_t dims[H5S_MAX_RANK];
  const int rank = H5Pget_chunk(dcpl, H5S_MAX_RANK, dims);
  if (rank < 0) refuse("the dataset is not chunked");
  if (rank < 1 || rank > 3)
    refuse("the dataset has rank " + std::to_string(rank) + "; ndzip compresses ranks 1 to 3");
  std::uint64_t extents[3] = {};
  for (int a = 0; a < rank; ++a) extents[a] = dims[a];
  chunk.shape = array_shape(element, rank, extents);
  try {
    check_representable(chunk);
  } catch (const std::runtime_error& e) {
    throw unsupported_dataset(e.what());
  }
  return chunk;
}

}  // namespace ndzip::hdf5_plugin
