// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: a whole frame file (ndzip/frame_format.hpp), read on every backend twice: as
// `ndzip decompress` reads it (tools/decode.hpp) and through the library's View API
// (ndzip::inspect_frame, then ndzip::decompress_frame into a View of the shape it reports).
// Properties: reading ends in an error with a message or in exactly the array the header
// describes; every backend and both readers agree; decoded values re-frame, by the tool and by
// ndzip::compress_frame alike, to one file that reads back to them. A file whose only defect is
// its checksum is also read with the checksum repaired, so the fuzzer reaches the decoder behind
// the frame.

#include <Kokkos_Core.hpp>
#include <ndzip/backends.hpp>
#include <ndzip/frame.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "codec.hpp"
#include "decode.hpp"
#include "framing.hpp"
#include "fuzz_support.hpp"

using namespace ndzip_fuzz;

namespace {

struct outcome {
  std::string error;  // empty if read
  array_desc array;
  byte_buffer values;
};

outcome read_as_tool(const std::string& backend, byte_span file) {
  outcome o;
  try {
    o.array = ndzip_cli::frame_array(ndzip_cli::open_frame("input", file));
    o.values =
        ndzip_cli::decode_stream(backend, "input", o.array, ndzip_cli::frame_stream(file), false);
  } catch (const std::runtime_error& e) {
    o.error = e.what();
    require(!o.error.empty(), "error without a message");
  }
  return o;
}

// Reads `file` with ndzip::decompress_frame on `backend`, into `reframed` the frame that
// ndzip::compress_frame then writes of the values it read.
outcome read_with_view_api(const std::string& backend, byte_span file, byte_buffer& reframed) {
  outcome o;
  try {
    o.array = ndzip_cli::frame_array(ndzip::inspect_frame(file.data, file.size));
    o.values.resize(o.array.shape.byte_size());
    ndzip::with_backend(backend, [&](const auto& exec) {
      using space = typename std::decay_t<decltype(exec)>::memory_space;
      ndzip::visit_shape(o.array.shape, [&](auto tag, const auto& grid) {
        using T = typename decltype(tag)::type;
        const auto host =
            view_of<T, std::decay_t<decltype(grid)>::dimensions>(o.values, o.array.shape);
        const auto values = Kokkos::create_mirror_view(space{}, host);
        ndzip::decompress_frame(exec, frame_view(file.data, file.size), values);
        Kokkos::deep_copy(host, values);

        Kokkos::View<std::byte*, Kokkos::HostSpace> out("frame", ndzip::frame_size_bound(values));
        const std::size_t size = ndzip::compress_frame(exec, values, out);
        reframed.assign(out.data(), out.data() + size);
      });
    });
  } catch (const ndzip::error& e) {  // frame_error or stream_error
    o.error = e.what();
    require(!o.error.empty(), "error without a message");
    o.values.clear();
    reframed.clear();
  }
  return o;
}

void check_file(byte_span file) {
  const outcome first = read_as_tool(backends()[0], file);
  byte_buffer reframed;  // the tool's frame of the values read
  if (first.error.empty()) {
    require(first.values.size() == first.array.shape.byte_size(),
            "decoded values of the wrong size");
    // As `ndzip compress` and compress_frame code it: folded by the rule, whatever the file did.
    const ndzip_cli::array_desc coded =
        ndzip_cli::coded_for_frame(first.array, ndzip::folding::automatic);
    const byte_buffer stream = ndzip_cli::compress_array(backends()[0], coded, first.values);
    const auto head = ndzip_cli::encode_frame_header(coded, stream);
    reframed.assign(head.begin(), head.end());
    reframed.insert(reframed.end(), stream.begin(), stream.end());
    const outcome again = read_as_tool(backends()[0], reframed);
    require(again.error.empty() && same_bytes(again.values, first.values),
            "decoded values do not survive compression: " + again.error);
  }

  for (const std::string& backend : backends()) {
    if (backend != backends()[0]) {
      const outcome other = read_as_tool(backend, file);
      require(other.error == first.error && same_bytes(other.values, first.values),
              backend + " and " + backends()[0] + " disagree: '" + other.error + "' vs '" +
                  first.error + "'");
    }
    byte_buffer view_frame;
    const outcome view = read_with_view_api(backend, file, view_frame);
    require(view.error.empty() == first.error.empty() && same_bytes(view.values, first.values),
            backend + ": ndzip::decompress_frame and the tool disagree: '" + view.error + "' vs '" +
                first.error + "'");
    require(same_bytes(view_frame, reframed),
            backend + ": ndzip::compress_frame and the tool write different frames");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const byte_buffer file = aligned_copy({reinterpret_cast<const std::byte*>(data), size});
  check_file(file);

  if (const std::optional<byte_buffer> repaired = with_frame_checksum_repaired(file))
    check_file(*repaired);
  return 0;
}
