// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Byte buffers and read-only views of them, as passed between the tool's parts.

#include <cstddef>
#include <vector>

namespace ndzip_cli {

using byte_buffer = std::vector<std::byte>;

// A read-only view of contiguous bytes (std::span is C++20).
struct byte_span {
  const std::byte* data = nullptr;
  std::size_t size = 0;

  byte_span() = default;
  byte_span(const std::byte* d, std::size_t n) : data(d), size(n) {}
  byte_span(const byte_buffer& b) : data(b.data()), size(b.size()) {}  // NOLINT: implicit view

  // The bytes from `offset` (at most size) to the end.
  byte_span from(std::size_t offset) const {
    return offset < size ? byte_span(data + offset, size - offset) : byte_span(data + size, 0);
  }
};

}  // namespace ndzip_cli
