// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Byte buffers and read-only views of them, as passed between the tool's parts.

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace ndzip_cli {

// std::allocator, except that resize() leaves new bytes uninitialized: a buffer about to be
// overwritten (read into, or the codec's output of up to its size bound) is then not written
// twice, and the pages of its unused tail are never touched, so they cost no memory.
template <class T>
struct uninitialized_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = uninitialized_allocator<U>;
  };
  using std::allocator<T>::allocator;

  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using byte_buffer = std::vector<std::byte, uninitialized_allocator<std::byte>>;

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
