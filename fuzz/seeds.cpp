// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip-fuzz-seeds DIR: writes a starting corpus for each fuzz target into DIR/<target>/: the
// reference vectors (regenerated, unit_tests/vector_generator.hpp) small enough for the fuzz
// targets, plus a smooth array of every type and dimensionality with several hypercubes and a
// border, each as a shaped stream (decode_stream), shaped values (roundtrip), a frame (frame)
// and an HDF5 chunk, checksummed and bare (hdf5_chunk), and as a high-ratio stream
// (decode_high_ratio); a few small chunked frames (chunked_frame); and frames of every version
// and raw streams, each with boxes inside, outside and empty (region).

#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <ndzip/chunked_frame.hpp>
#include <ndzip/folding.hpp>
#include <ndzip/frame.hpp>

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

array_desc array_of(const ndzip_test::vector_spec& spec) {
  array_desc array;
  std::uint64_t extents[3] = {};
  for (int a = 0; a < spec.dims; ++a) extents[a] = spec.extents[a];
  array.shape = ndzip::array_shape(
      spec.is_double ? ndzip_cli::element_type::float64 : ndzip_cli::element_type::float32,
      spec.dims, extents);
  return array;
}

byte_buffer values_of(const ndzip_test::vector_spec& spec) {
  const auto raw = ndzip_test::generate_bytes(spec);
  byte_buffer values(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) values[i] = std::byte{raw[i]};
  return values;
}

void write_seeds(const std::filesystem::path& dir, const ndzip_test::vector_spec& spec) {
  const array_desc array = array_of(spec);
  const byte_buffer values = values_of(spec);
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

// The frame of the vector `name`: with slab_rows > 0 the chunked frame (version 4) that
// ndzip::compress_chunked_frame writes in slabs of `slab_rows` rows in `mode`, else the frame
// that ndzip::compress_frame writes in `mode` folded by `fold` (version 1, 2 or 3).
byte_buffer frame_of(const std::string& name, std::uint64_t slab_rows, ndzip::codec_mode mode,
                     ndzip::folding fold = ndzip::folding::automatic) {
  const ndzip_test::vector_spec spec = ndzip_test::parse_vector_name(name);
  const array_desc array = array_of(spec);
  byte_buffer values = values_of(spec);
  byte_buffer frame;
  ndzip::visit_shape(array.shape, [&](auto tag, const auto& grid) {
    using T = typename decltype(tag)::type;
    const auto view = view_of<T, std::decay_t<decltype(grid)>::dimensions>(values, array.shape);
    const Kokkos::DefaultHostExecutionSpace exec;
    std::size_t size = 0;
    if (slab_rows > 0) {
      Kokkos::View<std::byte*, Kokkos::HostSpace> out(
          "chunked frame", ndzip::chunked_frame_size_bound(view, slab_rows, mode));
      size = ndzip::compress_chunked_frame(exec, view, out, slab_rows, mode);
      frame.assign(out.data(), out.data() + size);
    } else {
      Kokkos::View<std::byte*, Kokkos::HostSpace> out("frame", ndzip::frame_size_bound(view, mode));
      size = ndzip::compress_frame(exec, view, out, mode, fold);
      frame.assign(out.data(), out.data() + size);
    }
  });
  return frame;
}

// The chunked frame of the vector `name` in slabs of `slab_rows` rows in `mode`, as
// DIR/chunked_frame/NAME-rowsR (and -high_ratio).
void write_chunked_seed(const std::filesystem::path& dir, const std::string& name,
                        std::uint64_t slab_rows, ndzip::codec_mode mode) {
  const std::string suffix = mode == ndzip::codec_mode::ndzip ? "" : "-high_ratio";
  write_file(dir / "chunked_frame" / (name + "-rows" + std::to_string(slab_rows) + suffix),
             {frame_of(name, slab_rows, mode)});
}

// The box fields of a region input (fuzz_support.hpp) for a box inside the array (kind 0: the
// start as it is, the count less one), or, as it is, one of another kind.
struct seed_box {
  const char* name;
  unsigned kind;
  std::array<std::uint32_t, 3> start, count;
};

region_input box_fields(const seed_box& box) {
  region_input input;
  input.box_kind = box.kind;
  input.start = box.start;
  input.count = box.count;
  if (box.kind < 6)
    for (auto& c : input.count) c = c > 0 ? c - 1 : 0;
  return input;
}

// The boxes of an array of `extents` (slowest first, rank `rank`) that every seed gets: all of
// it, its last element, one reaching from the middle to the far corner (across hypercubes and
// into the border, or into later slabs), one past the array and an empty one.
std::vector<seed_box> seed_boxes(int rank, const std::array<std::uint32_t, 3>& extents) {
  std::vector<seed_box> boxes;
  seed_box all{"all", 0, {}, {}}, last{"last", 0, {}, {}}, middle{"middle", 0, {}, {}};
  seed_box past{"past", 7, {}, {}}, empty{"empty", 6, {}, {}};
  for (int a = 0; a < rank; ++a) {
    all.count[a] = extents[a];
    last.start[a] = extents[a] - 1;
    last.count[a] = 1;
    middle.start[a] = extents[a] / 2;
    middle.count[a] = extents[a] - extents[a] / 2;
    past.start[a] = a == 0 ? extents[a] : 0;
    past.count[a] = 1;
    empty.count[a] = extents[a];
  }
  boxes.insert(boxes.end(), {all, last, middle, past, empty});
  return boxes;
}

// Region seeds: frames of every version (1: the default mode, 2: high-ratio, 3: folded, 4:
// chunked, in slabs that the boxes cross) and raw streams of some of the target's fixed grids
// (fuzz_support.cpp), each with the boxes of seed_boxes, as DIR/region/KIND-NAME-BOX.
void write_region_seeds(const std::filesystem::path& dir) {
  constexpr auto ndzip_mode = ndzip::codec_mode::ndzip;
  constexpr auto high_ratio = ndzip::codec_mode::high_ratio;
  struct frame_seed {
    const char* kind;
    const char* name;
    std::uint64_t slab_rows;
    ndzip::codec_mode mode;
    ndzip::folding fold;
  };
  // Most of them under the fuzzer's 16 KiB.
  const frame_seed frames[] = {
      {"v1", "smooth-b8_f32_2d_70x65", 0, ndzip_mode, ndzip::folding::none},
      {"v1", "const_f64_1d_4200", 0, ndzip_mode, ndzip::folding::none},
      {"v2", "smooth-b8_f32_3d_17x16x16", 0, high_ratio, ndzip::folding::none},
      {"v3", "const_f32_3d_3x5x600", 0, ndzip_mode, ndzip::folding::automatic},
      {"v3", "smooth-b8_f32_3d_4x16x70", 0, ndzip_mode, ndzip::folding::automatic},
      {"v4", "smooth-b8_f32_2d_66x64", 64, ndzip_mode, ndzip::folding::automatic},
      {"v4", "const_f32_1d_12290", 4096, ndzip_mode, ndzip::folding::automatic},
      {"v4", "smooth-b8_f64_3d_18x9x9", 16, ndzip_mode, ndzip::folding::automatic},
      {"v4", "smooth-b8_f32_3d_5x6x7", 2, ndzip_mode, ndzip::folding::automatic},
      {"v4", "const_f32_2d_130x65", 64, high_ratio, ndzip::folding::automatic},
  };
  for (const frame_seed& seed : frames) {
    const byte_buffer frame = frame_of(seed.name, seed.slab_rows, seed.mode, seed.fold);
    const int version = std::to_integer<int>(frame[4]);
    if (version != seed.kind[1] - '0')
      throw std::logic_error(std::string("the seed ") + seed.name + " is a version " +
                             std::to_string(version) + " frame, not " + seed.kind);
    const ndzip_test::vector_spec spec = ndzip_test::parse_vector_name(seed.name);
    std::array<std::uint32_t, 3> extents{};
    for (int a = 0; a < spec.dims; ++a) extents[a] = static_cast<std::uint32_t>(spec.extents[a]);
    for (const seed_box& box : seed_boxes(spec.dims, extents))
      write_file(dir / "region" / (std::string(seed.kind) + "-" + seed.name + "-" + box.name),
                 {region_input_prefix(box_fields(box)), frame});
  }
  // Raw streams: grid bytes of the table (bit 7: the high-ratio mode) and the values' family.
  const std::pair<unsigned, const char*> raw_seeds[] = {
      {14, "smooth-b8"}, {6, "const"},         {16, "const"},
      {24, "const"},     {20, "smooth-b8"},    {0x80u | 9, "const"},
      {0x80u | 22, "smooth-b8"},
  };
  for (const auto& [grid_byte, family] : raw_seeds) {
    const array_desc array = region_raw_grid(grid_byte);
    std::string name = std::string(family) + "_" +
                       (array.shape.type() == ndzip_cli::element_type::float64 ? "f64" : "f32") +
                       "_" + std::to_string(array.shape.rank()) + "d_";
    std::array<std::uint32_t, 3> extents{};
    for (int a = 0; a < array.shape.rank(); ++a) {
      extents[a] = static_cast<std::uint32_t>(array.shape.extent(a));
      name += (a ? "x" : "") + std::to_string(extents[a]);
    }
    const byte_buffer values = values_of(ndzip_test::parse_vector_name(name));
    const byte_buffer stream =
        array.mode == ndzip_mode
            ? model_stream(array, values)
            : ndzip_cli::compress_array(ndzip_cli::backend_names()[0], array, values);
    const std::string kind = array.mode == ndzip_mode ? "raw-" : "raw-high_ratio-";
    for (const seed_box& box : seed_boxes(array.shape.rank(), extents)) {
      region_input input = box_fields(box);
      input.raw = true;
      input.raw_grid = grid_byte;
      write_file(dir / "region" / (kind + name + "-" + box.name),
                 {region_input_prefix(input), stream});
    }
  }
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
         {"decode_stream", "roundtrip", "frame", "hdf5_chunk", "decode_high_ratio",
          "chunked_frame", "region"})
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
    // Small chunked frames, most under the fuzzer's 16 KiB: slabs of one row, of a layer of
    // hypercubes (4096 elements in 1-D, 64 rows in 2-D, 16 in 3-D) with a shorter last slab, and
    // of the whole array; one in the high-ratio mode.
    struct chunked_seed {
      const char* name;
      std::uint64_t slab_rows;
      ndzip::codec_mode mode;
    };
    constexpr auto ndzip_mode = ndzip::codec_mode::ndzip;
    const chunked_seed chunked_seeds[] = {
        {"smooth-b8_f64_1d_30", 1, ndzip_mode},
        {"smooth-b0_f32_1d_8200", 4096, ndzip_mode},
        {"smooth-b8_f64_2d_20x65", 1, ndzip_mode},
        {"smooth-b8_f32_2d_70x65", 64, ndzip_mode},
        {"smooth-b40_f64_2d_10x10", 10, ndzip_mode},
        {"smooth-b8_f32_3d_5x6x7", 1, ndzip_mode},
        {"smooth-b8_f32_3d_5x6x7", 5, ndzip_mode},
        {"smooth-b8_f64_3d_18x9x9", 16, ndzip_mode},
        {"smooth-b8_f32_2d_70x65", 70, ndzip::codec_mode::high_ratio},
    };
    for (const chunked_seed& seed : chunked_seeds)
      write_chunked_seed(dir, seed.name, seed.slab_rows, seed.mode);
    write_region_seeds(dir);
    std::printf("ndzip-fuzz-seeds: %zu seeds per target (%zu chunked frames) in %s\n",
                specs.size(), std::size(chunked_seeds), argv[1]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ndzip-fuzz-seeds: %s\n", e.what());
    return 1;
  }
}
