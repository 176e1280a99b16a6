// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The example's checkpoint file: the solver's state as four sections, each an ndzip frame (so
// each is self-describing and checksummed; ndzip/frame_format.hpp), or, for comparison, the raw
// doubles. All integers little-endian:
//
//   offset  size  field
//        0     8  magic "NDZCGCK2"
//        8     8  storage: 0 = ndzip frames, 1 = raw doubles (no checksum)
//       16     8  section count: 4
//       24     -  4 x (8-byte role name, u64 byte length, the bytes, zero padding to a multiple
//                 of 8)
//
// The sections, in this order and named so (ASCII, zero-padded to 8 bytes): "scalars" (a 1-D
// array of 4 doubles: iteration, n, rho = r.r, |b|), then "x", "r" and "p" (n^3 doubles each, a
// 3-D n x n x n grid in the frames). x, r and p have the same type and shape, so nothing else
// would tell them apart: the reader checks each name, and a file whose sections are out of
// place is refused. (Layout NDZCGCK1, without the names, is no longer read.)
//
// A file is written whole to a new temporary file beside FILE, synced and renamed over FILE
// (durable_file.hpp), so a crash or a full disk leaves the previous checkpoint intact. It is
// read piece by piece, never more than the caller says the next piece can hold, so that an
// endless input (/dev/zero, a pipe) or a length the file does not hold costs no more memory
// than a valid checkpoint would.

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "durable_file.hpp"

namespace cg_example {

enum class storage : std::uint64_t { ndzip = 0, raw = 1 };

inline constexpr char checkpoint_magic[8] = {'N', 'D', 'Z', 'C', 'G', 'C', 'K', '2'};
inline constexpr std::size_t checkpoint_sections = 4;
inline constexpr std::array<const char*, checkpoint_sections> section_roles = {"scalars", "x",
                                                                               "r", "p"};

struct byte_range {
  const std::byte* data = nullptr;
  std::size_t size = 0;
};

// Writes the checkpoint atomically (durable_file.hpp: a new temporary file beside FILE, created
// O_EXCL, synced, renamed over FILE, FILE's directory synced) and returns its size; sections[i]
// is the concatenation of its pieces (a frame's header and its stream) and is written under the
// name section_roles[i]. std::runtime_error naming the file and the system's reason on any
// failure; the temporary file is then removed and the previous FILE is untouched.
inline std::size_t write_checkpoint_file(const std::string& path, storage kind,
                                         const std::vector<std::vector<byte_range>>& sections) {
  if (sections.size() != checkpoint_sections)
    throw std::logic_error("a checkpoint has " + std::to_string(checkpoint_sections) +
                           " sections");
  durable_file::replacement file(path);
  std::size_t written = 0;
  const auto put = [&](const void* data, std::size_t size) {
    file.write(data, size);
    written += size;
  };
  const auto put_u64 = [&](std::uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    put(b, 8);
  };
  put(checkpoint_magic, sizeof checkpoint_magic);
  put_u64(static_cast<std::uint64_t>(kind));
  put_u64(sections.size());
  for (std::size_t s = 0; s < sections.size(); ++s) {
    char name[8] = {};
    std::strncpy(name, section_roles[s], sizeof name);
    put(name, sizeof name);
    std::size_t size = 0;
    for (const auto& piece : sections[s]) size += piece.size;
    put_u64(size);
    for (const auto& piece : sections[s]) put(piece.data, piece.size);
    const char zeros[8] = {};
    put(zeros, (8 - size % 8) % 8);
  }
  file.commit_replacing();
  return written;
}

// Reads a checkpoint file section by section. Every failure throws std::runtime_error naming
// the file: "cannot open/read FILE: <the system's reason>", or "FILE is not a usable
// checkpoint: <what is wrong>".
class checkpoint_reader {
 public:
  // Opens `path`; a directory is refused at once. A FIFO waits here for its writer, as any
  // program reading one does.
  explicit checkpoint_reader(const std::string& path) : m_path(path) {
    m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    struct stat st;
    if (::fstat(m_fd, &st) != 0) fail_read(errno);
    if (S_ISDIR(st.st_mode)) fail_read(EISDIR);
    if (S_ISREG(st.st_mode)) m_file_size = static_cast<std::uint64_t>(st.st_size);
  }
  ~checkpoint_reader() { ::close(m_fd); }
  checkpoint_reader(const checkpoint_reader&) = delete;
  checkpoint_reader& operator=(const checkpoint_reader&) = delete;

  // The first 24 bytes: magic, storage and section count.
  storage read_header() {
    std::byte head[24];
    const std::size_t got = read_up_to(head, sizeof head);
    if (got < 8 || std::memcmp(head, checkpoint_magic, 8) != 0) {
      if (got >= 8 && std::memcmp(head, "NDZCGCK1", 8) == 0)
        throw bad("it has the layout NDZCGCK1 of an earlier version of this example (sections "
                  "without names), no longer read; start the run afresh");
      throw bad("it does not start with \"NDZCGCK2\"");
    }
    if (got < sizeof head) throw bad("truncated at byte " + std::to_string(got));
    const std::uint64_t kind = u64_at(head + 8);
    if (kind > 1) throw bad("unknown storage " + std::to_string(kind));
    const std::uint64_t count = u64_at(head + 16);
    if (count != checkpoint_sections)
      throw bad(std::to_string(count) + " sections, not " + std::to_string(checkpoint_sections));
    return static_cast<storage>(kind);
  }

  // Section `index` (0 to 3), which must be named section_roles[index] and hold at most
  // `max_bytes` (what the section can hold in a valid checkpoint). Its length is checked against
  // both, and against what is left of a regular file, before it is read; from a pipe or a
  // device the bytes are taken as they come, so that what is held follows what arrived.
  // `check_start`, if given, is called with the section's first `start_bytes` bytes (fewer if
  // the section is shorter) and its length before the rest is read: a frame's header says what
  // the frame holds, so a section that cannot be the one expected is refused at its header.
  using start_check = std::function<void(const std::byte* start, std::size_t bytes,
                                         std::uint64_t section_bytes)>;
  std::vector<std::byte> read_section(std::size_t index, std::uint64_t max_bytes,
                                      const start_check& check_start = {},
                                      std::size_t start_bytes = 0) {
    const std::string role = section_roles.at(index);
    std::byte head[16];
    if (read_up_to(head, sizeof head) < sizeof head)
      throw bad("truncated before section " + std::to_string(index) + " (\"" + role + "\")");
    char name[8] = {};
    std::strncpy(name, role.c_str(), sizeof name);
    if (std::memcmp(head, name, sizeof name) != 0)
      throw bad("section " + std::to_string(index) + " is named \"" + printable(head) +
                "\", not \"" + role + "\" (its sections are out of place)");
    const std::uint64_t size = u64_at(head + 8);
    const std::string what = "section " + std::to_string(index) + " (\"" + role + "\") of " +
                             std::to_string(size) + " bytes";
    if (size > max_bytes)
      throw bad(what + " is larger than such a section can be (" + std::to_string(max_bytes) +
                " bytes)");
    const std::uint64_t padding = (8 - size % 8) % 8;
    if (m_file_size && size + padding > *m_file_size - std::min(m_at, *m_file_size))
      throw bad(what + " runs past the end of the file");
    // A regular file holds the bytes (checked above); from a pipe or a device the buffer grows
    // by doubling, from 1 MiB, as the bytes arrive.
    std::vector<std::byte> bytes;
    std::size_t got = 0;
    if (check_start) {
      bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(size, start_bytes)));
      got = read_up_to(bytes.data(), bytes.size());
      if (got < bytes.size()) throw bad(what + " runs past the end of the file");
      check_start(bytes.data(), got, size);
    }
    while (got < size) {
      const std::uint64_t step = m_file_size ? size : std::max<std::uint64_t>(2 * got, 1 << 20);
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(size, step));
      bytes.resize(want);
      got += read_up_to(bytes.data() + got, want - got);
      if (got < want) throw bad(what + " runs past the end of the file");
    }
    std::byte pad[8] = {};
    if (read_up_to(pad, padding) < padding) throw bad(what + " runs past the end of the file");
    for (std::uint64_t i = 0; i < padding; ++i)
      if (pad[i] != std::byte{0}) throw bad("the padding after " + what + " is not zero");
    return bytes;
  }

  // After the last section: the file must end there.
  void expect_end() {
    if (m_file_size && *m_file_size > m_at)
      throw bad(std::to_string(*m_file_size - m_at) + " bytes after the last section");
    std::byte one[1];
    if (read_up_to(one, 1) > 0) throw bad("more bytes after the last section");
  }

  std::runtime_error bad(const std::string& what) const {
    return std::runtime_error(m_path + " is not a usable checkpoint: " + what);
  }

 private:
  [[noreturn]] void fail_read(int err) const {
    throw std::runtime_error("cannot read " + m_path + ": " + std::strerror(err));
  }

  // Reads until `size` bytes are at `out` or the input ends; returns how many it read.
  std::size_t read_up_to(std::byte* out, std::size_t size) {
    std::size_t got = 0;
    while (got < size) {
      const ssize_t n = ::read(m_fd, out + got, size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail_read(errno);
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    m_at += got;
    return got;
  }

  static std::uint64_t u64_at(const std::byte* p) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{std::to_integer<unsigned char>(p[i])} << (8 * i);
    return v;
  }

  // A role name as found, for a message: up to its first zero byte, other bytes as \xNN.
  static std::string printable(const std::byte* name) {
    std::string s;
    for (int i = 0; i < 8 && name[i] != std::byte{0}; ++i) {
      const auto c = std::to_integer<unsigned char>(name[i]);
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
        s += static_cast<char>(c);
      } else {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02x", c);
        s += hex;
      }
    }
    return s;
  }

  std::string m_path;
  int m_fd = -1;
  std::optional<std::uint64_t> m_file_size;  // a regular file's size; unknown for a pipe
  std::uint64_t m_at = 0;                    // bytes read so far
};

}  // namespace cg_example
