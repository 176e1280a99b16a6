// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Exceptions thrown by the ndzip API. Misuse of the API (wrong view shapes or layouts) throws
// std::invalid_argument; everything data-dependent derives from ndzip::error.

#include <stdexcept>
#include <string>

namespace ndzip {

class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A compressed stream is inconsistent with the extents it is decoded for, truncated or damaged.
class stream_error : public error {
 public:
  using error::error;
};

// An output buffer is too small for what has to be written into it.
class capacity_error : public error {
 public:
  using error::error;
};

}  // namespace ndzip
