// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "inputs.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "codec.hpp"
#include "decode.hpp"
#include "file_io.hpp"
#include "npy_format.hpp"

namespace ndzip_cli {

namespace {

// a + b, or SIZE_MAX where that overflows: a bound that large is never reached anyway.
std::size_t saturating_add(std::size_t a, std::uint64_t b) {
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  return b > max - a ? max : a + static_cast<std::size_t>(b);
}

// The size of `file` for messages, given that `count` bytes were read from it with `limit` as
// the bound: the count where the input ended before the bound; else a regular file's size, or
// for a pipe or device, whose rest was not read, a lower bound.
std::string size_text(const input_file& file, std::size_t count, std::size_t limit) {
  if (count < limit) return std::to_string(count) + " bytes";
  if (const auto size = file.regular_size()) return std::to_string(*size) + " bytes";
  return "more than " + std::to_string(limit - 1) + " bytes";
}

// Runs `f`, putting "NAME: " before the message of a std::runtime_error it throws (the
// library's without its "ndzip: ").
template <class F>
auto naming(const input_file& file, F&& f) {
  try {
    return f();
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(file.name() + ": " + codec_message(e));
  }
}

// Where an input's size is known and does not fit `array`: the shapes near it that would fit
// (the other element type; as many slabs along the slowest axis as the input holds), as
// "; -t double -n 100x200 would fit", or "".
std::string fitting_shapes(const array_desc& array, std::optional<std::uint64_t> size) {
  if (!size || *size == 0) return "";
  std::string shapes;
  auto offer = [&](array_desc shape) {
    shapes += (shapes.empty() ? "" : " or ") + std::string("-t ") +
              ndzip::element_type_name(shape.shape.type()) + " -n " + shape.shape.extents_string();
  };
  const std::uint64_t count = array.shape.element_count();
  array_desc other = array;
  other.shape = array.shape.with_type(array.shape.type() == element_type::float32
                                          ? element_type::float64
                                          : element_type::float32);
  if (checked_mul(count, ndzip::element_size(other.shape.type())) == *size) offer(other);
  const std::uint64_t slab = array.shape.byte_size() / array.shape.extent(0);
  if (*size % slab == 0 && *size / slab != array.shape.extent(0)) {
    array_desc taller = array;
    taller.shape = taller.shape.with_extent(0, *size / slab);
    offer(taller);
  }
  return shapes.empty() ? "" : "; " + shapes + " would fit";
}

// The values of `array` from `file`, of which `values` holds what was read already: exactly
// array.shape.byte_size() bytes, else an error that names the shapes that would fit.
byte_buffer read_exactly(input_file& file, byte_buffer values, const array_desc& array,
                         const progress_fn& progress) {
  const std::size_t expected = array.shape.byte_size();
  const std::size_t limit = saturating_add(expected, 1);
  file.read_up_to(values, limit, progress);
  if (values.size() != expected) {
    const auto size =
        values.size() < limit ? std::optional<std::uint64_t>(values.size()) : file.regular_size();
    throw std::runtime_error(file.name() + " has " + size_text(file, values.size(), limit) +
                             ", but a " + array.shape.to_string() + " array has " +
                             std::to_string(expected) + " bytes (" +
                             std::to_string(array.shape.element_count()) + " elements of " +
                             std::to_string(ndzip::element_size(array.shape.type())) + " bytes)" +
                             fitting_shapes(array, size));
  }
  return values;
}

// Everything `file` holds, of which `values` holds what was read already: a 1-D array of `type`
// (no extents given), whose byte size must be a whole number of elements, at least one.
byte_buffer read_whole(input_file& file, byte_buffer values, element_type type,
                       const progress_fn& progress) {
  file.read_up_to(values, std::numeric_limits<std::size_t>::max(), progress);
  const std::size_t width = ndzip::element_size(type);
  if (values.empty() || values.size() % width != 0)
    throw std::runtime_error(file.name() + " has " + std::to_string(values.size()) +
                             " bytes, not a whole number of " + ndzip::element_type_name(type) +
                             " values (" + std::to_string(width) + " bytes each)");
  return values;
}

// A raw input given to compress without -t: refused, saying what its first bytes (`head`) and
// its name suggest it is.
[[noreturn]] void refuse_untyped(const std::string& path, const input_file& file, byte_span head) {
  std::string hint;
  const std::size_t present = std::min(head.size, ndzip::frame_magic.size());
  if (present == ndzip::frame_magic.size() &&
      std::equal(head.data, head.data + present, ndzip::frame_magic.begin()))
    hint = "; it is an ndzip frame already: to decompress it, use ndzip -d";
  else if (ends_with(path, ".npy"))
    hint = "; its name ends in .npy, but it does not start with NumPy's magic (\\x93NUMPY)";
  throw std::runtime_error("compressing " + file.name() +
                           " needs the element type (-t float or -t double): it is not a .npy "
                           "file, whose header would give it" +
                           hint);
}

// "2x3x4x5", or "()" for a 0-D array.
std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string text;
  for (const auto n : shape) text += (text.empty() ? "" : "x") + std::to_string(n);
  return text.empty() ? "()" : text;
}

// The array a .npy header describes, checked against what ndzip holds and against -t/-n.
array_desc npy_array(const input_file& file, const npy::header& header,
                     const array_request& request) {
  const auto& shape = header.shape;
  const std::string holds = file.name() + " holds a " + std::to_string(shape.size()) +
                            "-D array (shape " + shape_text(shape) + ")";
  if (shape.empty() || shape.size() > static_cast<std::size_t>(ndzip::array_shape::max_rank))
    throw std::runtime_error(holds + "; ndzip compresses 1- to 3-D arrays");
  if (std::find(shape.begin(), shape.end(), 0) != shape.end())
    throw std::runtime_error(holds + " of no values; ndzip compresses arrays of at least one");
  // Fortran order stores the reversed shape in C order: only with a single extent above 1 is
  // that the same memory as the array itself. Compressing the transpose would come back as
  // another array, so it is refused.
  if (header.fortran_order &&
      std::count_if(shape.begin(), shape.end(), [](std::uint64_t n) { return n > 1; }) > 1)
    throw std::runtime_error(holds +
                             " in Fortran order; ndzip compresses C-order arrays: save it with "
                             "numpy.save(path, numpy.ascontiguousarray(a))");
  const ndzip::array_shape checked_shape = naming(file, [&] {
    const ndzip::array_shape s(header.type, static_cast<int>(shape.size()), shape.data());
    s.byte_size();  // throws for an array too large to address
    return s;
  });
  const array_desc array{checked_shape, request.mode.value_or(ndzip::codec_mode::ndzip)};
  check_request_matches(request, file.name(), array);
  return array;
}

// A .npy file, of which `head` holds the first bytes, the magic: its header read and checked
// whole, then exactly the bytes of the array it describes (in a buffer of their own, so aligned
// for the element type whatever the header's length).
array_file read_npy(input_file& file, byte_buffer head, const array_request& request,
                    const progress_fn& progress) {
  const auto read_header_to = [&](std::size_t size) {
    file.read_up_to(head, size, progress);
    if (head.size() < size)
      throw std::runtime_error(file.name() + ": not a valid .npy file: it ends inside its header (" +
                               std::to_string(head.size()) + " of " + std::to_string(size) +
                               " bytes)");
  };
  read_header_to(npy::version_end);
  const std::size_t preamble = naming(file, [&] { return npy::preamble_size(head); });
  read_header_to(preamble);
  const std::size_t header_bytes = naming(file, [&] { return npy::header_size(head); });
  read_header_to(header_bytes);
  const npy::header header = naming(file, [&] { return npy::parse_header(head); });
  const array_desc array = npy_array(file, header, request);

  const std::size_t expected = array.shape.byte_size();
  const std::size_t limit = saturating_add(expected, 1);
  byte_buffer values;
  file.read_up_to(values, limit, progress);
  if (values.size() != expected) {
    const auto size = file.regular_size();
    const std::string data =
        values.size() < limit ? std::to_string(values.size()) + " bytes"
        : size                ? std::to_string(*size - header_bytes) + " bytes"
                              : "more than " + std::to_string(expected) + " bytes";
    throw std::runtime_error(file.name() + " has " + data + " of values after its " +
                             std::to_string(header_bytes) + "-byte .npy header, but its " +
                             array.shape.to_string() + " array has " + std::to_string(expected) +
                             " bytes" +
                             (values.size() < expected ? " (a truncated file?)" : ""));
  }
  return {array, std::move(values), true};
}

}  // namespace

array_file read_array_to_compress(const std::string& path, const array_request& request,
                                  const progress_fn& progress) {
  input_file file(path);
  byte_buffer head;
  file.read_up_to(head, npy::magic.size(), progress);
  if (npy::starts_with_magic(head)) return read_npy(file, std::move(head), request, progress);
  if (!request.type) refuse_untyped(path, file, head);
  const element_type type = *request.type;
  const ndzip::codec_mode mode = request.mode.value_or(ndzip::codec_mode::ndzip);
  if (request.extents.empty()) {
    byte_buffer values = read_whole(file, std::move(head), type, progress);
    const std::uint64_t count = values.size() / ndzip::element_size(type);
    return {{ndzip::array_shape(type, {count}), mode}, std::move(values)};
  }
  const array_desc array{ndzip::array_shape(type, static_cast<int>(request.extents.size()),
                                            request.extents.data()),
                         mode};
  return {array, read_exactly(file, std::move(head), array, progress)};
}

frame_file read_frame(const std::string& path, const progress_fn& progress) {
  input_file file(path);
  frame_file frame;
  file.read_up_to(frame.bytes, ndzip::frame_header_bytes);
  // The header's stream length is one its array can have, which bounds the rest.
  frame.header = naming(file, [&] { return read_frame_header(frame.bytes); });
  // A regular file's size is known: if it does not match the header, nothing more is read.
  if (const auto size = file.regular_size())
    naming(file, [&] { ndzip::check_frame_size(frame.header, *size); });
  const std::size_t size = frame.header.frame_bytes();
  file.read_up_to(frame.bytes, saturating_add(size, 1), progress);
  if (frame.bytes.size() > size)  // a pipe or device, whose length was not known above
    throw std::runtime_error(file.name() +
                             ": not a valid ndzip frame: trailing data after the stream of " +
                             std::to_string(frame.header.stream_bytes) + " bytes");
  // A truncated stream.
  naming(file, [&] { ndzip::inspect_frame(frame.bytes.data(), frame.bytes.size()); });
  return frame;
}

byte_buffer read_raw_stream(const std::string& path, const array_desc& array,
                            const progress_fn& progress) {
  input_file file(path);
  const std::size_t largest = largest_stream(file.name(), array);
  const std::size_t limit = saturating_add(largest, 1);
  byte_buffer stream;
  file.read_up_to(stream, limit, progress);
  if (stream.size() > largest)
    throw std::runtime_error(file.name() + " has " + size_text(file, stream.size(), limit) +
                             ", but no stream of a " + array.shape.to_string() +
                             " array is longer than " + std::to_string(largest) +
                             " bytes; are -t and -n right?");
  return stream;
}

}  // namespace ndzip_cli
