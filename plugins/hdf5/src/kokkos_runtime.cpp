// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "kokkos_runtime.hpp"

#include <hdf5.h>

#include <mutex>

#include <ndzip/backends.hpp>

namespace ndzip::hdf5_plugin {
namespace {

// The Kokkos this plugin initialised: finalised by the destructor, which runs at process exit
// (the plugin is linked -z nodelete, so HDF5 unloading it does not end it earlier; a Kokkos
// finalised and initialised again is refused by Kokkos 4).
class plugin_owned_kokkos {
 public:
  plugin_owned_kokkos() {
    // Warnings would go into h5dump's output, for one.
    ndzip::initialize_embedded_kokkos("ndzip-hdf5-filter");
  }

  ~plugin_owned_kokkos() {
    // HDF5 closes the files an application left open in its own exit handler, which was
    // registered before this object existed and so runs after its destructor: close HDF5 now,
    // while the filter can still compress the chunks those files flush.
    H5close();
    if (Kokkos::is_initialized()) Kokkos::finalize();
  }

  plugin_owned_kokkos(const plugin_owned_kokkos&) = delete;
  plugin_owned_kokkos& operator=(const plugin_owned_kokkos&) = delete;
};

}  // namespace

void require_kokkos() {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (Kokkos::is_initialized()) return;
#if KOKKOS_VERSION >= 40000
  if (Kokkos::is_finalized())
    throw std::runtime_error(
        "ndzip HDF5 filter: Kokkos has been finalised and cannot be initialised again; close "
        "the HDF5 files that use the filter before finalising Kokkos");
#endif
  // Constructed on the first call that finds Kokkos uninitialised, destroyed at exit.
  static plugin_owned_kokkos owned;
}

}  // namespace ndzip::hdf5_plugin
