// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: the HDF5 filter's chunk reader (plugins/hdf5/src), as the filter runs it on a
// chunk read from a file: the dataset's cd_values, then the stored chunk (fuzz_support.hpp,
// "HDF5 chunk input").
// Properties: the parameters are refused, or the chunk is refused, with a message that names
// the filter, or it decodes to exactly one chunk of values; those values compress, in the same
// layout, to a chunk that decodes back to them bit for bit. A checksummed chunk whose only
// defect is its checksum is also read with the checksum repaired, so that the fuzzer reaches
// the decoder behind it, and must decode as its bare stream does in layout 1 (in layout 3 the
// checksum covers the parameters too, and is repaired as such).

#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "chunk_checksum.hpp"
#include "chunk_codec.hpp"
#include "chunk_parameters.hpp"
#include "fuzz_support.hpp"

using namespace ndzip_fuzz;
namespace plugin = ndzip::hdf5_plugin;

namespace {

constexpr std::string_view filter_prefix = "ndzip HDF5 filter";

// The decoded chunk, or nothing if the reader refused it with a message naming the filter.
std::optional<byte_buffer> read_chunk(const plugin::chunk_parameters& chunk, byte_span stored) {
  try {
    const plugin::filtered_chunk out = plugin::decompress_chunk(chunk, stored.data, stored.size);
    require(
        out.size == chunk.shape.byte_size() && out.capacity >= out.size,
        "a decoded chunk of " + std::to_string(out.size) + " bytes for " + chunk.shape.to_string());
    return byte_buffer(out.bytes.get(), out.bytes.get() + out.size);
  } catch (const std::exception& e) {
    require(std::string_view(e.what()).rfind(filter_prefix, 0) == 0,
            std::string("a refusal that does not name the filter: ") + e.what());
    return std::nullopt;
  }
}

void check_recompresses(const plugin::chunk_parameters& chunk, const byte_buffer& values) {
  const plugin::filtered_chunk again = plugin::compress_chunk(chunk, values.data(), values.size());
  const auto decoded = read_chunk(chunk, {again.bytes.get(), again.size});
  require(decoded && same_bytes(*decoded, values),
          "values do not survive compress_chunk and back in " + chunk.shape.to_string());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = parse_hdf5_chunk_input({reinterpret_cast<const std::byte*>(data), size});
  if (!input) return 0;
  plugin::chunk_parameters chunk;
  try {
    chunk = plugin::from_cd_values(input->cd_values.size(), input->cd_values.data());
  } catch (const std::exception& e) {
    require(std::string_view(e.what()).rfind(filter_prefix, 0) == 0,
            std::string("cd_values refused without naming the filter: ") + e.what());
    return 0;
  }
  if (chunk.shape.element_count() > max_elements) return 0;
  const byte_buffer stored = aligned_copy(input->chunk);

  if (const auto values = read_chunk(chunk, stored)) {
    check_recompresses(chunk, *values);
    return 0;
  }
  const std::size_t head = plugin::checksum_head_bytes(chunk);
  if (head == 0 || stored.size() < head) return 0;
  byte_buffer repaired = stored;
  plugin::store_checksum(
      plugin::chunk_checksum(chunk, repaired.data() + head, repaired.size() - head),
      repaired.data());
  const auto values = read_chunk(chunk, repaired);
  plugin::chunk_parameters bare = chunk;
  bare.layout = 1;
  bare.checksum = false;
  const byte_buffer stream(repaired.begin() + head, repaired.end());
  const auto bare_values = read_chunk(bare, stream);
  require(values.has_value() == bare_values.has_value() &&
              (!values || same_bytes(*values, *bare_values)),
          "a chunk behind its checksum and its bare stream decode differently");
  if (values) check_recompresses(chunk, *values);
  return 0;
}
