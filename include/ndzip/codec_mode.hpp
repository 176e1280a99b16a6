// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The codec's modes: the original ndzip stream (the default, byte for byte the stream of the
// original ndzip), or the high-ratio stream (docs/FORMAT.md, "The high-ratio stream": smaller,
// at a fraction of the speed; docs/PERFORMANCE.md has both). A frame records the mode; a raw
// stream does not, so its reader names the mode it was written in.

#include <cstddef>
#include <cstdint>

namespace ndzip {

enum class codec_mode : std::uint8_t { ndzip = 0, high_ratio = 1 };

// The high-ratio stream's header is this many bytes; a stream that coding would not shrink
// holds the default ndzip stream behind it.
inline constexpr std::size_t high_ratio_header_bytes = 16;

// A high-ratio stream must start at a multiple of this many bytes.
inline constexpr std::size_t high_ratio_stream_alignment = 8;

}  // namespace ndzip
