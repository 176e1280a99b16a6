// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "bench_timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

#include "arrays.hpp"
#include "device_arrays.hpp"
#include "session.hpp"

namespace ndzip_python {

namespace {

template <class F>
double seconds_of(const F& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

py::dict time_cpp(const py::object& object, const std::optional<std::string>& backend,
                  int repeats) {
  const py::array array = as_array(object);
  const ndzip::array_shape shape = shape_of(array);
  const py::array values = c_order(array);
  require_kokkos();
  const std::string name = backend_for_call(backend);
  const auto median = median_of;
  std::vector<double> fresh_c, fresh_d, reused_c, reused_d;
  {
    py::gil_scoped_release release;
    const void* data = values.data();
    const auto time = [](const auto& f) { return seconds_of(f); };
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

py::dict time_cpp_device(const py::object& values, const py::object& stream,
                         const py::object& decoded, int repeats) {
  const auto where = device_location_of(values);
  if (!where) throw py::type_error("ndzip.bench: time_cpp_device takes device arrays");
  const device_array in = borrow_device_array(values, *where, call_stream{});
  const device_array bytes = borrow_device_array(stream, *where, call_stream{});
  const device_array out = borrow_device_array(decoded, *where, call_stream{});
  if (!in.type) throw py::type_error("ndzip.bench: float32 or float64 values");
  std::uint64_t extents[3] = {};
  for (std::size_t d = 0; d < in.shape.size(); ++d) extents[d] = in.shape[d];
  const ndzip::array_shape shape(*in.type, static_cast<int>(in.shape.size()), extents);
  require_kokkos();
  std::vector<double> compress, decompress;
  std::size_t size = 0;
  {
    py::gil_scoped_release release;
    ndzip::dynamic_compressor codec(where->backend(), shape);
    const auto where_backend = ndzip::buffer_location::backend;
    for (int r = 0; r <= repeats; ++r) {  // the first round allocates the scratch: not counted
      const double c = seconds_of(
          [&] { size = codec.compress(in.data, bytes.data, bytes.bytes(), where_backend); });
      const double d =
          seconds_of([&] { codec.decompress(bytes.data, size, out.data, where_backend); });
      if (r == 0) continue;
      compress.push_back(c);
      decompress.push_back(d);
    }
  }
  py::dict d;
  d["compress"] = median_of(compress);
  d["decompress"] = median_of(decompress);
  d["stream_bytes"] = size;
  return d;
}

}  // namespace ndzip_python
