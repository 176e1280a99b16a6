// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Exceptions thrown by the ndzip API. Misuse of the API (wrong view shapes or layouts) throws
// std::invalid_argument; everything data-dependent derives from ndzip::error. Exported, so that
// one type identity holds across shared objects (a catch in the application sees the library's
// throw).

#include <stdexcept>
#include <string>

#include "ndzip/export.hpp"

namespace ndzip {

class NDZIP_EXPORT error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A compressed stream is inconsistent with the extents it is decoded for, truncated or damaged.
class NDZIP_EXPORT stream_error : public error {
 public:
  using error::error;
};

// An output buffer is too small for what has to be written into it.
class NDZIP_EXPORT capacity_error : public error {
 public:
  using error::error;
};

// A frame (ndzip/frame_format.hpp) is truncated or damaged, has an unknown version, or holds an
// array of another element type or other extents than the View it is decoded into.
class NDZIP_EXPORT frame_error : public error {
 public:
  using error::error;
};

}  // namespace ndzip
