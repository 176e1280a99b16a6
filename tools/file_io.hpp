// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Bounded input and all-or-nothing output. "-" names standard input / standard output.
// Every failure throws std::runtime_error naming the file and the system's reason (strerror).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bytes.hpp"

namespace ndzip_cli {

// Told how many more bytes were read or written, as they are (for the progress bar); may be empty.
using progress_fn = std::function<void(std::size_t)>;

// "'path'", or "standard input" / "standard output" for "-", for messages.
std::string input_name(const std::string& path);
std::string output_name(const std::string& path);

// Whether the file name `path` ends in `suffix` (".ndz", ".npy").
bool ends_with(const std::string& path, std::string_view suffix);

// A regular file's bytes mapped read-only (mmap), unmapped when this is destroyed: the system
// reads each page from the file only when it is first touched, so that a reader of part of the
// file reads that part (and the system's read-ahead around it).
class mapped_bytes {
 public:
  mapped_bytes(void* base, std::size_t length, std::size_t offset, std::size_t size)
      : m_base(base), m_length(length), m_offset(offset), m_size(size) {}
  ~mapped_bytes();
  mapped_bytes(const mapped_bytes&) = delete;
  mapped_bytes& operator=(const mapped_bytes&) = delete;

  byte_span bytes() const {
    return byte_span(static_cast<const std::byte*>(m_base) + m_offset, m_size);
  }
  // How the bytes will be read (madvise), that the system reads ahead accordingly: in order, all
  // of them; here and there (no read-ahead around what is touched, which is 8 MiB where a disk's
  // read_ahead_kb says so); and soon, the `size` bytes from `offset` on (read ahead now). Only
  // advice: a failure is ignored.
  void advise_sequential() const;
  void advise_random() const;
  void will_need(std::uint64_t offset, std::uint64_t size) const;

 private:
  void* m_base;
  std::size_t m_length, m_offset, m_size;
};

// An open input: a file, a pipe, a device, or standard input for "-". Nothing is read unless
// asked for, and never more than asked for, so that an endless input (/dev/zero, a pipe) costs
// no more than what the caller expects to find in it.
class input_file {
 public:
  explicit input_file(const std::string& path);  // refuses a directory
  ~input_file();
  input_file(const input_file&) = delete;
  input_file& operator=(const input_file&) = delete;

  // input_name(path).
  const std::string& name() const { return m_name; }

  // How many bytes a regular file held from where reading starts when it was opened; nothing for
  // a pipe, a device or a terminal, whose length is unknown until they end.
  std::optional<std::uint64_t> regular_size() const { return m_regular_size; }

  // Appends to `data` until it holds `size` bytes or the input ends; reads nothing beyond.
  void read_up_to(byte_buffer& data, std::size_t size, const progress_fn& progress = {});

  // Reads and drops up to `size` bytes (a part of a pipe that is not needed); returns how many
  // there were before the input ended.
  std::uint64_t skip(std::uint64_t size, const progress_fn& progress = {});

  // A regular file only (regular_size() known): `size` bytes from `offset` on (counted from
  // where reading started when it was opened) into `data`, or fewer where the file ends; the
  // position of read_up_to is not moved.
  void read_at(std::uint64_t offset, std::size_t size, byte_buffer& data);

  // A regular file only, of at least one byte: its regular_size() bytes from where reading
  // started, mapped read-only; the position of read_up_to is not moved. (A file cut shorter
  // while it is mapped ends the process with SIGBUS where its lost pages are touched.)
  std::unique_ptr<mapped_bytes> map() const;

  // Advises the system that the input is read once, from start to end (posix_fadvise): larger
  // read-ahead; nothing for a pipe.
  void advise_sequential();

 private:
  std::size_t next_capacity(std::size_t used, std::size_t size) const;

  std::string m_name;
  int m_fd = -1;
  bool m_owned = false;  // false for standard input, which stays open
  std::optional<std::uint64_t> m_regular_size;
  std::uint64_t m_start = 0;  // a regular file's offset when it was opened
};

// The size of the regular file `path` (following links), for a progress bar; nothing for "-", a
// pipe or device, or a path that cannot be examined (reading it reports why).
std::optional<std::uint64_t> regular_file_size(const std::string& path);

// Fails, before any work is done, if `in` and `out` are the same regular file (also through a
// hard or symbolic link, or standard input/output redirected from/to it): the output would
// replace or extend the input. A device or FIFO on both sides (say /dev/null) is no such harm.
void check_distinct_files(const std::string& in, const std::string& out);

// Fails early, before any work is done, if `path` cannot be an output (a directory, a block
// device, a socket), or if it is an existing regular file (or a symbolic link) and `overwrite`
// is false, or, for "-", if standard output is a terminal and `overwrite` is false. A character
// device or a FIFO is accepted either way. write_output checks again when it commits.
void check_output_target(const std::string& path, bool overwrite);

// --rm: fails, before any work is done, unless the input `in` ("-" is never removed) would be
// removed only after `out` is written: not if `out` is standard output, a device or a FIFO,
// which do not keep what they are given.
void check_input_removable(const std::string& in, const std::string& out);

// Where write_output left the data.
enum class output_kept {
  synced_file,  // in a regular file, complete and synced, under its name
  passed_on,    // to standard output, a device or a FIFO: nothing says it is kept
};

// An output written piece by piece, all or nothing where it can be (write_output says how):
// standard output for "-", a character device or FIFO written in place, or a new temporary file
// beside `path` that commit() syncs and renames onto it; destroyed before commit(), it removes
// the temporary file (a device or standard output keeps what it was given: passed_on()).
class output_stream {
 public:
  // Opens the output (check_output_target was called before): the temporary file is created
  // here, so that a failure before the first byte leaves nothing behind but costs nothing.
  output_stream(const std::string& path, bool overwrite);
  ~output_stream();
  output_stream(const output_stream&) = delete;
  output_stream& operator=(const output_stream&) = delete;

  void write(byte_span bytes, const progress_fn& progress = {});
  // Ends the output (the file synced and renamed, the device closed); returns where the bytes
  // were left.
  output_kept commit();

  // The bytes written so far.
  std::uint64_t written() const { return m_written; }
  // Whether those bytes left already (standard output, a device or FIFO): after a failure they
  // stay, incomplete, where they went.
  bool passes_on() const;
  // output_name(path).
  std::string name() const;

  struct impl;

 private:
  std::unique_ptr<impl> m_impl;
  std::uint64_t m_written = 0;
};

// Writes the concatenation of `pieces` to `path` (through an output_stream):
// - "-": standard output (call this only once the whole result is known);
// - an existing character device or FIFO (/dev/null, a named pipe): written to in place, never
//   created, truncated or replaced; a write error is reported, but what was written stays;
// - otherwise a new temporary file `path`.tmp.<pid>.<random> in the same directory
//   (durable_file.hpp), which is synced, closed and then renamed or linked onto `path`, after
//   which the directory is synced so that the new name survives a crash. Without `overwrite` an existing `path` is never replaced; with it,
//   only a regular file or a symbolic link is. On failure the temporary file is removed and
//   `path` is left as it was; only a failure to sync the directory comes after `path` is in
//   place (the message says so).
// Returns where the data was left.
output_kept write_output(const std::string& path, const std::vector<byte_span>& pieces,
                         bool overwrite, const progress_fn& progress = {});

// Removes the input file `in` (--rm) once its output `out` is complete, which write_output said
// is `kept`: fails, keeping `in`, unless that is a synced regular file. "-" is left alone.
void remove_input(const std::string& in, const std::string& out, output_kept kept);

}  // namespace ndzip_cli
