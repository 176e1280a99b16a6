// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "npy_format.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ndzip_cli::npy {

namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw std::runtime_error("not a valid .npy file: " + what);
}

unsigned byte_at(byte_span bytes, std::size_t i) {
  return std::to_integer<unsigned>(bytes.data[i]);
}

// A text from the header for a message: printable ASCII only, and not too long.
std::string quoted(std::string_view text) {
  std::string shown;
  for (const char c : text.substr(0, 40)) shown += c >= ' ' && c <= '~' ? c : '?';
  return "'" + shown + (text.size() > 40 ? "...'" : "'");
}

// Reads the Python literal of a header's dict, token by token. NumPy evaluates it with
// ast.literal_eval; this accepts the subset its writers produce (a string, True/False and a
// tuple of whole numbers as values, Python 2's "L" after a number, blanks and trailing commas
// where Python allows them) and refuses anything else.
class literal_reader {
 public:
  explicit literal_reader(std::string_view text) : m_text(text) {}

  header read_dict() {
    expect('{', "the header does not start with a dict ('{')");
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<std::uint64_t>> shape;
    while (!take('}')) {
      const std::string key = read_string("a key");
      expect(':', "no ':' after the key " + quoted(key));
      if (key == "descr" && !descr) {
        descr = read_string("the value of 'descr'");
      } else if (key == "fortran_order" && !fortran_order) {
        fortran_order = read_bool();
      } else if (key == "shape" && !shape) {
        shape = read_shape();
      } else {
        refuse("the header has " +
               std::string(key == "descr" || key == "fortran_order" || key == "shape"
                               ? "the key " + quoted(key) + " twice"
                               : "an unknown key " + quoted(key)) +
               " (a .npy header holds 'descr', 'fortran_order' and 'shape')");
      }
      if (!take(',')) {
        expect('}', "no ',' or '}' after the value of " + quoted(key));
        break;
      }
    }
    skip_blanks();
    if (m_pos != m_text.size())
      refuse("bytes other than blanks after the header's dict (byte " + std::to_string(m_pos) +
             " of its text): does its length field say more than it holds?");
    if (!descr || !fortran_order || !shape)
      refuse(std::string("the header lacks the key '") +
             (!descr           ? "descr"
              : !fortran_order ? "fortran_order"
                               : "shape") +
             "'");
    return {element_type_of(*descr), *shape, *fortran_order};
  }

 private:
  static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

  void skip_blanks() {
    while (m_pos < m_text.size() && is_blank(m_text[m_pos])) ++m_pos;
  }
  bool take(char c) {
    skip_blanks();
    if (m_pos < m_text.size() && m_text[m_pos] == c) {
      ++m_pos;
      return true;
    }
    return false;
  }
  void expect(char c, const std::string& what) {
    if (!take(c)) refuse(what);
  }
  bool take_word(std::string_view word) {
    skip_blanks();
    if (m_text.substr(m_pos, word.size()) != word) return false;
    m_pos += word.size();
    return true;
  }

  // A quoted string without escapes (none of the keys or dtypes needs one).
  std::string read_string(const std::string& what) {
    skip_blanks();
    const char quote = m_pos < m_text.size() ? m_text[m_pos] : '\0';
    if (quote != '\'' && quote != '"') refuse("no quoted string where " + what + " belongs");
    const std::size_t start = m_pos + 1;
    std::size_t end = start;
    while (end < m_text.size() && m_text[end] != quote && m_text[end] >= ' ' &&
           m_text[end] <= '~' && m_text[end] != '\\')
      ++end;
    if (end == m_text.size() || m_text[end] != quote)
      refuse(what + " is not a plain quoted string");
    m_pos = end + 1;
    return std::string(m_text.substr(start, end - start));
  }

  bool read_bool() {
    if (take_word("True")) return true;
    if (take_word("False")) return false;
    refuse("'fortran_order' is neither True nor False");
  }

  std::uint64_t read_extent() {
    skip_blanks();
    const std::size_t start = m_pos;
    std::uint64_t value = 0;
    while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9') {
      const auto digit = static_cast<std::uint64_t>(m_text[m_pos] - '0');
      if (value > (UINT64_MAX - digit) / 10) refuse("an extent of 'shape' is too large");
      value = value * 10 + digit;
      ++m_pos;
    }
    if (m_pos == start) refuse("'shape' is not a tuple of whole numbers");
    if (m_pos < m_text.size() && m_text[m_pos] == 'L') ++m_pos;  // Python 2's long
    return value;
  }

  // "()", "(5,)", "(3, 4)", "(3, 4,)": a one-element tuple needs its comma, as in Python.
  std::vector<std::uint64_t> read_shape() {
    expect('(', "'shape' is not a tuple");
    std::vector<std::uint64_t> shape;
    bool comma = false;
    while (!take(')')) {
      shape.push_back(read_extent());
      comma = take(',');
      if (!comma) {
        expect(')', "'shape' is not a tuple of whole numbers");
        break;
      }
    }
    if (shape.size() == 1 && !comma) refuse("'shape' is a number in parentheses, not a tuple");
    return shape;
  }

  static element_type element_type_of(const std::string& descr) {
    if (descr == "<f4") return element_type::float32;
    if (descr == "<f8") return element_type::float64;
    if (descr == ">f4" || descr == ">f8")
      throw std::runtime_error("a big-endian float" + std::string(descr == ">f4" ? "32" : "64") +
                               " array (dtype " + quoted(descr) +
                               "); ndzip compresses little-endian values: save a.astype('<f" +
                               descr.back() + "') instead");
    throw std::runtime_error("an array of dtype " + quoted(descr) +
                             "; ndzip compresses little-endian float32 ('<f4') and float64 "
                             "('<f8') arrays");
  }

  std::string_view m_text;
  std::size_t m_pos = 0;
};

}  // namespace

bool starts_with_magic(byte_span head) {
  return head.size >= magic.size() &&
         std::equal(magic.begin(), magic.end(), head.data,
                    [](unsigned char m, std::byte b) { return std::byte{m} == b; });
}

std::size_t preamble_size(byte_span head) {
  const unsigned major = byte_at(head, 6), minor = byte_at(head, 7);
  if (minor != 0 || major < 1 || major > 3)
    refuse("format version " + std::to_string(major) + "." + std::to_string(minor) +
           " (NumPy writes 1.0, 2.0 and 3.0)");
  return major == 1 ? 10 : 12;
}

std::size_t header_size(byte_span head) {
  const std::size_t preamble = preamble_size(head);
  std::size_t text = 0;
  for (std::size_t i = preamble; i-- > version_end;) text = text * 256 + byte_at(head, i);
  if (text > max_text_size)
    refuse("its length field announces a header of " + std::to_string(text) +
           " bytes; a float array's takes about 100, and ndzip reads at most " +
           std::to_string(max_text_size) + ", as numpy.load does");
  return preamble + text;
}

header parse_header(byte_span head) {
  const byte_span text = head.from(preamble_size(head));
  // Version 3.0's UTF-8 and the others' Latin-1 agree on the ASCII that the reader accepts;
  // any other byte is refused by it.
  return literal_reader(std::string_view(reinterpret_cast<const char*>(text.data), text.size))
      .read_dict();
}

std::vector<std::byte> encode_header(const ndzip::array_shape& shape) {
  std::string tuple;
  for (int axis = 0; axis < shape.rank(); ++axis)
    tuple += (tuple.empty() ? "" : ", ") + std::to_string(shape.extent(axis));
  if (shape.rank() == 1) tuple += ',';
  std::string text = std::string("{'descr': '<f") +
                     (shape.type() == element_type::float32 ? "4" : "8") +
                     "', 'fortran_order': False, 'shape': (" + tuple + "), }";
  constexpr std::size_t preamble = 10, align = 64;
  // Blanks and a final newline up to the next multiple of 64 bytes.
  text.append(align - 1 - (preamble + text.size()) % align, ' ');
  text += '\n';
  std::vector<std::byte> bytes;
  for (const unsigned char c : magic) bytes.push_back(std::byte{c});
  bytes.push_back(std::byte{1});
  bytes.push_back(std::byte{0});
  bytes.push_back(static_cast<std::byte>(text.size() & 0xff));
  bytes.push_back(static_cast<std::byte>(text.size() >> 8));
  for (const char c : text) bytes.push_back(static_cast<std::byte>(c));
  return bytes;
}

}  // namespace ndzip_cli::npy
