// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip-fuzz-seeds DIR: writes a starting corpus for each fuzz target into DIR/<target>/: the
// reference vectors (regenerated, unit_tests/vector_generator.hpp) small enough for the fuzz
// targets, plus a smooth array of every type and dimensionality with several hypercubes and a
// border, each as a shaped stream (decode_stream), shaped values (roundtrip), a frame (frame)
// and an HDF5 chunk, checksummed and bare (hdf5_chunk), and as a high-ratio stream
// (decode_high_ratio).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "chunk_checksum.hpp"
#include "chunk_parameters.hpp"
#include "codec.hpp"
#include "framing.hpp"
#include "fuzz_support.hpp"
#include "test_support.hpp"
#include "vector_generator.hpp"

using namespace ndzip_fuzz;

namespace {

const ndzip_test::reference_vector reference_vectors[] = {
#include "reference_vectors.inc"
};

// Seeds stay small: the fuzzer mutates them faster.
constexpr std::size_t max_seed_elements = std::size_t{1} << 15;

void write_file(const std::filesystem::path& path, const std::vector<byte_buffer>& pieces) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const auto& piece : pieces)
    out.write(reinterpret_cast<const char*>(piece.data()),
              static_cast<std::streamsize>(piece.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_seeds(const std::filesystem::path& dir, const ndzip_test::vector_spec& spec) {
  array_desc array;
  std::uint64_t extents[3] = {};
  for (int a = 0; a < spec.dims; ++a) extents[a] = spec.extents[a];
  array.shape = ndzip::array_shape(
      spec.is_double ? ndzip_cli::element_type::float64 : ndzip_cli::element_type::float32,
      spec.dims, extents);
  const auto raw = ndzip_test::generate_bytes(spec);
  byte_buffer values(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) values[i] = std::byte{raw[i]};
  const byte_buffer stream = model_stream(array, values);
  const byte_buffer prefix = shaped_input_prefix(array);
  const auto head = ndzip_cli::encode_frame_header(array, stream);

  const std::string name = spec.name();
  write_file(dir / "decode_stream" / name, {prefix, stream});
  // The library's high-ratio stream (no reference model: the mode is this project's own).
  array_desc high_ratio = array;
  high_ratio.mode = ndzip::codec_mode::high_ratio;
  const byte_buffer coded = ndzip_cli::compress_array(ndzip_cli::backend_names()[0], high_ratio,
                                                      values);
  write_file(dir / "decode_high_ratio" / name, {prefix, coded});
  if (spec.size() <= roundtrip_max_elements) write_file(dir / "roundtrip" / name, {prefix, values});
  write_file(dir / "frame" / name, {byte_buffer(head.begin(), head.end()), stream});

  namespace plugin = ndzip::hdf5_plugin;
  plugin::chunk_parameters chunk;
  chunk.shape = array.shape;
  byte_buffer checksum(plugin::checksum_bytes);
  plugin::store_checksum(plugin::stream_checksum(stream.data(), stream.size()), checksum.data());
  write_file(dir / "hdf5_chunk" / (name + "-checksummed"),
             {hdf5_chunk_input_prefix(plugin::to_cd_values(chunk)), checksum, stream});
  // Layout 3 (what new datasets get): the checksum covers the parameters and the stream.
  plugin::chunk_parameters sealed = chunk;
  sealed.layout = plugin::cd_values_layout;
  byte_buffer sealed_checksum(plugin::checksum_bytes);
  plugin::store_checksum(plugin::chunk_checksum(sealed, stream.data(), stream.size()),
                         sealed_checksum.data());
  write_file(dir / "hdf5_chunk" / (name + "-layout3"),
             {hdf5_chunk_input_prefix(plugin::to_cd_values(sealed)), sealed_checksum, stream});
  chunk.layout = 1;
  chunk.checksum = false;
  write_file(dir / "hdf5_chunk" / (name + "-layout1"),
             {hdf5_chunk_input_prefix(plugin::to_cd_values(chunk)), stream});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    const ndzip_cli::backend_session session(1, true);
    for (const char* target :
         {"decode_stream", "roundtrip", "frame", "hdf5_chunk", "decode_high_ratio"})
      std::filesystem::create_directories(dir / target);

    std::vector<ndzip_test::vector_spec> specs;
    for (const auto& v : reference_vectors) {
      const auto spec = ndzip_test::parse_vector_name(v.name);
      if (spec.size() <= max_seed_elements) specs.push_back(spec);
    }
    // Three hypercubes along the first axis and a border in every axis, for each profile.
    for (const char* shape : {"f32_1d_12290", "f64_1d_12290", "f32_2d_194x65", "f64_2d_194x65",
                              "f32_3d_50x17x17", "f64_3d_50x17x17"})
      specs.push_back(ndzip_test::parse_vector_name(std::string("smooth-b8_") + shape));
    for (const auto& spec : specs) write_seeds(dir, spec);
    std::printf("ndzip-fuzz-seeds: %zu seeds per target in %s\n", specs.size(), argv[1]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ndzip-fuzz-seeds: %s\n", e.what());
    return 1;
  }
}
