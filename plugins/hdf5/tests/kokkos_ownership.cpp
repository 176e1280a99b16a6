// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Who owns Kokkos while the ndzip filter runs (plugins/hdf5/src/kokkos_runtime.hpp), seen from
// an application that links HDF5 and Kokkos and gets the filter through HDF5_PLUGIN_PATH; the
// plugin and the application share the one (shared) Kokkos library. Modes:
//   application-owned FILE   the application initialises Kokkos, writes and reads datasets
//                            through the filter and closes HDF5: Kokkos must still be
//                            initialised (the plugin leaves the application's Kokkos alone).
//   plugin-owned-left-open FILE
//                            no Kokkos from the application: after the first flush the plugin
//                            has initialised it; a second dataset is then left unwritten in
//                            HDF5's chunk cache and the file open at exit, where the plugin
//                            must let HDF5 flush it before it finalises its Kokkos.
//   check FILE               reads what plugin-owned-left-open wrote and compares it.
// Exit status 0 on success, 1 with a message otherwise.

#include <hdf5.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr hsize_t dims[3] = {40, 50, 60};
constexpr hsize_t chunk[3] = {16, 32, 32};  // partial chunks at every far edge
constexpr std::size_t element_count = 40 * 50 * 60;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "kokkos ownership test: %s\n", what.c_str());
  std::exit(1);
}

void check(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

std::vector<float> smooth_field(float phase) {
  std::vector<float> values(element_count);
  std::size_t i = 0;
  for (hsize_t z = 0; z < dims[0]; ++z)
    for (hsize_t y = 0; y < dims[1]; ++y)
      for (hsize_t x = 0; x < dims[2]; ++x)
        values[i++] = std::sin(0.1f * x + phase) * std::cos(0.07f * y) + 0.01f * z;
  return values;
}

// Returns the open dataset: its chunks are compressed when it is closed (or flushed).
hid_t write_dataset(hid_t file, const char* name, const std::vector<float>& values) {
  const hid_t space = H5Screate_simple(3, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  check(H5Pset_chunk(dcpl, 3, chunk) >= 0, "H5Pset_chunk");
  // Mandatory: a failing filter fails the write instead of storing the chunk raw.
  check(H5Pset_filter(dcpl, NDZIP_HDF5_FILTER_ID, H5Z_FLAG_MANDATORY, 0, nullptr) >= 0,
        "H5Pset_filter: is the plugin on HDF5_PLUGIN_PATH?");
  const hid_t dset = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check(dset >= 0, std::string("H5Dcreate2 ") + name);
  check(H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0,
        std::string("H5Dwrite ") + name);
  H5Pclose(dcpl);
  H5Sclose(space);
  return dset;
}

void check_dataset(hid_t file, const char* name, const std::vector<float>& expected) {
  const hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
  check(dset >= 0, std::string("H5Dopen2 ") + name);
  const hid_t dcpl = H5Dget_create_plist(dset);
  check(H5Pget_nfilters(dcpl) == 1 && H5Pget_filter2(dcpl, 0, nullptr, nullptr, nullptr, 0, nullptr,
                                                     nullptr) == NDZIP_HDF5_FILTER_ID,
        std::string(name) + " is not compressed with the ndzip filter");
  check(H5Dget_storage_size(dset) < element_count * sizeof(float),
        std::string(name) + " is not smaller than its raw size");
  std::vector<float> values(element_count);
  check(H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) >= 0,
        std::string("H5Dread ") + name);
  check(std::memcmp(values.data(), expected.data(), element_count * sizeof(float)) == 0,
        std::string(name) + " does not read back bit-exact");
  H5Pclose(dcpl);
  H5Dclose(dset);
}

int application_owned(const char* path) {
  Kokkos::initialize();
  const hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  check(file >= 0, "H5Fcreate");
  H5Dclose(write_dataset(file, "field", smooth_field(0)));
  H5Fclose(file);
  const hid_t reopened = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  check_dataset(reopened, "field", smooth_field(0));
  H5Fclose(reopened);
  H5close();  // HDF5 closes its plugins
  check(Kokkos::is_initialized(), "the plugin finalised the application's Kokkos");
  Kokkos::finalize();
  return 0;
}

int plugin_owned_left_open(const char* path) {
  check(!Kokkos::is_initialized(), "Kokkos initialised before the filter ran");
  const hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  check(file >= 0, "H5Fcreate");
  H5Dclose(write_dataset(file, "flushed", smooth_field(0)));
  check(Kokkos::is_initialized(), "the filter ran, but Kokkos is not initialised");
  // Left open, its chunks stay in the dataset's chunk cache (768 KiB of HDF5's default 1 MiB)
  // until HDF5 closes the file, at exit.
  write_dataset(file, "left_open", smooth_field(1));
  return 0;
}

int check_file(const char* path) {
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  check(file >= 0, "H5Fopen");
  check_dataset(file, "flushed", smooth_field(0));
  check_dataset(file, "left_open", smooth_field(1));
  H5Fclose(file);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) fail("usage: application-owned|plugin-owned-left-open|check FILE");
  const std::string mode = argv[1];
  if (mode == "application-owned") return application_owned(argv[2]);
  if (mode == "plugin-owned-left-open") return plugin_owned_left_open(argv[2]);
  if (mode == "check") return check_file(argv[2]);
  fail("unknown mode " + mode);
}
