// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The HDF5 side of the plugin: the filter class that HDF5 finds through H5PLget_plugin_info,
// and its three callbacks. They are the C boundary: no exception may leave them, so each one
// turns every failure (an ndzip::error from a damaged chunk, a std::bad_alloc, anything) into an
// entry on HDF5's error stack and the return value that HDF5 reads as failure.

#include <H5PLextern.h>
#include <hdf5.h>

#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "chunk_codec.hpp"
#include "chunk_parameters.hpp"
#include "dataset_chunk.hpp"
#include "filter_identity.hpp"
#include "hdf5_error.hpp"
#include "kokkos_runtime.hpp"

namespace ndzip::hdf5_plugin {
namespace {

constexpr H5Z_filter_t filter_id = NDZIP_HDF5_FILTER_ID;

// Runs `body`; on an exception pushes its message and returns `failure`.
template <class Body, class Result>
Result guarded(const char* function, hid_t minor, Result failure, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    push_hdf5_error(function, minor, e.what());
  } catch (...) {
    push_hdf5_error(function, minor, "ndzip HDF5 filter: unknown error");
  }
  return failure;
}

// Whether the filter can compress the dataset: float or double, rank 1-3. Returns 0 (cannot)
// with the reason on the error stack, which HDF5 reports when the filter is mandatory: the
// dataset is not created. An optional filter (h5py's compression=<id>) is kept (set_local).
htri_t can_apply(hid_t dcpl, hid_t type, hid_t /*space*/) {
  return guarded("ndzip can_apply", H5E_CANAPPLY, htri_t{0}, [&] {
    chunk_of_dataset(dcpl, type);
    return htri_t{1};
  });
}

// Records the chunk's layout, element type and extents in the dataset's cd_values
// (chunk_parameters.hpp), in place of the values the filter was added with: none, the user's
// checksum option, or a copied dataset's parameters. HDF5 calls it even where can_apply
// refused the dataset, if the filter is optional: its cd_values then stay as they are, every
// chunk fails the filter, and HDF5 stores the chunks uncompressed.
herr_t set_local(hid_t dcpl, hid_t type, hid_t /*space*/) {
  return guarded("ndzip set_local", H5E_SETLOCAL, herr_t{-1}, [&] {
    chunk_parameters chunk;
    try {
      chunk = chunk_of_dataset(dcpl, type);
    } catch (const unsupported_dataset&) {
      return herr_t{0};
    }
    unsigned flags = 0;
    std::size_t given = max_cd_values;
    std::vector<unsigned> requested(given);
    if (H5Pget_filter_by_id2(dcpl, filter_id, &flags, &given, requested.data(), 0, nullptr,
                             nullptr) < 0)
      throw std::runtime_error("ndzip HDF5 filter: cannot read the filter parameters");
    // More values than the buffer holds come back as their count, with the first ones.
    if (given > requested.size())
      throw std::runtime_error("ndzip HDF5 filter: the filter was added with " +
                               std::to_string(given) + " values, more than any ndzip layout has");
    chunk = with_requested_layout(chunk, given, requested.data());
    const std::vector<unsigned> values = to_cd_values(chunk);
    if (H5Pmodify_filter(dcpl, filter_id, flags, values.size(), values.data()) < 0)
      throw std::runtime_error("ndzip HDF5 filter: cannot store the filter parameters");
    return herr_t{0};
  });
}

// HDF5's filter contract: *buf holds `nbytes` bytes of data in *buf_size allocated bytes; on
// success it is replaced by a malloc'd buffer of the result (the old one freed), *buf_size set to
// the new allocation, and the result's size returned. 0 means failure, *buf left untouched.
std::size_t filter(unsigned flags, std::size_t cd_nelmts, const unsigned cd_values[],
                   std::size_t nbytes, std::size_t* buf_size, void** buf) {
  return guarded("ndzip filter", H5E_CANTFILTER, std::size_t{0}, [&] {
    const chunk_parameters chunk = from_cd_values(cd_nelmts, cd_values);
    require_kokkos();
    filtered_chunk out = (flags & H5Z_FLAG_REVERSE) ? decompress_chunk(chunk, *buf, nbytes)
                                                    : compress_chunk(chunk, *buf, nbytes);
    std::free(*buf);
    *buf = out.bytes.release();
    *buf_size = out.capacity;
    return out.size;
  });
}

const H5Z_class2_t filter_class = {
    H5Z_CLASS_T_VERS,
    filter_id,
    1,  // encoder present
    1,  // decoder present
    NDZIP_HDF5_FILTER_NAME,
    can_apply,
    set_local,
    filter,
};

}  // namespace
}  // namespace ndzip::hdf5_plugin

extern "C" {

H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }

const void* H5PLget_plugin_info(void) { return &ndzip::hdf5_plugin::filter_class; }

}  // extern "C"
