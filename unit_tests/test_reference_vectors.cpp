// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bit-exact compatibility with the upstream reference streams, on every enabled backend. The
// inputs are regenerated from their names and the streams checked against the embedded manifest
// digests, so this runs without ../shared; with the vector files present, the streams and inputs
// are also compared with the files byte for byte.

#include "codec_support.hpp"

using namespace ndzip_test;

TEST_CASE_TEMPLATE("reference vectors", C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const bool files = vectors_available();
  if (!files)
    MESSAGE("reference vector files not found in '" << vectors_dir()
                                                    << "': checking the embedded digests only");

  std::size_t cases = 0;
  for (const auto& v : reference_vectors()) {
    if (v.is_double != C::is_double || v.dims != D) continue;
    ++cases;
    INFO("vector " << std::string(v.name));
    const auto input = generate_bits<Bits>(parse_vector_name(v.name));
    const auto grid = make_extent<D>(v.extents);
    std::optional<std::vector<unsigned char>> stream_file, input_file;
    if (files) {
      stream_file = read_vector_stream(v);
      input_file = read_vector_input(v);
      REQUIRE(stream_file.has_value());
      REQUIRE(input_file.has_value());
    }

    for_each_backend([&](const std::string&, auto exec) {
      using Exec = decltype(exec);
      ndzip::compressor<T, D, Exec> codec(exec, grid);
      CHECK(codec.size_bound() >= v.stream_bytes);

      const auto stream = compress_with(codec, input);
      CHECK(stream.size() == v.stream_bytes);
      CHECK(sha256_hex(stream) == v.stream_sha256);

      // A stream_error here is a failure of this vector, not the end of the test case.
      auto decode = [&](const std::vector<unsigned char>& s, std::size_t& consumed) {
        try {
          return decompress_with(codec, s, &consumed);
        } catch (const ndzip::stream_error& e) {
          FAIL_CHECK("decompression threw ndzip::stream_error: " << e.what());
          return std::vector<Bits>{};
        }
      };
      std::size_t consumed = 0;
      const auto decoded = decode(stream, consumed);
      CHECK(consumed == v.stream_bytes);
      CHECK(mismatch(decoded, input) == "");

      if (files) {
        CHECK(mismatch(stream, *stream_file) == "");
        std::size_t file_consumed = 0;
        const auto from_file = decode(*stream_file, file_consumed);
        CHECK(file_consumed == stream_file->size());
        CHECK(mismatch(to_le_bytes(from_file), *input_file) == "");
      }
    });
  }
  CHECK(cases >= 10);
}
