#pragma once
// Whole-file input and all-or-nothing output. "-" names standard input / standard output.
// Every failure throws std::runtime_error naming the file and the system's reason (strerror).

#include <string>
#include <vector>

#include "bytes.hpp"

namespace ndzip_cli {

// "'path'", or "standard input" / "standard output" for "-", for messages.
std::string input_name(const std::string& path);
std::string output_name(const std::string& path);

// Reads all of `path` (standard input for "-").
byte_buffer read_input(const std::string& path);

// Fails early, before any work is done, if `path` exists (or, for "-", if standard output is a
// terminal) and `overwrite` is false. write_output checks again when it commits.
void check_output_target(const std::string& path, bool overwrite);

// Writes the concatenation of `pieces` to `path`. For "-", to standard output (call this only
// once the whole result is known). Otherwise to a new temporary file `path`.tmp.XXXXXX in the
// same directory, which is synced, closed and then renamed onto `path`; without `overwrite` an
// existing `path` is never replaced. On failure the temporary file is removed and `path` is
// left as it was.
void write_output(const std::string& path, const std::vector<byte_span>& pieces, bool overwrite);

}  // namespace ndzip_cli
