// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: region decoding of untrusted input. A region input (fuzz_support.hpp) gives a box
// and either a frame of any version, read with ndzip::decompress_frame_region into a View of the
// box's shape after inspect_frame / inspect_chunked_frame tell its element type and rank, or a
// raw stream of a small fixed grid, read with ndzip::compressor::decompress_region.
// Properties, on every backend:
// - every backend reaches the same outcome: the same exception type and message, or the same
//   values (and, for a raw stream, the same count of bytes the stream takes);
// - a box that is empty or not inside the array is refused with std::invalid_argument (by a
//   frame whose checksum is wrong, with that frame_error first); a box inside it never is;
// - where the full decode of the same input (decompress_frame, decompress_chunked_frame,
//   compressor::decompress on the first backend) succeeds, the region decodes to the same box
//   cut from it bit for bit (a raw stream also taking as many bytes);
// - a region that decodes although the full decode fails must owe it to where the failure lies:
//   in a chunked frame a slab the box does not touch (found with chunked_frame_reader), or, in a
//   stream of the default mode, a hypercube the box does not touch (ndzip::stream_error names
//   the first failing one); any other failure (checksum, header, the stream's length, any
//   failure of a high-ratio stream, which is decoded whole) must stop the region too.
// A frame whose only defects are its checksums is also read with them repaired, so that the
// fuzzer gets past the hashes to the region decoder behind them.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <ndzip/backends.hpp>
#include <ndzip/chunked_frame.hpp>
#include <ndzip/compressor.hpp>
#include <ndzip/folding.hpp>
#include <ndzip/frame.hpp>
#include <ndzip/frame_region.hpp>

#include "fuzz_support.hpp"

using namespace ndzip_fuzz;

namespace {

// What a decode ended in.
struct outcome {
  std::string kind;           // empty if decoded, else the exception's class
  std::string message;
  byte_buffer values;         // the elements decoded, C order
  std::size_t consumed = 0;   // raw streams: the bytes the stream takes
  bool ok() const { return kind.empty(); }
};

// f(o) with the exceptions a decoder may throw caught into `o`; any other is a violation.
template <class F>
outcome catching(F&& f) {
  outcome o;
  try {
    f(o);
  } catch (const std::invalid_argument& e) {
    o.kind = "std::invalid_argument";
    o.message = e.what();
  } catch (const ndzip::frame_error& e) {
    o.kind = "ndzip::frame_error";
    o.message = e.what();
  } catch (const ndzip::stream_error& e) {
    o.kind = "ndzip::stream_error";
    o.message = e.what();
  } catch (const std::exception& e) {
    violated(std::string("unexpected exception: ") + e.what());
  }
  if (!o.ok()) {
    require(!o.message.empty(), o.kind + " without a message");
    o.values.clear();
    o.consumed = 0;
  }
  return o;
}

std::string describe(const outcome& o) {
  return o.ok() ? "decoded" : o.kind + " '" + o.message + "'";
}

template <class T, int Dims>
using array_type = std::conditional_t<Dims == 1, T*, std::conditional_t<Dims == 2, T**, T***>>;

// A LayoutRight View of `extents` (the first Dims of them) in Space: allocated, or over `data`.
template <class T, int Dims, class Space>
auto make_view(const std::string& label, const std::array<std::uint64_t, 3>& extents) {
  return Kokkos::View<array_type<T, Dims>, Kokkos::LayoutRight, Space>(
      label, static_cast<std::size_t>(extents[0]),
      Dims > 1 ? static_cast<std::size_t>(extents[1]) : KOKKOS_INVALID_INDEX,
      Dims > 2 ? static_cast<std::size_t>(extents[2]) : KOKKOS_INVALID_INDEX);
}
template <class T, int Dims, class Space>
auto make_view(T* data, const std::array<std::uint64_t, 3>& extents) {
  return Kokkos::View<array_type<T, Dims>, Kokkos::LayoutRight, Space,
                      Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
      data, static_cast<std::size_t>(extents[0]),
      Dims > 1 ? static_cast<std::size_t>(extents[1]) : KOKKOS_INVALID_INDEX,
      Dims > 2 ? static_cast<std::size_t>(extents[2]) : KOKKOS_INVALID_INDEX);
}

// The bytes of `view`'s elements, copied to the host.
template <class View>
byte_buffer bytes_of(const View& view) {
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
  const auto* first = reinterpret_cast<const std::byte*>(host.data());
  return byte_buffer(first, first + host.size() * sizeof(typename View::value_type));
}

template <int Dims>
std::array<std::size_t, Dims> start_of(const region_box& box) {
  std::array<std::size_t, Dims> start{};
  for (int a = 0; a < Dims; ++a) start[a] = static_cast<std::size_t>(box.start[a]);
  return start;
}

std::array<std::uint64_t, 3> extents_of(const ndzip::array_shape& shape) {
  std::array<std::uint64_t, 3> e{};
  for (int a = 0; a < shape.rank(); ++a) e[a] = shape.extent(a);
  return e;
}

// The box `box` cut out of `full`, the C-order elements (of `element` bytes) of `grid`.
byte_buffer cut(const byte_buffer& full, const std::array<std::uint64_t, 3>& grid,
                const region_box& box, std::size_t element) {
  const int last = box.rank - 1;
  const std::size_t run = static_cast<std::size_t>(box.count[last]) * element;
  std::size_t rows = 1;
  for (int a = 0; a < last; ++a) rows *= static_cast<std::size_t>(box.count[a]);
  byte_buffer out(rows * run);
  for (std::size_t r = 0; r < rows; ++r) {
    std::uint64_t c[3] = {};
    std::size_t rest = r;
    for (int a = last - 1; a >= 0; --a) {
      c[a] = box.start[a] + rest % box.count[a];
      rest /= static_cast<std::size_t>(box.count[a]);
    }
    c[last] = box.start[last];
    std::uint64_t at = 0;
    for (int a = 0; a <= last; ++a) at = at * grid[a] + c[a];
    std::memcpy(out.data() + r * run, full.data() + at * element, run);
  }
  return out;
}

// Whether hypercube `index` of the stream that codes `grid` (of rank `dims`: an array's or a
// slab's) as the grid of `coded_rank` its slowest dimensions merge into lies in the coded box
// around `box` (in `grid`'s coordinates): one that the region decoder must read and check. An
// index past the hypercubes counts as touched (a failure of the whole stream).
bool touches_hypercube(const std::array<std::uint64_t, 3>& grid, int dims, int coded_rank,
                       const region_box& box, std::uint64_t index) {
  if (coded_rank < 1 || coded_rank > dims) coded_rank = dims;
  const int merged = dims - coded_rank + 1;
  std::uint64_t coded_grid[3] = {1, 0, 0}, first[3] = {}, end[3] = {};
  std::uint64_t lo = 0, hi = 0;
  for (int a = 0; a < merged; ++a) {
    coded_grid[0] *= grid[a];
    lo = lo * grid[a] + box.start[a];
    hi = hi * grid[a] + box.start[a] + box.count[a] - 1;
  }
  first[0] = lo;
  end[0] = hi + 1;
  for (int k = 1; k < coded_rank; ++k) {
    coded_grid[k] = grid[merged - 1 + k];
    first[k] = box.start[merged - 1 + k];
    end[k] = first[k] + box.count[merged - 1 + k];
  }
  const std::uint64_t side = ndzip::hypercube_side(coded_rank);
  std::uint64_t cube[3] = {}, rest = index;
  for (int k = coded_rank - 1; k >= 0; --k) {
    const std::uint64_t per_axis = coded_grid[k] / side;
    if (per_axis == 0) return true;
    cube[k] = rest % per_axis;
    rest /= per_axis;
  }
  if (rest != 0) return true;
  for (int k = 0; k < coded_rank; ++k)
    if (cube[k] < first[k] / side || cube[k] >= (end[k] + side - 1) / side) return false;
  return true;
}

// Whether a region may decode although the full decode of a stream failed with `full`: only
// for a failure of a hypercube (the first failing one, ndzip::stream_error "hypercube N: ...")
// outside the box, in a stream of the default mode.
bool fails_outside_box(const outcome& full, ndzip::codec_mode mode,
                       const std::array<std::uint64_t, 3>& grid, int dims, int coded_rank,
                       const region_box& box) {
  static const std::string prefix = "ndzip: invalid stream: hypercube ";
  if (full.kind != "ndzip::stream_error" || mode != ndzip::codec_mode::ndzip ||
      full.message.compare(0, prefix.size(), prefix) != 0)
    return false;
  std::uint64_t index = 0;
  std::size_t at = prefix.size(), digits = 0;
  for (; at < full.message.size() && full.message[at] >= '0' && full.message[at] <= '9'; ++at) {
    if (++digits > 18) return false;
    index = index * 10 + static_cast<std::uint64_t>(full.message[at] - '0');
  }
  if (digits == 0 || at >= full.message.size() || full.message[at] != ':') return false;
  return !touches_hypercube(grid, dims, coded_rank, box, index);
}

// The properties that relate the region's outcome to the full decode's, for a box inside the
// array of `grid`. `explained()` says whether the full decode's failure lies outside the box
// (asked only where the region decoded and the full decode failed).
template <class Explained>
void check_region(const outcome& region, const outcome& full, const region_box& box,
                  const std::array<std::uint64_t, 3>& grid, std::size_t element,
                  Explained&& explained) {
  require(region.kind != "std::invalid_argument",
          "a box inside the array was refused: " + region.message);
  if (full.ok()) {
    require(region.ok(), "the region fails where the whole array decodes: " + describe(region));
    require(same_bytes(region.values, cut(full.values, grid, box, element)),
            "the region differs from the same box of the whole array");
    require(region.consumed == full.consumed,
            "the region takes " + std::to_string(region.consumed) + " stream bytes, the whole " +
                "array " + std::to_string(full.consumed));
  } else if (region.ok()) {
    require(explained(),
            "the region decodes although the whole array fails where the box lies: " +
                describe(full));
  }
}

// The region outcome of every backend, which must all agree; returns the first's.
template <class F>
outcome on_every_backend(F&& region_on) {
  const outcome first = region_on(backends()[0]);
  for (std::size_t b = 1; b < backends().size(); ++b) {
    const outcome other = region_on(backends()[b]);
    require(other.kind == first.kind && other.message == first.message,
            backends()[b] + " and " + backends()[0] + " disagree: " + describe(other) + " vs " +
                describe(first));
    require(same_bytes(other.values, first.values) && other.consumed == first.consumed,
            backends()[b] + " decoded another region than " + backends()[0]);
  }
  return first;
}

// ---- Frames -----------------------------------------------------------------------------------

// What the header of a frame says, as far as the region needs it.
struct frame_header {
  bool chunked = false;
  ndzip::array_shape shape;
  ndzip::chunked_frame_layout layout;  // chunked frames
  ndzip::frame_info info;              // frames of version 1-3
  std::string checksum_error;          // version 1-3: verify_frame_checksum's message, if any
};

std::optional<frame_header> read_header(byte_span file) {
  frame_header h;
  try {
    h.chunked = file.size > 4 &&
                std::to_integer<std::uint8_t>(file.data[4]) == ndzip::frame_version_chunked;
    if (h.chunked) {
      h.layout = ndzip::inspect_chunked_frame(file.data, file.size);
      const ndzip::chunked_frame_info& info = h.layout.frame;
      h.shape = ndzip::array_shape(info.type, info.dimensions, info.extents.data());
    } else {
      h.info = ndzip::inspect_frame(file.data, file.size);
      h.shape = ndzip::array_shape(h.info.type, h.info.dimensions, h.info.extents.data());
      try {
        ndzip::verify_frame_checksum(file.data, file.size);
      } catch (const ndzip::frame_error& e) {
        h.checksum_error = e.what();
      }
    }
  } catch (const ndzip::frame_error& e) {
    require(*e.what() != '\0', "frame_error without a message");
    return std::nullopt;
  }
  return h;
}

template <class T, int Dims>
outcome frame_region_on(const std::string& backend, byte_span file, const region_box& box) {
  return catching([&](outcome& o) {
    ndzip::with_backend(backend, [&](const auto& exec) {
      using space = typename std::decay_t<decltype(exec)>::memory_space;
      const auto values = make_view<T, Dims, space>("region", box.count);
      ndzip::decompress_frame_region(exec, frame_view(file.data, file.size), start_of<Dims>(box),
                                     values);
      o.values = bytes_of(values);
    });
  });
}

template <class T, int Dims>
outcome whole_frame_on(const std::string& backend, byte_span file, const frame_header& h) {
  return catching([&](outcome& o) {
    ndzip::with_backend(backend, [&](const auto& exec) {
      using space = typename std::decay_t<decltype(exec)>::memory_space;
      const auto values = make_view<T, Dims, space>("whole", extents_of(h.shape));
      if (h.chunked)
        ndzip::decompress_chunked_frame(exec, frame_view(file.data, file.size), values);
      else
        ndzip::decompress_frame(exec, frame_view(file.data, file.size), values);
      o.values = bytes_of(values);
    });
  });
}

// A chunked frame read in order with chunked_frame_reader, as decompress_chunked_frame reads it,
// into the whole array: the first slab whose decoding fails (slab_count: the frame's end) and
// its failure, the same as decompress_chunked_frame's; the slabs before it are decoded.
struct slab_scan {
  std::uint64_t failing = 0;
  outcome failure;
  byte_buffer values;  // the whole array's bytes, the rows of the slabs before `failing` decoded
};

template <class T, int Dims>
slab_scan scan_slabs(const std::string& backend, byte_span file, const frame_header& h) {
  slab_scan scan;
  ndzip::with_backend(backend, [&](const auto& exec) {
    using exec_type = std::decay_t<decltype(exec)>;
    using space = typename exec_type::memory_space;
    const ndzip::chunked_frame_info& info = h.layout.frame;
    const auto whole = make_view<T, Dims, space>("whole", info.extents);
    std::size_t row = 1;
    for (int a = 1; a < Dims; ++a) row *= static_cast<std::size_t>(info.extents[a]);
    ndzip::chunked_frame_reader<T, Dims, exec_type> reader(exec, file.data, file.size);
    const frame_view frame(file.data, file.size);
    scan.failure = catching([&](outcome&) {
      for (std::uint64_t s = 0; s < info.slab_count; ++s) {
        const auto at = static_cast<std::size_t>(h.layout.offsets[s]);
        const auto end = at + static_cast<std::size_t>(h.layout.slabs[s].record_bytes());
        const auto slab = make_view<T, Dims, space>(
            whole.data() + static_cast<std::size_t>(info.first_row(s)) * row,
            info.slab_extents(s));
        reader.decode_slab(Kokkos::subview(frame, std::make_pair(at, end)), slab);
      }
      reader.finish(file.data + file.size - reader.end_bytes(), reader.end_bytes());
    });
    scan.failing = reader.next_slab();
    scan.values = bytes_of(whole);
  });
  return scan;
}

// For a chunked frame whose full decode fails with `full`: the region must decode where every
// slab the box touches comes before the first failing one (to the box of those slabs' values),
// and may decode only where the failure lies outside the box: in a slab it does not touch, or in
// a hypercube of a touched slab's stream that it does not touch.
template <class T, int Dims>
void check_chunked_failure(byte_span file, const frame_header& h, const outcome& region,
                           const outcome& full, const region_box& box) {
  const slab_scan scan = scan_slabs<T, Dims>(backends()[0], file, h);
  require(scan.failure.kind == full.kind && scan.failure.message == full.message,
          "chunked_frame_reader and decompress_chunked_frame fail differently: " +
              describe(scan.failure) + " vs " + describe(full));
  const ndzip::chunked_frame_info& info = h.layout.frame;
  const std::uint64_t s = scan.failing;
  const std::uint64_t end_row = box.start[0] + box.count[0];
  if (s < info.slab_count && info.first_row(s) >= end_row) {
    require(region.ok(), "slab " + std::to_string(s) + " fails, after every slab the box " +
                             "touches, and stops it: " + describe(region));
    require(same_bytes(region.values, cut(scan.values, info.extents, box, sizeof(T))),
            "the region differs from the same box of the slabs decoded before the failing one");
    return;
  }
  if (!region.ok()) return;
  bool outside = false;
  if (s < info.slab_count) {
    const std::uint64_t first_row = info.first_row(s);
    const std::array<std::uint64_t, 3> slab_grid = info.slab_extents(s);
    const std::uint64_t from = std::max(box.start[0], first_row);
    const std::uint64_t to = std::min(end_row, first_row + slab_grid[0]);
    if (from >= to) {
      outside = true;  // a slab the box does not touch
    } else {
      region_box in_slab = box;
      in_slab.start[0] = from - first_row;
      in_slab.count[0] = to - from;
      const ndzip::slab_info& slab = h.layout.slabs[s];
      outside = fails_outside_box(full, slab.mode, slab_grid, Dims, slab.coded_dimensions, in_slab);
    }
  }
  require(outside, "the region decodes although the whole array fails where the box lies: " +
                       describe(full));
}

template <class T, int Dims>
void check_frame_box(byte_span file, const frame_header& h, const region_box& box) {
  const outcome region = on_every_backend(
      [&](const std::string& backend) { return frame_region_on<T, Dims>(backend, file, box); });
  if (!h.checksum_error.empty()) {
    // Checked first, before the box.
    require(region.kind == "ndzip::frame_error" && region.message == h.checksum_error,
            "a frame with a wrong checksum gives " + describe(region));
    return;
  }
  if (!box.inside) {
    require(region.kind == "std::invalid_argument",
            "a box that is empty or not inside the array gives " + describe(region));
    return;
  }
  const outcome full = whole_frame_on<T, Dims>(backends()[0], file, h);
  if (h.chunked && !full.ok()) {
    require(region.kind != "std::invalid_argument",
            "a box inside the array was refused: " + region.message);
    check_chunked_failure<T, Dims>(file, h, region, full, box);
    return;
  }
  const auto grid = extents_of(h.shape);
  check_region(region, full, box, grid, sizeof(T), [&] {
    return fails_outside_box(full, h.info.mode, grid, Dims, h.info.coded_dimensions, box);
  });
}

void check_frame(const region_input& input, byte_span file) {
  const std::optional<frame_header> h = read_header(file);
  if (!h) {
    // No header to learn the array from: any View must be refused, with the same error
    // everywhere.
    region_box box;
    box.rank = 1;
    box.count[0] = 1;
    const outcome region = on_every_backend([&](const std::string& backend) {
      return frame_region_on<float, 1>(backend, file, box);
    });
    require(region.kind == "ndzip::frame_error",
            "a frame whose header does not inspect gives " + describe(region));
    return;
  }
  if (h->shape.element_count() > region_max_elements) return;
  const region_box box = region_box_of(input, h->shape);
  if (box.size() > region_max_elements) return;
  ndzip::visit_shape(h->shape, [&](auto tag, const auto& grid) {
    using T = typename decltype(tag)::type;
    check_frame_box<T, std::decay_t<decltype(grid)>::dimensions>(file, *h, box);
  });
}

// ---- Raw streams ------------------------------------------------------------------------------

template <class T, int Dims>
void check_raw_box(const array_desc& array, byte_span stream, const region_box& box) {
  ndzip::extent<Dims> grid;
  for (int a = 0; a < Dims; ++a) grid[a] = static_cast<std::size_t>(array.shape.extent(a));
  // The stream in the backend's memory, as the codec reads it.
  const auto run = [&](const std::string& backend, auto&& decode) {
    return catching([&](outcome& o) {
      ndzip::with_backend(backend, [&](const auto& exec) {
        using exec_type = std::decay_t<decltype(exec)>;
        using space = typename exec_type::memory_space;
        const Kokkos::View<const std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host(
            stream.data, stream.size);
        const auto bytes = Kokkos::create_mirror_view_and_copy(space{}, host);
        ndzip::compressor<T, Dims, exec_type> codec(exec, grid, array.mode);
        decode(o, codec, bytes);
      });
    });
  };
  const outcome region = on_every_backend([&](const std::string& backend) {
    return run(backend, [&](outcome& o, auto& codec, const auto& bytes) {
      using space = typename std::decay_t<decltype(codec)>::memory_space;
      const auto values = make_view<T, Dims, space>("region", box.count);
      o.consumed = codec.decompress_region(bytes, start_of<Dims>(box), values);
      o.values = bytes_of(values);
    });
  });
  if (!box.inside) {
    require(region.kind == "std::invalid_argument",
            "a box that is empty or not inside the grid gives " + describe(region));
    return;
  }
  const outcome full = run(backends()[0], [&](outcome& o, auto& codec, const auto& bytes) {
    using space = typename std::decay_t<decltype(codec)>::memory_space;
    const auto values = make_view<T, Dims, space>("whole", extents_of(array.shape));
    o.consumed = codec.decompress(bytes, values);
    o.values = bytes_of(values);
  });
  const auto extents = extents_of(array.shape);
  check_region(region, full, box, extents, sizeof(T), [&] {
    return fails_outside_box(full, array.mode, extents, Dims, Dims, box);
  });
}

void check_raw(const region_input& input, byte_span payload) {
  const array_desc array = region_raw_grid(input.raw_grid);
  const region_box box = region_box_of(input, array.shape);
  if (box.size() > region_max_elements) return;
  const byte_buffer stream = aligned_copy(payload);
  ndzip::visit_shape(array.shape, [&](auto tag, const auto& grid) {
    using T = typename decltype(tag)::type;
    check_raw_box<T, std::decay_t<decltype(grid)>::dimensions>(array, stream, box);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::optional<region_input> input =
      parse_region_input({reinterpret_cast<const std::byte*>(data), size});
  if (!input) return 0;
  if (input->raw) {
    check_raw(*input, input->payload);
    return 0;
  }
  const byte_buffer file = aligned_copy(input->payload);
  check_frame(*input, file);
  const bool chunked =
      file.size() > 4 && std::to_integer<std::uint8_t>(file[4]) == ndzip::frame_version_chunked;
  const std::optional<byte_buffer> repaired =
      chunked ? with_chunked_checksums_repaired(file) : with_frame_checksum_repaired(file);
  if (repaired) check_frame(*input, *repaired);
  return 0;
}
