// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "shape_check.hpp"

#include <algorithm>
#include <cstdio>
#include <ndzip/format.hpp>
#include <vector>

#include "codec.hpp"

namespace ndzip_cli {

namespace {

// A guess must beat the given shape by 5 % of its stream and by 3 % of the array: on nearly
// constant data every shape compresses to a few percent, and headers alone make 5 % there.
constexpr double margin = 0.95;
constexpr double least_gain = 0.03;
// Bytes of the input each shape is tried on: a few milliseconds of compression per shape.
constexpr std::size_t sample_bytes = std::size_t{8} << 20;
// A shape whose smallest fair sample (one hypercube deep along the slowest axis) is larger than
// this is not tried.
constexpr std::size_t largest_sample_bytes = std::size_t{64} << 20;

int side_length(int dims) {
  return dims == 1   ? ndzip::profile<float, 1>::side_length
         : dims == 2 ? ndzip::profile<float, 2>::side_length
                     : ndzip::profile<float, 3>::side_length;
}

array_desc make_array(element_type type, std::vector<std::uint64_t> extents) {
  return {ndzip::array_shape(type, static_cast<int>(extents.size()), extents.data()), {}};
}

// The shapes a wrong command line most likely meant: the extents in another order, and the
// other element type (its fastest extent halved or doubled). Merging or splitting extents is not
// tried: a correct shape whose border is large (20x180x360) can compress worse than 1-D, and
// that is no reason to doubt it.
std::vector<array_desc> guesses(const array_desc& array) {
  std::vector<std::uint64_t> e(array.shape.extents().begin(),
                               array.shape.extents().begin() + array.shape.rank());
  std::vector<array_desc> out;
  auto add = [&](element_type type, std::vector<std::uint64_t> extents) {
    const array_desc a = make_array(type, std::move(extents));
    const auto same_shape = [&](const array_desc& b) { return b.shape == a.shape; };
    if (a.shape != array.shape && std::none_of(out.begin(), out.end(), same_shape))
      out.push_back(a);
  };
  std::vector<std::uint64_t> order = e;
  std::sort(order.begin(), order.end());
  do add(array.shape.type(), order);
  while (std::next_permutation(order.begin(), order.end()));
  std::vector<std::uint64_t> other = e;
  if (array.shape.type() == element_type::float32 && other.back() % 2 == 0) {
    other.back() /= 2;
    add(element_type::float64, other);
  } else if (array.shape.type() == element_type::float64) {
    other.back() *= 2;
    add(element_type::float32, other);
  }
  return out;
}

// The leading slabs of `shape` that make a fair sample: whole hypercubes deep along the slowest
// axis (the rest would be stored raw as border), about sample_bytes; nothing if even one
// hypercube's depth is too large.
std::optional<array_desc> sample_of(const array_desc& shape) {
  const std::uint64_t slab = shape.shape.byte_size() / shape.shape.extent(0);
  const std::uint64_t side = static_cast<std::uint64_t>(side_length(shape.shape.rank()));
  const std::uint64_t depth = std::max<std::uint64_t>(1, sample_bytes / slab / side) * side;
  if (depth * slab > largest_sample_bytes) return std::nullopt;
  array_desc sample = shape;
  sample.shape = shape.shape.with_extent(0, std::min(shape.shape.extent(0), depth));
  return sample;
}

std::optional<double> sample_ratio(const std::string& backend, const array_desc& shape,
                                   byte_span values) {
  const auto sample = sample_of(shape);
  if (!sample) return std::nullopt;
  const std::size_t bytes = sample->shape.byte_size();
  if (bytes > values.size) return std::nullopt;
  const byte_buffer stream = compress_array(backend, *sample, byte_span(values.data, bytes));
  return static_cast<double>(stream.size()) / static_cast<double>(bytes);
}

std::string shape_option(const array_desc& a) {
  return "-t " + std::string(ndzip::element_type_name(a.shape.type())) + " -n " +
         a.shape.extents_string();
}

}  // namespace

std::optional<shape_doubt> doubt_shape(const std::string& backend, const array_desc& array,
                                       byte_span values) {
  const auto given = sample_ratio(backend, array, values);
  if (!given) return std::nullopt;
  std::optional<shape_doubt> doubt;
  for (const array_desc& guess : guesses(array)) {
    const auto ratio = sample_ratio(backend, guess, values);
    if (ratio && *ratio < *given * margin && *ratio < *given - least_gain &&
        (!doubt || *ratio < doubt->better_ratio))
      doubt = shape_doubt{array, guess, *given, *ratio};
  }
  return doubt;
}

std::size_t shape_check_bytes() { return largest_sample_bytes; }

std::string describe(const shape_doubt& doubt) {
  char text[200];
  std::snprintf(text, sizeof text, "%s compresses a sample to %.1f %%, %s to %.1f %%",
                shape_option(doubt.given).c_str(), 100 * doubt.given_ratio,
                shape_option(doubt.better).c_str(), 100 * doubt.better_ratio);
  return text;
}

}  // namespace ndzip_cli
