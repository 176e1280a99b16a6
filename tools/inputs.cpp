// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "inputs.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>

#include "codec.hpp"
#include "decode.hpp"
#include "file_io.hpp"

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

}  // namespace

byte_buffer read_array(const std::string& path, const array_desc& array,
                       const progress_fn& progress) {
  input_file file(path);
  const std::size_t expected = array.shape.byte_size();
  const std::size_t limit = saturating_add(expected, 1);
  byte_buffer values;
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

byte_buffer read_1d_array(const std::string& path, element_type type, const progress_fn& progress) {
  input_file file(path);
  byte_buffer values;
  file.read_up_to(values, std::numeric_limits<std::size_t>::max(), progress);
  const std::size_t width = ndzip::element_size(type);
  if (values.empty() || values.size() % width != 0)
    throw std::runtime_error(file.name() + " has " + std::to_string(values.size()) +
                             " bytes, not a whole number of " + ndzip::element_type_name(type) +
                             " values (" + std::to_string(width) + " bytes each)");
  return values;
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
