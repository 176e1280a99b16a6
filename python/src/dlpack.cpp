// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "dlpack.hpp"

#include <cstring>

namespace ndzip_python {

namespace py = pybind11;

namespace {

constexpr const char* versioned_name = "dltensor_versioned";
constexpr const char* legacy_name = "dltensor";

// Calls the producer's deleter when the keeper goes (the capsule was renamed "used_...", so the
// producer's own capsule destructor no longer does).
template <class Managed>
void release(PyObject* keeper) {
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(keeper, nullptr));
  if (managed && managed->deleter) managed->deleter(managed);
}

}  // namespace

dlpack_tensor::dlpack_tensor(const py::object& object, std::optional<std::intptr_t> stream) {
  const py::object export_tensor = object.attr("__dlpack__");
  py::object capsule;
  try {
    capsule = stream ? export_tensor(py::arg("stream") = *stream,
                                     py::arg("max_version") = py::make_tuple(1, 0))
                     : export_tensor(py::arg("max_version") = py::make_tuple(1, 0));
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    // A producer older than DLPack 1.0 takes no max_version.
    capsule = stream ? export_tensor(py::arg("stream") = *stream) : export_tensor();
  }
  PyObject* raw = capsule.ptr();
  if (!PyCapsule_CheckExact(raw))
    throw py::type_error("ndzip: __dlpack__ of " +
                         py::repr(py::type::of(object)).cast<std::string>() +
                         " returned no capsule");
  const char* name = PyCapsule_GetName(raw);
  if (name && std::strcmp(name, versioned_name) == 0) {
    auto* managed =
        static_cast<dlpack::managed_tensor_versioned*>(PyCapsule_GetPointer(raw, versioned_name));
    if (!managed) throw py::error_already_set();
    if (managed->major != 1) {
      // Another major version may lay the struct out otherwise: not read, handed back.
      throw py::type_error("ndzip: a DLPack tensor of version " + std::to_string(managed->major) +
                           "." + std::to_string(managed->minor) + " (this module reads 1.x)");
    }
    m_tensor = &managed->dl_tensor;
    m_read_only = (managed->flags & dlpack::flag_read_only) != 0;
    m_keeper = py::reinterpret_steal<py::object>(
        PyCapsule_New(managed, nullptr, release<dlpack::managed_tensor_versioned>));
    if (!m_keeper) throw py::error_already_set();
    PyCapsule_SetName(raw, "used_dltensor_versioned");
  } else if (name && std::strcmp(name, legacy_name) == 0) {
    auto* managed = static_cast<dlpack::managed_tensor*>(PyCapsule_GetPointer(raw, legacy_name));
    if (!managed) throw py::error_already_set();
    m_tensor = &managed->dl_tensor;
    m_keeper = py::reinterpret_steal<py::object>(
        PyCapsule_New(managed, nullptr, release<dlpack::managed_tensor>));
    if (!m_keeper) throw py::error_already_set();
    PyCapsule_SetName(raw, "used_dltensor");
  } else {
    throw py::type_error(std::string("ndzip: __dlpack__ returned a capsule named '") +
                         (name ? name : "") + "', not a DLPack tensor");
  }
}

}  // namespace ndzip_python
