// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "bench_timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

#include "arrays.hpp"
#include "session.hpp"

namespace ndzip_python {

py::dict time_cpp(const py::object& object, const std::optional<std::string>& backend,
                  int repeats) {
  const py::array array = as_array(object);
  const ndzip::array_shape shape = shape_of(array);
  const py::array values = c_order(array);
  require_kokkos();
  const std::string name = backend_for_call(backend);
  const auto median = [](std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  std::vector<double> fresh_c, fresh_d, reused_c, reused_d;
  {
    py::gil_scoped_release release;
    const void* data = values.data();
    const auto time = [](const auto& f) {
      const auto start = std::chrono::steady_clock::now();
      f();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    ndzip::dynamic_compressor reused(name, shape);
    std::vector<std::byte> frame(reused.frame_size_bound());
    std::vector<std::byte> decoded(shape.byte_size());
    std::size_t frame_bytes = 0;
    for (int r = 0; r < repeats; ++r) {
      fresh_c.push_back(time([&] {
        ndzip::dynamic_compressor codec(name, shape);
        frame_bytes = codec.compress_frame(data, frame.data(), frame.size());
      }));
      fresh_d.push_back(time([&] {
        ndzip::dynamic_compressor codec(name, shape);
        codec.decompress_frame(frame.data(), frame_bytes, decoded.data());
      }));
      reused_c.push_back(
          time([&] { frame_bytes = reused.compress_frame(data, frame.data(), frame.size()); }));
      reused_d.push_back(
          time([&] { reused.decompress_frame(frame.data(), frame_bytes, decoded.data()); }));
    }
  }
  py::dict d;
  d["fresh_compress"] = median(fresh_c);
  d["fresh_decompress"] = median(fresh_d);
  d["reused_compress"] = median(reused_c);
  d["reused_decompress"] = median(reused_d);
  d["backend"] = name;
  return d;
}

}  // namespace ndzip_python
