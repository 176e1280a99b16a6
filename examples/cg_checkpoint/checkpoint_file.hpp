// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The example's checkpoint file: the solver's state as four sections, each an ndzip frame (so
// each is self-describing and checksummed; ndzip/frame_format.hpp), or, for comparison, the raw
// doubles. All integers little-endian:
//
//   offset  size  field
//        0     8  magic "NDZCGCK1"
//        8     8  storage: 0 = ndzip frames, 1 = raw doubles (no checksum)
//       16     8  section count: 4
//       24     -  4 x (u64 byte length, the bytes, zero padding to a multiple of 8)
//
// The sections: the scalars (a 1-D array of 4 doubles: iteration, n, rho = r.r, |b|), then x, r
// and p (n^3 doubles each, a 3-D n x n x n grid in the frames). A file is written whole to
// FILE.tmp, synced and renamed over FILE, so a crash leaves the previous checkpoint intact.

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace cg_example {

enum class storage : std::uint64_t { ndzip = 0, raw = 1 };

inline constexpr char checkpoint_magic[8] = {'N', 'D', 'Z', 'C', 'G', 'C', 'K', '1'};
inline constexpr std::size_t checkpoint_sections = 4;

struct byte_range {
  const std::byte* data = nullptr;
  std::size_t size = 0;
};

// Writes the checkpoint atomically (FILE.tmp, fsync, rename) and returns its size; each section
// is the concatenation of its pieces (a frame's header and its stream). std::runtime_error
// naming the path and the system's reason on any failure, the previous FILE then untouched.
inline std::size_t write_checkpoint_file(const std::string& path, storage kind,
                                         const std::vector<std::vector<byte_range>>& sections) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + tmp + ": " + std::strerror(errno));
  const auto fail = [&](const char* what) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    throw std::runtime_error(std::string("cannot ") + what + " " + tmp + ": " + reason);
  };
  std::size_t written = 0;
  const auto put = [&](const void* data, std::size_t size) {
    written += size;
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("write");
      p += n;
      size -= static_cast<std::size_t>(n);
    }
  };
  const auto put_u64 = [&](std::uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    put(b, 8);
  };
  put(checkpoint_magic, sizeof checkpoint_magic);
  put_u64(static_cast<std::uint64_t>(kind));
  put_u64(sections.size());
  for (const auto& pieces : sections) {
    std::size_t size = 0;
    for (const auto& piece : pieces) size += piece.size;
    put_u64(size);
    for (const auto& piece : pieces) put(piece.data, piece.size);
    const char zeros[8] = {};
    put(zeros, (8 - size % 8) % 8);
  }
  if (::fsync(fd) != 0) fail("sync");
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot close " + tmp + ": " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + reason);
  }
  return written;
}

// A checkpoint file read whole and its sections located (not yet checked beyond the layout).
struct checkpoint_file {
  std::vector<std::byte> bytes;
  storage kind = storage::ndzip;
  std::vector<byte_range> sections;
};

// Reads FILE and checks its layout: std::runtime_error saying what is wrong otherwise.
inline checkpoint_file read_checkpoint_file(const std::string& path) {
  checkpoint_file file;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  char chunk[1 << 16];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;)
    file.bytes.insert(file.bytes.end(), reinterpret_cast<std::byte*>(chunk),
                      reinterpret_cast<std::byte*>(chunk) + n);
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) throw std::runtime_error("cannot read " + path);

  const auto bad = [&](const std::string& what) {
    return std::runtime_error(path + " is not a usable checkpoint: " + what);
  };
  std::size_t at = 0;
  const auto get_u64 = [&]() {
    if (file.bytes.size() - at < 8) throw bad("truncated at byte " + std::to_string(at));
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= std::uint64_t{std::to_integer<unsigned char>(file.bytes[at + i])} << (8 * i);
    at += 8;
    return v;
  };
  if (file.bytes.size() < 8 || std::memcmp(file.bytes.data(), checkpoint_magic, 8) != 0)
    throw bad("it does not start with \"NDZCGCK1\"");
  at = 8;
  const std::uint64_t kind = get_u64();
  if (kind > 1) throw bad("unknown storage " + std::to_string(kind));
  file.kind = static_cast<storage>(kind);
  const std::uint64_t count = get_u64();
  if (count != checkpoint_sections)
    throw bad(std::to_string(count) + " sections, not " + std::to_string(checkpoint_sections));
  for (std::uint64_t s = 0; s < count; ++s) {
    const std::uint64_t size = get_u64();
    const std::uint64_t padded = size + (8 - size % 8) % 8;
    if (size > file.bytes.size() - at || padded > file.bytes.size() - at)
      throw bad("section " + std::to_string(s) + " of " + std::to_string(size) +
                " bytes runs past the end of the file");
    file.sections.push_back({file.bytes.data() + at, static_cast<std::size_t>(size)});
    at += padded;
  }
  if (at != file.bytes.size())
    throw bad(std::to_string(file.bytes.size() - at) + " bytes after the last section");
  return file;
}

}  // namespace cg_example
