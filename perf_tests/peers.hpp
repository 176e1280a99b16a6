// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// CPU "peer" codecs that ndzip-bench runs beside ndzip on the same data: general-purpose byte
// compressors (zstd, LZ4), the Blosc meta-compressor and the floating-point compressors fpzip and
// zfp, all in lossless mode. Each family is compiled in only when CMake found its library
// (perf_tests/peers.cmake); available_peers() lists what this build has.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace ndzip::perf {

struct peer_input {
  const void* data;                  // host memory, C order
  std::size_t bytes;                 // element count * element size
  bool is_double;                    // float otherwise
  std::vector<std::size_t> extents;  // slowest first, 1 to 3 entries
};

class peer_codec {
 public:
  virtual ~peer_codec() = default;
  virtual std::string name() const = 0;  // e.g. "zstd-3", "lz4", "blosc-shuffle-zstd", "fpzip", "zfp-reversible"
  // Compresses into `out` (resized to the compressed size); throws std::runtime_error with the library's message on failure.
  // `out` is first resized to the library's worst-case bound (zero-filling any growth), then
  // shrunk to the compressed size.
  virtual void compress(const peer_input& in, std::vector<std::byte>& out) const = 0;
  // Decompresses `stream` into `out`, which has room for exactly in.bytes bytes; throws std::runtime_error on failure.
  virtual void decompress(const peer_input& in, const std::vector<std::byte>& stream, void* out) const = 0;
};

// The peers this build links, in display order. For each peer family that is not available
// (library not found at configure time), one human-readable line is appended to `skipped`.
std::vector<std::unique_ptr<peer_codec>> available_peers(std::vector<std::string>& skipped);

}  // namespace ndzip::perf
