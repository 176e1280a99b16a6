// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The chunked frame (ndzip/chunked_frame_stream.hpp) a slab at a time, on a backend chosen by
// name, for an array whose element type and rank are known only at run time: what the tool's
// streaming compress and decompress run. Values and records lie in host memory; a backend with
// memory of its own (a GPU) gets each slab copied into a buffer of one slab there.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ndzip/chunked_frame_format.hpp>
#include <ndzip/dynamic.hpp>

#include "bytes.hpp"

namespace ndzip_cli {

// ndzip::chunked_frame_writer behind a run-time shape and backend.
class slab_encoder {
 public:
  // Throws std::invalid_argument for rows out of range or slabs the format cannot hold.
  slab_encoder(const std::string& backend, const ndzip::array_shape& shape,
               std::uint64_t slab_rows, ndzip::codec_mode mode, ndzip::folding folding);
  ~slab_encoder();
  slab_encoder(const slab_encoder&) = delete;
  slab_encoder& operator=(const slab_encoder&) = delete;

  const ndzip::chunked_frame_info& info() const;
  // The header's 64 bytes.
  byte_span header() const;
  // The bytes of slab s's values.
  std::size_t slab_bytes(std::uint64_t s) const;
  // Compresses the next slab's values (slab_bytes of them, in host memory, aligned for the
  // element type); returns its record, valid until the next call.
  byte_span encode(byte_span values);
  // The index and trailer, once every slab is encoded.
  std::vector<std::byte> finish();

  struct impl;

 private:
  std::unique_ptr<impl> m_impl;
};

// ndzip::chunked_frame_reader behind the run-time shape its header gives.
class slab_decoder {
 public:
  // From the frame's first bytes (its 64-byte header): ndzip::frame_error if it is damaged.
  slab_decoder(const std::string& backend, byte_span header);
  ~slab_decoder();
  slab_decoder(const slab_decoder&) = delete;
  slab_decoder& operator=(const slab_decoder&) = delete;

  const ndzip::chunked_frame_info& info() const;
  std::uint64_t next_slab() const;
  std::size_t slab_bytes(std::uint64_t s) const;
  // The next slab's head from the first bytes of its record (check 7; changes nothing).
  ndzip::slab_info read_head(byte_span head) const;
  // Verifies and decodes the next slab's record into `values` (slab_bytes of host memory).
  void decode(byte_span record, std::byte* values);
  // The bytes of the frame's index and trailer.
  std::size_t end_bytes() const;
  // Checks them against the slabs decoded.
  void finish(byte_span end);

  struct impl;

 private:
  std::unique_ptr<impl> m_impl;
};

}  // namespace ndzip_cli
