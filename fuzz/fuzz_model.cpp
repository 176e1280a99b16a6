// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The reference model's stream for the fuzz targets. A file of its own so that the libFuzzer
// build compiles it, like the model, without coverage instrumentation (fuzz/CMakeLists.txt).

#include <array>
#include <cstdint>
#include <vector>

#include "fuzz_support.hpp"
#include "reference_model.hpp"
#include "test_support.hpp"

namespace ndzip_fuzz {

byte_buffer model_stream(const array_desc& array, byte_span values) {
  const auto& e = array.shape.extents();
  const std::array<std::size_t, 3> extents = {e[0], e[1], e[2]};
  const std::vector<unsigned char> bytes(
      reinterpret_cast<const unsigned char*>(values.data),
      reinterpret_cast<const unsigned char*>(values.data) + values.size);
  const auto model = [&](auto word) {
    using Bits = decltype(word);
    const auto stream = ndzip_test::model_compress(ndzip_test::from_le_bytes<Bits>(bytes),
                                                   array.shape.rank(), extents);
    byte_buffer out(stream.size());
    for (std::size_t i = 0; i < stream.size(); ++i) out[i] = std::byte{stream[i]};
    return out;
  };
  return array.shape.type() == ndzip_cli::element_type::float64 ? model(std::uint64_t{})
                                                        : model(std::uint32_t{});
}

}  // namespace ndzip_fuzz
