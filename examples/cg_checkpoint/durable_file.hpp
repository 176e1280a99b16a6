// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// A file written all or nothing. The bytes go to a new temporary file beside the target, which
// is synced and only then renamed over the target (or linked to it, where an existing file must
// be kept), and then the target's directory is synced, so that the new name survives a crash.
// Until the rename the target is untouched: a full disk, an I/O error or an exception leaves
// the previous file whole and no temporary file behind. Every failure throws
// std::runtime_error naming the file and the system's reason (strerror).
//
// POSIX and the standard library only, so that this example can be copied and built on its own
// (it is installed as it is). The project's `ndzip` tool and benchmarks write their files through
// this header too, so that there is one implementation of the protocol to get right.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

namespace durable_file {

// "'path'", as the messages name files.
inline std::string quoted_path(const std::string& path) { return "'" + path + "'"; }

[[noreturn]] inline void system_error(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

// The directory that holds `path`.
inline std::string parent_directory(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A rename or link is a change to the directory, not to the file: until the directory is synced
// too, a crash can lose the new name although the data was synced. `path` is the file just
// renamed or linked into place.
inline void sync_directory_of(const std::string& path) {
  const std::string dir = parent_directory(path);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  // EINVAL: a file system that cannot sync directories, so there is nothing more to wait for.
  const bool synced = fd >= 0 && (::fsync(fd) == 0 || errno == EINVAL);
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!synced)
    system_error(quoted_path(path) + " was written, but its directory " + quoted_path(dir) +
                     " could not be synced, so the new name may not survive a crash",
                 err);
}

// A new file beside its target that replaces the target only when commit_replacing() or
// commit_unless_exists() succeeds; destroyed before that, it removes itself.
//
// Its name is the target's with ".tmp.<pid>.<8 hex digits>" appended, the target's name
// shortened (at a UTF-8 character boundary) where the whole would be longer than the directory
// allows, so that a target whose name has the longest legal length can still be written. It is
// created with O_EXCL: a file or a symbolic link already there under that name is never opened
// (another name is tried), so no planted link is written through and two processes writing the
// same target never share a temporary file. Its mode is what a new file normally gets (0666
// less the umask).
class replacement {
 public:
  // `on_name`, if given, is told the temporary file's name once, before the file is created, as
  // a C string that stays in place as long as this object lives (another name tried is written
  // over it): a signal handler told it can remove the file as soon as it exists.
  explicit replacement(std::string target,
                       const std::function<void(const char*)>& on_name = {})
      : m_target(std::move(target)) {
    char suffix[40];
    std::snprintf(suffix, sizeof suffix, ".tmp.%ld.00000000", static_cast<long>(::getpid()));
    m_path = shortened_target(std::strlen(suffix)) + suffix;
    const std::size_t random_at = m_path.size() - 8;
    if (on_name) on_name(m_path.c_str());
    std::random_device entropy;
    for (int attempt = 0; attempt < 64 && m_fd < 0; ++attempt) {
      char random[9];
      std::snprintf(random, sizeof random, "%08x", static_cast<unsigned>(entropy()));
      std::memcpy(&m_path[random_at], random, 8);  // in place: the C string does not move
      m_fd = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (m_fd < 0 && errno != EEXIST) break;
    }
    if (m_fd < 0)
      system_error("cannot create a temporary file " + quoted_path(m_path) + " for " +
                       quoted_path(m_target),
                   errno);
    m_temporary_exists = true;
  }

  ~replacement() { discard(); }

  replacement(const replacement&) = delete;
  replacement& operator=(const replacement&) = delete;

  const std::string& target() const { return m_target; }
  const std::string& temporary_path() const { return m_path; }

  // Appends `size` bytes; all of them, or an error (ENOSPC: "No space left on device").
  void write(const void* data, std::size_t size) {
    const auto* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(m_fd, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot write", errno);
      p += n;
      size -= static_cast<std::size_t>(n);
    }
  }
  void write(std::string_view text) { write(text.data(), text.size()); }

  // Closes and removes the temporary file now, unless it was committed; the target is left as
  // it was. (The destructor does this too.)
  void discard() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    if (m_temporary_exists) ::unlink(m_path.c_str());
    m_temporary_exists = false;
  }

  // Syncs the file and renames it over the target, whatever is there (a directory refuses).
  void commit_replacing() {
    sync_and_close();
    if (::rename(m_path.c_str(), m_target.c_str()) != 0) fail_to_target("cannot rename", errno);
    m_temporary_exists = false;
    sync_directory_of(m_target);
  }

  // Syncs the file and links it to the target, which link() never replaces: false, the
  // temporary file removed, if the target exists (also one that appeared since it was checked).
  // A file system without hard links gets a check and a rename instead.
  bool commit_unless_exists() {
    sync_and_close();
    if (::link(m_path.c_str(), m_target.c_str()) == 0) {
      m_temporary_exists = false;
      ::unlink(m_path.c_str());
    } else if (errno == EEXIST) {
      return false;
    } else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == ENOSYS) {
      struct stat st;
      if (::lstat(m_target.c_str(), &st) == 0) return false;
      if (::rename(m_path.c_str(), m_target.c_str()) != 0)
        fail_to_target("cannot rename", errno);
      m_temporary_exists = false;
    } else {
      fail_to_target("cannot link", errno);
    }
    sync_directory_of(m_target);
    return true;
  }

 private:
  void sync_and_close() {
    if (::fsync(m_fd) != 0) fail("cannot sync", errno);
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) fail("cannot close", errno);
  }

  [[noreturn]] void fail(const std::string& what, int err) const {
    system_error(what + " " + quoted_path(m_path), err);
  }
  [[noreturn]] void fail_to_target(const std::string& what, int err) const {
    system_error(what + " " + quoted_path(m_path) + " to " + quoted_path(m_target), err);
  }

  // The target's path, its name cut where the name and a suffix of `suffix` bytes would not fit
  // the directory's limit on names.
  std::string shortened_target(std::size_t suffix) const {
    const std::size_t slash = m_target.find_last_of('/');
    const std::size_t name_start = slash == std::string::npos ? 0 : slash + 1;
    const long dir_name_max = ::pathconf(parent_directory(m_target).c_str(), _PC_NAME_MAX);
    const std::size_t name_max =
        dir_name_max > 0 ? static_cast<std::size_t>(dir_name_max) : NAME_MAX;
    std::size_t name_end = m_target.size();
    if (name_end - name_start + suffix > name_max) {
      name_end = name_start + (name_max > suffix ? name_max - suffix : 0);
      const auto continuation = [&](std::size_t i) {
        return (static_cast<unsigned char>(m_target[i]) & 0xC0) == 0x80;
      };
      while (name_end > name_start && continuation(name_end)) --name_end;
    }
    return m_target.substr(0, name_end);
  }

  std::string m_target;
  std::string m_path;  // the temporary file's name; its characters change only in place
  int m_fd = -1;
  bool m_temporary_exists = false;  // ours to remove: created, neither committed nor discarded
};

}  // namespace durable_file
