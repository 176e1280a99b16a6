// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: a whole chunked frame file (version 4, ndzip/chunked_frame_format.hpp), inspected
// with ndzip::inspect_chunked_frame and read on every backend with ndzip::decompress_chunked_frame
// into a View of the shape its header reports.
// Properties: inspecting ends in a frame_error with a message or in a layout that tiles the
// file; reading ends in the same ndzip::error message or in the same values on every backend;
// decoded values re-frame with ndzip::compress_chunked_frame in the same slab rows to the same
// file on every backend, which inspects and reads back to them bit for bit. A file whose only
// defects are its checksums (the header's, the slab heads', the trailer's) is also read with
// them repaired, so that the fuzzer gets past the hashes to the checks and the decoders behind.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <ndzip/backends.hpp>
#include <ndzip/chunked_frame.hpp>

#include "fuzz_support.hpp"

using namespace ndzip_fuzz;

namespace {

// Calls f(exec, host) with an instance of `backend` and `host` a View of shape `shape` over
// `values`.
template <class F>
void with_host_view(const std::string& backend, const ndzip::array_shape& shape,
                    byte_buffer& values, F&& f) {
  ndzip::with_backend(backend, [&](const auto& exec) {
    ndzip::visit_shape(shape, [&](auto tag, const auto& grid) {
      using T = typename decltype(tag)::type;
      f(exec, view_of<T, std::decay_t<decltype(grid)>::dimensions>(values, shape));
    });
  });
}

struct outcome {
  std::string error;  // empty if read
  byte_buffer values;
};

// `file` read with ndzip::decompress_chunked_frame on `backend` into a View of `shape` in the
// backend's memory.
outcome read_on(const std::string& backend, byte_span file, const ndzip::array_shape& shape) {
  outcome o;
  o.values.resize(shape.byte_size());
  try {
    with_host_view(backend, shape, o.values, [&](const auto& exec, const auto& host) {
      using space = typename std::decay_t<decltype(exec)>::memory_space;
      const auto values = Kokkos::create_mirror_view(space{}, host);
      ndzip::decompress_chunked_frame(exec, frame_view(file.data, file.size), values);
      Kokkos::deep_copy(host, values);
    });
  } catch (const ndzip::error& e) {  // frame_error or stream_error
    o.error = e.what();
    require(!o.error.empty(), "error without a message");
    o.values.clear();
  }
  return o;
}

// The chunked frame that ndzip::compress_chunked_frame writes on `backend` of `values` (of
// shape `shape`, copied to the backend's memory) in slabs of `slab_rows` rows.
byte_buffer reframe_on(const std::string& backend, byte_buffer values,
                       const ndzip::array_shape& shape, std::uint64_t slab_rows) {
  byte_buffer frame;
  with_host_view(backend, shape, values, [&](const auto& exec, const auto& host) {
    using space = typename std::decay_t<decltype(exec)>::memory_space;
    const auto device = Kokkos::create_mirror_view_and_copy(space{}, host);
    Kokkos::View<std::byte*, Kokkos::HostSpace> out(
        "chunked frame", ndzip::chunked_frame_size_bound(device, slab_rows));
    const std::size_t size = ndzip::compress_chunked_frame(exec, device, out, slab_rows);
    frame.assign(out.data(), out.data() + size);
  });
  return frame;
}

// The layout must tile the file as docs/FORMAT.md says: the header, the slabs one after another
// in their order, the index and the trailer, nothing else.
void check_layout(const ndzip::chunked_frame_layout& layout, std::size_t size) {
  const std::uint64_t count = layout.frame.slab_count;
  require(layout.offsets.size() == count && layout.slabs.size() == count,
          "a layout of " + std::to_string(layout.offsets.size()) + " offsets and " +
              std::to_string(layout.slabs.size()) + " slab heads for " + std::to_string(count) +
              " slabs");
  std::uint64_t at = ndzip::chunked_header_bytes;
  for (std::uint64_t s = 0; s < count; ++s) {
    if (layout.offsets[s] != at || layout.slabs[s].index != s)
      violated("slab " + std::to_string(s) + " is not where the slab before it ends");
    at += layout.slabs[s].record_bytes();
  }
  require(at + 8 * count + ndzip::chunked_trailer_bytes == size,
          "the slabs, index and trailer do not fill the " + std::to_string(size) +
              "-byte frame");
}

void check_file(byte_span file) {
  ndzip::chunked_frame_layout layout;
  try {
    layout = ndzip::inspect_chunked_frame(file.data, file.size);
  } catch (const ndzip::frame_error& e) {
    require(*e.what() != '\0', "frame_error without a message");
    return;
  }
  check_layout(layout, file.size);
  const ndzip::chunked_frame_info& info = layout.frame;
  const ndzip::array_shape shape(info.type, info.dimensions, info.extents.data());
  if (shape.element_count() > max_elements) return;

  const outcome first = read_on(backends()[0], file, shape);
  byte_buffer reframed;
  if (first.error.empty())
    reframed = reframe_on(backends()[0], first.values, shape, info.slab_rows);
  for (std::size_t b = 1; b < backends().size(); ++b) {
    const std::string& backend = backends()[b];
    const outcome other = read_on(backend, file, shape);
    require(other.error == first.error && same_bytes(other.values, first.values),
            backend + " and " + backends()[0] + " disagree: '" + other.error + "' vs '" +
                first.error + "'");
    if (first.error.empty())
      require(same_bytes(reframe_on(backend, first.values, shape, info.slab_rows), reframed),
              backend + " and " + backends()[0] + " write different chunked frames");
  }
  if (!first.error.empty()) return;

  ndzip::chunked_frame_layout again;
  try {
    again = ndzip::inspect_chunked_frame(reframed.data(), reframed.size());
  } catch (const ndzip::frame_error& e) {
    violated(std::string("the re-framed values do not inspect: ") + e.what());
  }
  check_layout(again, reframed.size());
  require(again.frame.type == info.type && again.frame.dimensions == info.dimensions &&
              again.frame.extents == info.extents && again.frame.slab_rows == info.slab_rows,
          "the re-framed values have another header");
  const outcome back = read_on(backends()[0], reframed, shape);
  require(back.error.empty() && same_bytes(back.values, first.values),
          "decoded values do not survive re-framing: " + back.error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_buffer file = aligned_copy({reinterpret_cast<const std::byte*>(data), size});
  check_file(file);
  if (const std::optional<byte_buffer> repaired = with_chunked_checksums_repaired(file))
    check_file(*repaired);
  return 0;
}
