// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// NumPy's .npy format (numpy.lib.format, versions 1.0, 2.0 and 3.0) as far as the tool needs
// it: the header of an array read from untrusted bytes, refused unless it is whole, well formed
// and of a little-endian float32 ('<f4') or float64 ('<f8') array; and the version 1.0 header
// written before decompressed values. No I/O: the caller reads the bytes, with a bound. Every
// refusal is a std::runtime_error saying what is wrong, without the file's name.

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "array_desc.hpp"
#include "bytes.hpp"

namespace ndzip_cli::npy {

// "\x93NUMPY", the first bytes of every .npy file.
constexpr std::array<unsigned char, 6> magic = {0x93, 'N', 'U', 'M', 'P', 'Y'};
// Magic and version: what preamble_size() needs.
constexpr std::size_t version_end = 8;
// The longest header text read, as numpy.load's own default (max_header_size): a float array's
// is about 100 bytes, so a longer one is not worth holding in memory.
constexpr std::size_t max_text_size = 10000;

// Whether `head` starts with the magic (false for fewer bytes than it has).
bool starts_with_magic(byte_span head);

// The bytes before the header text (magic, version, text length): 10 for version 1.0, 12 for
// 2.0 and 3.0. `head` holds at least version_end bytes and starts with the magic.
std::size_t preamble_size(byte_span head);

// The header's whole size, preamble and text, where the values start: from the text length in
// `head`, which holds at least preamble_size(head) bytes. Refuses a text longer than
// max_text_size.
std::size_t header_size(byte_span head);

struct header {
  element_type type;
  std::vector<std::uint64_t> shape;  // as the header says: any rank, 0 extents included
  bool fortran_order = false;
};

// Parses a whole header, header_size(head) bytes: a Python dict literal with exactly the keys
// 'descr', 'fortran_order' and 'shape', only blanks after it.
header parse_header(byte_span head);

// A version 1.0 header of a C-order little-endian `shape` array, padded with blanks to a
// multiple of 64 bytes (the values then start aligned, as NumPy writes them).
std::vector<std::byte> encode_header(const ndzip::array_shape& shape);

}  // namespace ndzip_cli::npy
