// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CPU peer codecs for ndzip-bench: one class per library family, each compiled only when
// perf_tests/peers.cmake found the library (NDZIP_HAVE_<FAMILY>). All run single-threaded and
// lossless; every library return code is checked and turned into std::runtime_error.

#include "peers.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <stdexcept>
#include <utility>

#ifdef NDZIP_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef NDZIP_HAVE_LZ4
#include <lz4.h>
#endif
#ifdef NDZIP_HAVE_BLOSC
#include <blosc.h>
#endif
#ifdef NDZIP_HAVE_FPZIP
#include <fpzip.h>
#endif
#ifdef NDZIP_HAVE_ZFP
#include <zfp.h>
#endif

namespace ndzip::perf {
namespace {

[[noreturn]] void fail(const std::string& codec, const std::string& what) {
  throw std::runtime_error(codec + ": " + what);
}

[[maybe_unused]] std::size_t element_size(const peer_input& in) {
  return in.is_double ? sizeof(double) : sizeof(float);
}

// Checks that the extents describe exactly in.bytes bytes (1 to 3 dimensions).
[[maybe_unused]] void check_shape(const peer_input& in, const std::string& codec) {
  if (in.extents.empty() || in.extents.size() > 3) {
    fail(codec, "expected 1 to 3 extents, got " + std::to_string(in.extents.size()));
  }
  std::size_t count = 1;
  for (auto e : in.extents) count *= e;
  if (count * element_size(in) != in.bytes) {
    fail(codec, "extents describe " + std::to_string(count * element_size(in)) +
                    " bytes, input has " + std::to_string(in.bytes));
  }
}

[[maybe_unused]] void check_decompressed_size(const std::string& codec, std::size_t got,
                                              std::size_t expected) {
  if (got != expected) {
    fail(codec,
         "decompressed " + std::to_string(got) + " bytes, expected " + std::to_string(expected));
  }
}

// The line available_peers() reports for a family that this build does not have.
[[maybe_unused]] std::string not_built(const char* peers, const char* library,
                                       const char* package) {
  return std::string(peers) + ": not built (" + library +
         " not found at configure time (Debian package " + package +
         "), or disabled by NDZIP_PEERS_DISABLE)";
}

// ---------------------------------------------------------------------------------------------
#ifdef NDZIP_HAVE_ZSTD
// zstd at a given level, one-shot API (a fresh context per call, as ZSTD_compress does).
class zstd_codec final : public peer_codec {
 public:
  explicit zstd_codec(int level) : m_level(level) {}

  std::string name() const override { return "zstd-" + std::to_string(m_level); }

  void compress(const peer_input& in, std::vector<std::byte>& out) const override {
    const std::size_t bound = ZSTD_compressBound(in.bytes);
    if (ZSTD_isError(bound)) fail(name(), ZSTD_getErrorName(bound));
    out.resize(bound);
    const std::size_t n = ZSTD_compress(out.data(), out.size(), in.data, in.bytes, m_level);
    if (ZSTD_isError(n)) fail(name(), ZSTD_getErrorName(n));
    out.resize(n);
  }

  void decompress(const peer_input& in, const std::vector<std::byte>& stream,
                  void* out) const override {
    const std::size_t n = ZSTD_decompress(out, in.bytes, stream.data(), stream.size());
    if (ZSTD_isError(n)) fail(name(), ZSTD_getErrorName(n));
    check_decompressed_size(name(), n, in.bytes);
  }

 private:
  int m_level;
};
#endif

// ---------------------------------------------------------------------------------------------
#ifdef NDZIP_HAVE_LZ4
// LZ4 block format, default (fast, acceleration 1) mode. Sizes are int in LZ4's API.
class lz4_codec final : public peer_codec {
 public:
  std::string name() const override { return "lz4"; }

  void compress(const peer_input& in, std::vector<std::byte>& out) const override {
    if (in.bytes > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE)) {
      fail(name(), "input of " + std::to_string(in.bytes) + " bytes exceeds LZ4_MAX_INPUT_SIZE");
    }
    const int bound = LZ4_compressBound(static_cast<int>(in.bytes));
    if (bound <= 0) fail(name(), "LZ4_compressBound failed");
    out.resize(static_cast<std::size_t>(bound));
    const int n =
        LZ4_compress_default(static_cast<const char*>(in.data), reinterpret_cast<char*>(out.data()),
                             static_cast<int>(in.bytes), bound);
    if (n <= 0) fail(name(), "LZ4_compress_default failed (returned " + std::to_string(n) + ")");
    out.resize(static_cast<std::size_t>(n));
  }

  void decompress(const peer_input& in, const std::vector<std::byte>& stream,
                  void* out) const override {
    if (stream.size() > static_cast<std::size_t>(INT_MAX) ||
        in.bytes > static_cast<std::size_t>(INT_MAX)) {
      fail(name(), "buffer larger than INT_MAX bytes");
    }
    const int n =
        LZ4_decompress_safe(reinterpret_cast<const char*>(stream.data()), static_cast<char*>(out),
                            static_cast<int>(stream.size()), static_cast<int>(in.bytes));
    if (n < 0) {
      fail(name(), "malformed stream (LZ4_decompress_safe returned " + std::to_string(n) + ")");
    }
    check_decompressed_size(name(), static_cast<std::size_t>(n), in.bytes);
  }
};
#endif

// ---------------------------------------------------------------------------------------------
#ifdef NDZIP_HAVE_BLOSC
// Blosc 1: shuffle filter (byte or bit) x inner codec, typesize = element size, clevel 5,
// automatic block size, 1 internal thread. The _ctx functions need no blosc_init().
class blosc_codec final : public peer_codec {
 public:
  static constexpr int clevel = 5;

  blosc_codec(int shuffle, std::string inner) : m_shuffle(shuffle), m_inner(std::move(inner)) {}

  std::string name() const override {
    return std::string("blosc-") + (m_shuffle == BLOSC_BITSHUFFLE ? "bitshuffle" : "shuffle") +
           "-" + m_inner;
  }

  void compress(const peer_input& in, std::vector<std::byte>& out) const override {
    if (in.bytes > static_cast<std::size_t>(BLOSC_MAX_BUFFERSIZE)) {
      fail(name(), "input of " + std::to_string(in.bytes) + " bytes exceeds BLOSC_MAX_BUFFERSIZE");
    }
    out.resize(in.bytes + BLOSC_MAX_OVERHEAD);
    const int n =
        blosc_compress_ctx(clevel, m_shuffle, element_size(in), in.bytes, in.data, out.data(),
                           out.size(), m_inner.c_str(), 0 /* automatic block size */, 1);
    if (n == 0) fail(name(), "output buffer too small (blosc_compress_ctx returned 0)");
    if (n < 0) fail(name(), "blosc_compress_ctx failed with code " + std::to_string(n));
    out.resize(static_cast<std::size_t>(n));
  }

  void decompress(const peer_input& in, const std::vector<std::byte>& stream,
                  void* out) const override {
    std::size_t nbytes = 0;
    if (blosc_cbuffer_validate(stream.data(), stream.size(), &nbytes) != 0) {
      fail(name(), "invalid stream (blosc_cbuffer_validate failed)");
    }
    check_decompressed_size(name(), nbytes, in.bytes);
    const int n = blosc_decompress_ctx(stream.data(), out, in.bytes, 1);
    if (n < 0) fail(name(), "blosc_decompress_ctx failed with code " + std::to_string(n));
    check_decompressed_size(name(), static_cast<std::size_t>(n), in.bytes);
  }

 private:
  int m_shuffle;
  std::string m_inner;
};
#endif

// ---------------------------------------------------------------------------------------------
#ifdef NDZIP_HAVE_FPZIP
// fpzip, lossless (precision 0 = full), with its header so the stream is self-describing.
// fpzip's nx is the fastest dimension; its dimensions are int. fpzip has no bound function: the
// output buffer is 2 * input + 1 KiB (random data grows by at most a few bits per value), and
// fpzip reports fpzipErrorBufferOverflow rather than writing past it. Reading has no bound:
// fpzip_read_from_buffer takes no size, so a corrupt stream may be read past its end. Errors are
// reported through the global fpzip_errno: not for concurrent use from several threads.
class fpzip_codec final : public peer_codec {
 public:
  std::string name() const override { return "fpzip"; }

  void compress(const peer_input& in, std::vector<std::byte>& out) const override {
    const auto dims = fpzip_dims(in);
    out.resize(2 * in.bytes + 1024);
    fpzip_errno = fpzipSuccess;
    FPZ* fpz = fpzip_write_to_buffer(out.data(), out.size());
    if (fpz == nullptr) fail(name(), "fpzip_write_to_buffer: " + error());
    const std::unique_ptr<FPZ, void (*)(FPZ*)> guard(fpz, fpzip_write_close);
    fpz->type = in.is_double ? FPZIP_TYPE_DOUBLE : FPZIP_TYPE_FLOAT;
    fpz->prec = 0;
    fpz->nx = dims[0];
    fpz->ny = dims[1];
    fpz->nz = dims[2];
    fpz->nf = 1;
    if (!fpzip_write_header(fpz)) fail(name(), "fpzip_write_header: " + error());
    const std::size_t n = fpzip_write(fpz, in.data);
    if (n == 0) fail(name(), "fpzip_write: " + error());
    out.resize(n);
  }

  void decompress(const peer_input& in, const std::vector<std::byte>& stream,
                  void* out) const override {
    const auto dims = fpzip_dims(in);
    fpzip_errno = fpzipSuccess;
    FPZ* fpz = fpzip_read_from_buffer(stream.data());
    if (fpz == nullptr) fail(name(), "fpzip_read_from_buffer: " + error());
    const std::unique_ptr<FPZ, void (*)(FPZ*)> guard(fpz, fpzip_read_close);
    if (!fpzip_read_header(fpz)) fail(name(), "fpzip_read_header: " + error());
    const int type = in.is_double ? FPZIP_TYPE_DOUBLE : FPZIP_TYPE_FLOAT;
    const int full_precision = static_cast<int>(CHAR_BIT * element_size(in));
    if (fpz->type != type || fpz->nx != dims[0] || fpz->ny != dims[1] || fpz->nz != dims[2] ||
        fpz->nf != 1) {
      fail(name(), "stream header does not match the expected type and extents");
    }
    if (fpz->prec != 0 && fpz->prec != full_precision) {
      fail(name(), "stream is lossy (precision " + std::to_string(fpz->prec) + ")");
    }
    const std::size_t n = fpzip_read(fpz, out);
    if (n == 0) fail(name(), "fpzip_read: " + error());
    if (n > stream.size()) fail(name(), "read past the end of the stream");
  }

 private:
  // {nx, ny, nz}, nx fastest.
  std::array<int, 3> fpzip_dims(const peer_input& in) const {
    check_shape(in, name());
    std::array<int, 3> dims{1, 1, 1};
    const std::size_t rank = in.extents.size();
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t e = in.extents[rank - 1 - i];
      if (e > static_cast<std::size_t>(INT_MAX)) {
        fail(name(), "extent " + std::to_string(e) + " exceeds INT_MAX");
      }
      dims[i] = static_cast<int>(e);
    }
    return dims;
  }

  static std::string error() {
    const int e = static_cast<int>(fpzip_errno);
    if (e > 0 && e <= static_cast<int>(fpzipErrorInternal)) return fpzip_errstr[e];
    return "failed (fpzip_errno " + std::to_string(e) + ")";
  }
};
#endif

// ---------------------------------------------------------------------------------------------
#ifdef NDZIP_HAVE_ZFP
// zfp in reversible (lossless) mode, serial execution, with a full header. zfp's nx is the
// fastest dimension, so the extents (slowest first) are passed reversed. zfp_stream_maximum_size
// bounds the output (header included); decoding is bounded only by the header's field size, so a
// corrupt stream may be read past its end.
class zfp_codec final : public peer_codec {
 public:
  std::string name() const override { return "zfp-reversible"; }

  void compress(const peer_input& in, std::vector<std::byte>& out) const override {
    const field_ptr field = make_field(in, const_cast<void*>(in.data));
    const stream_ptr zfp(zfp_stream_open(nullptr), zfp_stream_close);
    if (!zfp) fail(name(), "zfp_stream_open failed");
    if (!zfp_stream_set_execution(zfp.get(), zfp_exec_serial)) {
      fail(name(), "zfp_stream_set_execution(serial) failed");
    }
    zfp_stream_set_reversible(zfp.get());
    if (zfp_stream_compression_mode(zfp.get()) != zfp_mode_reversible) {
      fail(name(), "this zfp does not support reversible mode");
    }
    const std::size_t bound = zfp_stream_maximum_size(zfp.get(), field.get());
    if (bound == 0) fail(name(), "zfp_stream_maximum_size failed");
    out.resize(bound);
    const bits_ptr bits(stream_open(out.data(), out.size()), stream_close);
    if (!bits) fail(name(), "stream_open failed");
    zfp_stream_set_bit_stream(zfp.get(), bits.get());
    zfp_stream_rewind(zfp.get());
    if (zfp_write_header(zfp.get(), field.get(), ZFP_HEADER_FULL) == 0) {
      fail(name(), "zfp_write_header failed");
    }
    const std::size_t n = zfp_compress(zfp.get(), field.get());
    if (n == 0) fail(name(), "zfp_compress failed");
    if (n > out.size()) fail(name(), "zfp_compress overran its maximum size");
    out.resize(n);
  }

  void decompress(const peer_input& in, const std::vector<std::byte>& stream,
                  void* out) const override {
    const field_ptr expected = make_field(in, out);
    const stream_ptr zfp(zfp_stream_open(nullptr), zfp_stream_close);
    if (!zfp) fail(name(), "zfp_stream_open failed");
    // zfp reads through a non-const bitstream but does not write in decompression.
    const bits_ptr bits(stream_open(const_cast<std::byte*>(stream.data()), stream.size()),
                        stream_close);
    if (!bits) fail(name(), "stream_open failed");
    if (!zfp_stream_set_execution(zfp.get(), zfp_exec_serial)) {
      fail(name(), "zfp_stream_set_execution(serial) failed");
    }
    zfp_stream_set_bit_stream(zfp.get(), bits.get());
    zfp_stream_rewind(zfp.get());
    const field_ptr field(zfp_field_alloc(), zfp_field_free);
    if (!field) fail(name(), "zfp_field_alloc failed");
    if (zfp_read_header(zfp.get(), field.get(), ZFP_HEADER_FULL) == 0) {
      fail(name(), "zfp_read_header failed (not a zfp stream or unsupported version)");
    }
    if (zfp_stream_compression_mode(zfp.get()) != zfp_mode_reversible) {
      fail(name(), "stream is not reversible");
    }
    std::size_t got[4] = {}, want[4] = {};
    if (zfp_field_type(field.get()) != zfp_field_type(expected.get()) ||
        zfp_field_dimensionality(field.get()) != zfp_field_dimensionality(expected.get()) ||
        zfp_field_size(field.get(), got) != zfp_field_size(expected.get(), want) ||
        !std::equal(got, got + 4, want)) {
      fail(name(), "stream header does not match the expected type and extents");
    }
    zfp_field_set_pointer(field.get(), out);
    const std::size_t n = zfp_decompress(zfp.get(), field.get());
    if (n == 0) fail(name(), "zfp_decompress failed");
    if (n > stream.size()) fail(name(), "read past the end of the stream");
  }

 private:
  using field_ptr = std::unique_ptr<zfp_field, void (*)(zfp_field*)>;
  using stream_ptr = std::unique_ptr<zfp_stream, void (*)(zfp_stream*)>;
  using bits_ptr = std::unique_ptr<bitstream, void (*)(bitstream*)>;

  field_ptr make_field(const peer_input& in, void* data) const {
    check_shape(in, name());
    const zfp_type type = in.is_double ? zfp_type_double : zfp_type_float;
    const auto& e = in.extents;
    zfp_field* f = nullptr;
    switch (e.size()) {
      case 1: f = zfp_field_1d(data, type, e[0]); break;
      case 2: f = zfp_field_2d(data, type, e[1], e[0]); break;
      default: f = zfp_field_3d(data, type, e[2], e[1], e[0]); break;
    }
    if (f == nullptr) fail(name(), "zfp_field_alloc failed");
    return field_ptr(f, zfp_field_free);
  }
};
#endif

}  // namespace

std::vector<std::unique_ptr<peer_codec>> available_peers(std::vector<std::string>& skipped) {
  std::vector<std::unique_ptr<peer_codec>> peers;
  static_cast<void>(skipped);  // unused when every family is compiled in

#ifdef NDZIP_HAVE_ZSTD
  for (int level : {1, 3, 19}) peers.push_back(std::make_unique<zstd_codec>(level));
#else
  skipped.push_back(not_built("zstd-1/3/19", "libzstd", "libzstd-dev"));
#endif

#ifdef NDZIP_HAVE_LZ4
  peers.push_back(std::make_unique<lz4_codec>());
#else
  skipped.push_back(not_built("lz4", "liblz4", "liblz4-dev"));
#endif

#ifdef NDZIP_HAVE_BLOSC
  for (const char* inner : {BLOSC_ZSTD_COMPNAME, BLOSC_LZ4_COMPNAME}) {
    if (blosc_compname_to_compcode(inner) < 0) {
      skipped.push_back(std::string("blosc-*-") + inner + ": this libblosc was built without " +
                        inner + " (it has: " + blosc_list_compressors() + ")");
      continue;
    }
    for (int shuffle : {BLOSC_SHUFFLE, BLOSC_BITSHUFFLE}) {
      peers.push_back(std::make_unique<blosc_codec>(shuffle, inner));
    }
  }
#else
  skipped.push_back(not_built("blosc-*", "libblosc", "libblosc-dev"));
#endif

#ifdef NDZIP_HAVE_FPZIP
  peers.push_back(std::make_unique<fpzip_codec>());
#else
  skipped.push_back(not_built("fpzip", "libfpzip", "libfpzip-dev"));
#endif

#ifdef NDZIP_HAVE_ZFP
  peers.push_back(std::make_unique<zfp_codec>());
#else
  skipped.push_back(not_built("zfp-reversible", "libzfp", "libzfp-dev"));
#endif

  return peers;
}

}  // namespace ndzip::perf
