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

#include <ndzip/chunked_frame_format.hpp>

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

// Refuses the values of `array` from `file`, of which `count` bytes were read with `limit` (the
// array's size and one byte) as the bound: the message names the shapes that would fit.
[[noreturn]] void refuse_raw_size(const input_file& file, std::size_t count, std::size_t limit,
                                  const array_desc& array) {
  const std::size_t expected = array.shape.byte_size();
  const auto size = count < limit ? std::optional<std::uint64_t>(count) : file.regular_size();
  throw std::runtime_error(file.name() + " has " + size_text(file, count, limit) + ", but a " +
                           array.shape.to_string() + " array has " + std::to_string(expected) +
                           " bytes (" + std::to_string(array.shape.element_count()) +
                           " elements of " +
                           std::to_string(ndzip::element_size(array.shape.type())) + " bytes)" +
                           fitting_shapes(array, size));
}

// The same for the values after a .npy header of `header_bytes`.
[[noreturn]] void refuse_npy_size(const input_file& file, std::size_t count, std::size_t limit,
                                  const array_desc& array, std::size_t header_bytes) {
  const std::size_t expected = array.shape.byte_size();
  const auto size = file.regular_size();
  const std::string data = count < limit ? std::to_string(count) + " bytes"
                           : size        ? std::to_string(*size - header_bytes) + " bytes"
                                         : "more than " + std::to_string(expected) + " bytes";
  throw std::runtime_error(file.name() + " has " + data + " of values after its " +
                           std::to_string(header_bytes) + "-byte .npy header, but its " +
                           array.shape.to_string() + " array has " + std::to_string(expected) +
                           " bytes" + (count < expected ? " (a truncated file?)" : ""));
}

// The values of `array` from `file`, of which `values` holds what was read already: exactly
// array.shape.byte_size() bytes, else an error that names the shapes that would fit.
byte_buffer read_exactly(input_file& file, byte_buffer values, const array_desc& array,
                         const progress_fn& progress) {
  const std::size_t expected = array.shape.byte_size();
  const std::size_t limit = saturating_add(expected, 1);
  file.read_up_to(values, limit, progress);
  if (values.size() != expected) refuse_raw_size(file, values.size(), limit, array);
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
// whole. Returns the array it describes and the header's size; the values follow.
std::pair<array_desc, std::size_t> open_npy(input_file& file, byte_buffer head,
                                            const array_request& request,
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
  return {npy_array(file, header, request), header_bytes};
}

// Exactly the bytes of the array a .npy header of `header_bytes` described (in a buffer of
// their own, so aligned for the element type whatever the header's length).
byte_buffer read_npy_values(input_file& file, const array_desc& array, std::size_t header_bytes,
                            const progress_fn& progress) {
  const std::size_t expected = array.shape.byte_size();
  const std::size_t limit = saturating_add(expected, 1);
  byte_buffer values;
  file.read_up_to(values, limit, progress);
  if (values.size() != expected) refuse_npy_size(file, values.size(), limit, array, header_bytes);
  return values;
}

}  // namespace

array_source open_array_to_compress(const std::string& path, const array_request& request,
                                    const progress_fn& progress) {
  array_source source;
  source.file = std::make_unique<input_file>(path);
  input_file& file = *source.file;
  byte_buffer head;
  file.read_up_to(head, npy::magic.size(), progress);
  if (npy::starts_with_magic(head)) {
    auto [array, header_bytes] = open_npy(file, std::move(head), request, progress);
    source.mode = array.mode;
    source.type = array.shape.type();
    source.array = std::move(array);
    source.npy = true;
    source.npy_header_bytes = header_bytes;
    return source;
  }
  if (!request.type) refuse_untyped(path, file, head);
  source.type = *request.type;
  source.mode = request.mode.value_or(ndzip::codec_mode::ndzip);
  source.head = std::move(head);
  if (request.extents.empty()) {
    // The whole input, 1-D: a regular file's size tells its extent before it is read.
    source.whole_input = true;
    const std::size_t width = ndzip::element_size(source.type);
    if (const auto size = file.regular_size(); size && *size > 0 && *size % width == 0)
      source.array.emplace(ndzip::array_shape(source.type, {*size / width}), source.mode);
  } else {
    source.array.emplace(ndzip::array_shape(source.type, static_cast<int>(request.extents.size()),
                                            request.extents.data()),
                         source.mode);
  }
  return source;
}

array_file read_array_values(array_source source, const progress_fn& progress) {
  input_file& file = *source.file;
  if (source.npy)
    return {*source.array,
            read_npy_values(file, *source.array, source.npy_header_bytes, progress), true};
  if (source.whole_input) {
    byte_buffer values = read_whole(file, std::move(source.head), source.type, progress);
    const std::uint64_t count = values.size() / ndzip::element_size(source.type);
    return {{ndzip::array_shape(source.type, {count}), source.mode}, std::move(values)};
  }
  return {*source.array, read_exactly(file, std::move(source.head), *source.array, progress)};
}

array_file read_array_to_compress(const std::string& path, const array_request& request,
                                  const progress_fn& progress) {
  return read_array_values(open_array_to_compress(path, request, progress), progress);
}

value_source::value_source(array_source source, std::size_t keep, const progress_fn& progress)
    : m_array(source.array.value()),
      m_file(std::move(source.file)),
      m_npy(source.npy),
      m_npy_header_bytes(source.npy_header_bytes),
      m_progress(progress),
      m_prefix(std::move(source.head)) {
  const std::size_t expected = m_array.shape.byte_size();
  const std::size_t limit = saturating_add(expected, 1);
  // A regular file of another size is refused before anything else is read, with the message
  // that reading it would give.
  if (const auto size = m_file->regular_size()) {
    const std::uint64_t values = *size - std::min<std::uint64_t>(*size, m_npy_header_bytes);
    if (values != expected)
      refuse_size(static_cast<std::size_t>(std::min<std::uint64_t>(values, limit)), limit);
  }
  m_file->advise_sequential();
  keep = std::min(std::max(keep, m_prefix.size()), expected);
  m_file->read_up_to(m_prefix, keep, m_progress);
  if (m_prefix.size() != keep) refuse_size(m_prefix.size(), limit);
}

value_source::value_source(array_file whole)
    : m_array(std::move(whole.array)), m_npy(whole.npy), m_prefix(std::move(whole.values)) {}

byte_span value_source::first(std::size_t n) const {
  if (m_prefix_used != 0 || n > m_prefix.size())
    throw std::logic_error("ndzip_cli: value_source::first: those bytes are not held");
  return byte_span(m_prefix.data(), n);
}

byte_span value_source::next(std::size_t n) {
  if (m_prefix_used + n <= m_prefix.size()) {
    const byte_span part(m_prefix.data() + m_prefix_used, n);
    m_prefix_used += n;
    m_delivered += n;
    return part;
  }
  if (!m_file) throw std::logic_error("ndzip_cli: value_source::next: past the values");
  const std::size_t limit = saturating_add(m_array.shape.byte_size(), 1);
  m_slab.clear();
  if (m_prefix_used < m_prefix.size()) {
    m_slab.reserve(n);
    m_slab.insert(m_slab.end(), m_prefix.begin() + static_cast<std::ptrdiff_t>(m_prefix_used),
                  m_prefix.end());
  }
  if (!m_prefix.empty()) {  // served: its memory goes
    m_prefix = byte_buffer();
    m_prefix_used = 0;
  }
  m_file->read_up_to(m_slab, n, m_progress);
  if (m_slab.size() != n)
    refuse_size(static_cast<std::size_t>(m_delivered) + m_slab.size(), limit);
  m_delivered += n;
  return m_slab;
}

void value_source::check_end() {
  if (!m_file) return;
  byte_buffer probe;
  m_file->read_up_to(probe, 1);
  const std::size_t limit = saturating_add(m_array.shape.byte_size(), 1);
  if (!probe.empty()) refuse_size(limit, limit);
}

void value_source::refuse_size(std::size_t count, std::size_t limit) const {
  if (m_npy) refuse_npy_size(*m_file, count, limit, m_array, m_npy_header_bytes);
  refuse_raw_size(*m_file, count, limit, m_array);
}

frame_file read_frame(const std::string& path, const progress_fn& progress) {
  input_file file(path);
  return read_frame(file, byte_buffer(), progress);
}

frame_file read_frame(input_file& file, byte_buffer head, const progress_fn& progress) {
  frame_file frame;
  frame.bytes = std::move(head);
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

bool is_chunked_frame(byte_span head) {
  return head.size > 4 && std::equal(ndzip::frame_magic.begin(), ndzip::frame_magic.end(), head.data) &&
         std::to_integer<int>(head.data[4]) == ndzip::frame_version_chunked;
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
