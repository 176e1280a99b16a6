// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The codec's modes: the original ndzip stream (the default, byte for byte the stream of the
// original ndzip), or the high-ratio stream (docs/FORMAT.md, "The high-ratio stream": smaller,
// at a fraction of the speed; docs/PERFORMANCE.md has both). A frame records the mode; a raw
// stream does not, so its reader names the mode it was written in.
//
// Every mode is listed once, in NDZIP_FOR_EACH_CODEC_MODE; its name (the CLI, Python, numcodecs
// and HDF5 spell it so), its code (the byte a frame and the HDF5 filter store) and what a caller
// must know of its stream before running it (header bytes, alignment) are here, and its codec is
// an engine in core/ (core/engine.hpp says how a mode is added).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// F(enumerator, code, name) for every mode, the default first. The code is stored in frames and
// HDF5 filter parameters: a mode keeps its code forever.
#define NDZIP_FOR_EACH_CODEC_MODE(F) \
  F(ndzip, 0, "ndzip")               \
  F(high_ratio, 1, "high_ratio")

namespace ndzip {

enum class codec_mode : std::uint8_t {
#define NDZIP_CODEC_MODE_ENUMERATOR(mode, code, name) mode = code,
  NDZIP_FOR_EACH_CODEC_MODE(NDZIP_CODEC_MODE_ENUMERATOR)
#undef NDZIP_CODEC_MODE_ENUMERATOR
};

// The mode's name ("ndzip", "high_ratio"), or nullptr for a value that is not a mode.
constexpr const char* codec_mode_name(codec_mode mode) {
  switch (mode) {
#define NDZIP_CODEC_MODE_NAME(mode, code, name) \
  case codec_mode::mode:                        \
    return name;
    NDZIP_FOR_EACH_CODEC_MODE(NDZIP_CODEC_MODE_NAME)
#undef NDZIP_CODEC_MODE_NAME
  }
  return nullptr;
}

// The mode of this name, if there is one.
constexpr std::optional<codec_mode> parse_codec_mode(std::string_view name) {
#define NDZIP_CODEC_MODE_PARSE(mode, code, mode_name) \
  if (name == mode_name) return codec_mode::mode;
  NDZIP_FOR_EACH_CODEC_MODE(NDZIP_CODEC_MODE_PARSE)
#undef NDZIP_CODEC_MODE_PARSE
  return std::nullopt;
}

// The mode stored as `code` (a frame's byte 7, the HDF5 filter's parameter), if there is one.
constexpr std::optional<codec_mode> codec_mode_of_code(unsigned code) {
#define NDZIP_CODEC_MODE_OF_CODE(mode, mode_code, name) \
  if (code == mode_code) return codec_mode::mode;
  NDZIP_FOR_EACH_CODEC_MODE(NDZIP_CODEC_MODE_OF_CODE)
#undef NDZIP_CODEC_MODE_OF_CODE
  return std::nullopt;
}

// "0 = ndzip, 1 = high_ratio": the codes, for a message about a code that is none of them.
inline std::string codec_mode_codes() {
  std::string codes;
#define NDZIP_CODEC_MODE_CODE_TEXT(mode, code, name) \
  codes += (codes.empty() ? "" : ", ") + std::to_string(code) + " = " + name;
  NDZIP_FOR_EACH_CODEC_MODE(NDZIP_CODEC_MODE_CODE_TEXT)
#undef NDZIP_CODEC_MODE_CODE_TEXT
  return codes;
}

// "ndzip, high_ratio": the names, for a message about a name that is none of them.
inline std::string codec_mode_names() {
  std::string names;
#define NDZIP_CODEC_MODE_NAME_TEXT(mode, code, name) \
  names += (names.empty() ? "" : ", ") + std::string(name);
  NDZIP_FOR_EACH_CODEC_MODE(NDZIP_CODEC_MODE_NAME_TEXT)
#undef NDZIP_CODEC_MODE_NAME_TEXT
  return names;
}

// The high-ratio stream's header is this many bytes; a stream that coding would not shrink
// holds the default ndzip stream behind it.
inline constexpr std::size_t high_ratio_header_bytes = 16;

// A high-ratio stream must start at a multiple of this many bytes.
inline constexpr std::size_t high_ratio_stream_alignment = 8;

// The bytes a stream of `mode` holds before (and beyond the bound of) the ndzip stream
// (ndzip/stream_size.hpp has the bounds).
constexpr std::size_t stream_header_bytes(codec_mode mode) {
  return mode == codec_mode::high_ratio ? high_ratio_header_bytes : 0;
}

// A stream of `mode` for elements of type T must start at a multiple of this many bytes.
template <class T>
constexpr std::size_t stream_alignment_of(codec_mode mode) {
  return mode == codec_mode::high_ratio ? high_ratio_stream_alignment : sizeof(T);
}

}  // namespace ndzip
