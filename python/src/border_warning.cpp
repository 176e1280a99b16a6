// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "border_warning.hpp"

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>

#include <ndzip/folding.hpp>

namespace ndzip_python {

namespace {

PyObject* border_warning = nullptr;  // the class, owned by the module

// "(2915,)", "(38, 38)": as Python prints a shape.
std::string python_shape(const ndzip::array_shape& shape) {
  std::string text = "(";
  for (int a = 0; a < shape.rank(); ++a)
    text += (a ? ", " : "") + std::to_string(shape.extent(a));
  return text + (shape.rank() == 1 ? ",)" : ")");
}

}  // namespace

void define_border_warning(py::module_& module) {
  border_warning = PyErr_NewExceptionWithDoc(
      "ndzip.BorderWarning",
      "Most values of an array (a chunk) lie outside ndzip's whole hypercubes of 4096 values "
      "and are stored raw, even with its slowest dimensions folded: larger chunks compress. "
      "Given once per shape.",
      PyExc_UserWarning, nullptr);
  if (!border_warning) throw py::error_already_set();
  module.add_object("BorderWarning", py::handle(border_warning));
}

void warn_if_mostly_border(const ndzip::array_shape& shape, const ndzip::array_shape& coded,
                           ndzip::codec_mode mode) {
  const std::uint64_t all = coded.element_count();
  const std::uint64_t raw = ndzip::elements_stored_raw(coded, mode);
  if (2 * raw <= all) return;
  static std::set<std::string> warned;  // guarded by the GIL
  if (!warned.insert(shape.to_string() + ndzip::codec_mode_name(mode)).second) return;
  char percent[8];
  std::snprintf(percent, sizeof percent, "%.0f",
                100.0 * static_cast<double>(raw) / static_cast<double>(all));
  std::string message = "ndzip: " + std::string(percent) + "% of each " +
                        (shape.type() == ndzip::element_type::float32 ? "float32 " : "float64 ") +
                        python_shape(shape) +
                        " array lies outside whole hypercubes (4096 values) and is stored raw";
  const ndzip::array_shape folded = ndzip::coded_shape(shape, ndzip::folding::automatic);
  if (folded != coded && 2 * ndzip::elements_stored_raw(folded, mode) <= all)
    message += ": folding='automatic' (the default) would code it as " + python_shape(folded) +
               ", with more in hypercubes.";
  else
    message += ": it barely compresses. Chunks of shape " +
               python_shape(ndzip::suggested_chunk_shape(shape)) +
               " or larger would (ndzip.suggest_chunks).";
  if (PyErr_WarnEx(border_warning, message.c_str(), 1) != 0) throw py::error_already_set();
}

}  // namespace ndzip_python
