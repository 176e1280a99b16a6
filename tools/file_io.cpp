// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "file_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace ndzip_cli {

namespace {

constexpr std::size_t read_chunk = std::size_t{1} << 20;
// The most one read() or write() call moves: a progress bar is told about each call.
constexpr std::size_t io_call_max = std::size_t{64} << 20;

[[noreturn]] void system_error(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

void write_all(int fd, byte_span bytes, const std::string& name, const progress_fn& progress) {
  while (bytes.size > 0) {
    const ssize_t n = ::write(fd, bytes.data, std::min(bytes.size, io_call_max));
    if (n < 0) {
      if (errno == EINTR) continue;
      system_error("cannot write " + name, errno);
    }
    bytes = bytes.from(static_cast<std::size_t>(n));
    if (progress) progress(static_cast<std::size_t>(n));
  }
}

// A file descriptor, closed when it goes out of scope. One whose close() can report a write
// error is closed with close_checked() instead.
class unique_fd {
 public:
  explicit unique_fd(int fd) : m_fd(fd) {}
  ~unique_fd() {
    if (m_fd >= 0) ::close(m_fd);
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;

  int get() const { return m_fd; }
  // Closes the descriptor; returns close()'s result (errno set on failure).
  int close_checked() {
    const int fd = m_fd;
    m_fd = -1;
    return ::close(fd);
  }

 private:
  int m_fd;
};

// The file that `path` names, following links, or that the standard stream `std_fd` is for "-";
// nothing if there is none.
std::optional<struct stat> identity(const std::string& path, int std_fd) {
  struct stat st;
  const int rc = path == "-" ? ::fstat(std_fd, &st) : ::stat(path.c_str(), &st);
  if (rc != 0) return std::nullopt;
  return st;
}

[[noreturn]] void refuse_overwrite(const std::string& path) {
  throw std::runtime_error(output_name(path) + " already exists (use -f/--force to overwrite it)");
}

// --rm after an output that may not keep the data.
[[noreturn]] void refuse_removal(const std::string& in, const std::string& out) {
  throw std::runtime_error("--rm: " + input_name(in) + " is kept: its output " + output_name(out) +
                           " is not a regular file that ndzip writes and syncs, so it may not "
                           "keep the data");
}

// What becomes of an output path.
enum class target_kind {
  absent,       // nothing there: the temporary file is renamed to it
  replaceable,  // a regular file, or a symbolic link to one or to nothing: replaced with --force
  device,       // a character device or a FIFO: written to in place, never replaced
};

const char* kind_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Classifies `path`, refusing what can never be an output: replacing a directory, a block
// device or a socket would destroy it, and writing into one is not what a user asks for.
target_kind classify_target(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return target_kind::absent;
    system_error("cannot examine " + output_name(path), errno);
  }
  if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &st) != 0)
    return target_kind::replaceable;  // a link to nothing (reachable)
  if (S_ISREG(st.st_mode)) return target_kind::replaceable;
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return target_kind::device;
  throw std::runtime_error(output_name(path) + " is " + kind_name(st.st_mode) +
                           "; ndzip writes only to regular files, character devices and FIFOs");
}

// Writes `pieces` into the character device or FIFO `path`, as any program writes to /dev/null:
// opened without O_CREAT or O_TRUNC, so that the node itself is never replaced. (Opening a FIFO
// waits for a reader.)
void write_to_device(const std::string& path, const std::vector<byte_span>& pieces,
                     const progress_fn& progress) {
  unique_fd fd(::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) system_error("cannot open " + output_name(path), errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) system_error("cannot examine " + output_name(path), errno);
  if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))  // replaced since it was classified
    throw std::runtime_error(output_name(path) +
                             " is no longer a device or FIFO; nothing was written to it");
  for (const auto& piece : pieces) write_all(fd.get(), piece, output_name(path), progress);
  if (fd.close_checked() != 0) system_error("cannot write " + output_name(path), errno);
}

// The directory that holds `path`.
std::string parent_directory(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A rename or link is a change to the directory, not to the file: until the directory is synced
// too, a crash can lose the new name although the data was synced.
void sync_directory_of(const std::string& path) {
  const std::string dir = parent_directory(path);
  unique_fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  // EINVAL: a file system that cannot sync directories, so there is nothing more to wait for.
  if (fd.get() < 0 || (::fsync(fd.get()) != 0 && errno != EINVAL))
    system_error(output_name(path) + " was written, but its directory '" + dir +
                     "' could not be synced, so the new name may not survive a crash",
                 errno);
}

// The signals whose default action ends the process and that a handler can catch: those sent
// to it (kill, a terminal, a parent, timers, ulimit -t, abort()), the real-time ones included.
// Not the faults of the process itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGSYS, SIGTRAP), which
// belong to debuggers and sanitizers; SIGXFSZ is ignored (main).
std::vector<int> terminating_signals() {
  std::vector<int> signals{SIGHUP,  SIGINT,  SIGQUIT,   SIGTERM, SIGUSR1, SIGUSR2,
                           SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGABRT};
#ifdef SIGPOLL
  signals.push_back(SIGPOLL);
#endif
#ifdef SIGPWR
  signals.push_back(SIGPWR);
#endif
#ifdef SIGSTKFLT
  signals.push_back(SIGSTKFLT);
#endif
#ifdef SIGRTMIN
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) signals.push_back(sig);
#endif
  return signals;
}

// While one lives, every terminating signal first removes the file `path` and then takes its
// default action, so that an interrupted run leaves no temporary file behind and its exit status
// still tells the signal. Only signals whose default action is in force are caught: an ignored
// one (nohup) stays ignored, and a handler of someone else's (a profiler's SIGPROF) stays.
class removal_on_signal {
 public:
  explicit removal_on_signal(const char* path) : m_signals(terminating_signals()) {
    s_path.store(path);
    struct sigaction action = {};
    action.sa_handler = &handler;
    sigemptyset(&action.sa_mask);
    m_old.resize(m_signals.size());
    for (std::size_t i = 0; i < m_signals.size(); ++i) {
      ::sigaction(m_signals[i], nullptr, &m_old[i]);
      if (m_old[i].sa_handler == SIG_DFL) ::sigaction(m_signals[i], &action, nullptr);
    }
  }
  ~removal_on_signal() {
    for (std::size_t i = 0; i < m_signals.size(); ++i)
      ::sigaction(m_signals[i], &m_old[i], nullptr);
    s_path.store(nullptr);
  }
  removal_on_signal(const removal_on_signal&) = delete;
  removal_on_signal& operator=(const removal_on_signal&) = delete;

 private:
  // Only async-signal-safe calls. The signal stays blocked until the handler returns, and then
  // its default action ends the process.
  static void handler(int sig) {
    if (const char* path = s_path.load()) ::unlink(path);
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }

  static inline std::atomic<const char*> s_path{nullptr};  // lock-free, so signal-safe
  std::vector<int> m_signals;
  std::vector<struct sigaction> m_old;
};

// The mkstemp pattern of a temporary file beside `target`: `target`.tmp.XXXXXX, its name
// shortened (at a UTF-8 character boundary) where it would be longer than the directory allows,
// so that an output whose name has the longest legal length can still be written.
std::string temporary_pattern(const std::string& target) {
  constexpr std::string_view suffix = ".tmp.XXXXXX";
  const std::size_t slash = target.find_last_of('/');
  const std::size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  const long dir_name_max = ::pathconf(parent_directory(target).c_str(), _PC_NAME_MAX);
  const std::size_t name_max = dir_name_max > 0 ? static_cast<std::size_t>(dir_name_max) : NAME_MAX;
  std::size_t name_end = target.size();
  if (name_end - name_start + suffix.size() > name_max) {
    name_end = name_start + (name_max > suffix.size() ? name_max - suffix.size() : 0);
    const auto continuation = [&](std::size_t i) {
      return (static_cast<unsigned char>(target[i]) & 0xC0) == 0x80;
    };
    while (name_end > name_start && continuation(name_end)) --name_end;
  }
  return target.substr(0, name_end) + std::string(suffix);
}

// A new file next to its target that disappears again unless commit() succeeds.
class temporary_file {
 public:
  explicit temporary_file(const std::string& target)
      : m_target(target), m_path(temporary_pattern(target)) {
    // The signal handlers go in before the file is created, told the name that mkstemp fills in
    // place, so that a signal which comes as soon as the file exists removes it. (One that comes
    // while mkstemp still tries names finds no file of that name, unless another file has it:
    // a chance of 1 in 62^6 for each such file.)
    m_cleanup.emplace(m_path.c_str());
    m_fd = ::mkstemp(m_path.data());
    if (m_fd < 0) system_error("cannot create a temporary file for " + output_name(target), errno);
    // mkstemp creates the file with mode 0600; give it the mode a new file normally gets.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(m_fd, 0666 & ~mask) != 0) {
      const int err = errno;
      ::close(m_fd);
      ::unlink(m_path.c_str());
      fail("cannot set the mode of", err);
    }
  }

  temporary_file(const temporary_file&) = delete;
  temporary_file& operator=(const temporary_file&) = delete;

  ~temporary_file() {
    if (m_fd >= 0) ::close(m_fd);
    if (!m_committed) ::unlink(m_path.c_str());
  }

  void write(byte_span bytes, const progress_fn& progress) {
    write_all(m_fd, bytes, "'" + m_path + "'", progress);
  }

  void commit(bool overwrite) {
    if (::fsync(m_fd) != 0) fail("cannot sync", errno);
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) fail("cannot close", errno);
    if (overwrite) {
      // --force replaces files, never a device or FIFO that appeared since the first check.
      if (classify_target(m_target) == target_kind::device)
        throw std::runtime_error(output_name(m_target) +
                                 " became a device or FIFO while ndzip ran; not replaced");
      if (::rename(m_path.c_str(), m_target.c_str()) != 0) fail_target("cannot rename", errno);
    } else if (::link(m_path.c_str(), m_target.c_str()) == 0) {
      // link() never replaces an existing file, so a file that appeared meanwhile is kept.
      ::unlink(m_path.c_str());
    } else if (errno == EEXIST) {
      refuse_overwrite(m_target);
    } else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == ENOSYS) {
      // The file system has no hard links: check and rename instead.
      if (classify_target(m_target) != target_kind::absent) refuse_overwrite(m_target);
      if (::rename(m_path.c_str(), m_target.c_str()) != 0) fail_target("cannot rename", errno);
    } else {
      fail_target("cannot link", errno);
    }
    m_committed = true;
    sync_directory_of(m_target);
  }

 private:
  [[noreturn]] void fail(const std::string& what, int err) const {
    system_error(what + " '" + m_path + "'", err);
  }
  [[noreturn]] void fail_target(const std::string& what, int err) const {
    system_error(what + " '" + m_path + "' to " + output_name(m_target), err);
  }

  std::string m_target;
  std::string m_path;  // mkstemp's pattern, then the file's name; never changed after that
  std::optional<removal_on_signal> m_cleanup;  // declared after m_path: destroyed before it
  int m_fd = -1;
  bool m_committed = false;
};

}  // namespace

std::string input_name(const std::string& path) {
  return path == "-" ? "standard input" : "'" + path + "'";
}

std::string output_name(const std::string& path) {
  return path == "-" ? "standard output" : "'" + path + "'";
}

input_file::input_file(const std::string& path) : m_name(input_name(path)) {
  m_owned = path != "-";
  m_fd = m_owned ? ::open(path.c_str(), O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
  if (m_fd < 0) system_error("cannot open " + m_name, errno);
  struct stat st;
  if (::fstat(m_fd, &st) != 0) {
    const int err = errno;
    if (m_owned) ::close(m_fd);
    system_error("cannot examine " + m_name, err);
  }
  if (S_ISDIR(st.st_mode)) {
    if (m_owned) ::close(m_fd);
    system_error("cannot read " + m_name, EISDIR);
  }
  // Standard input may have been read from already: what is left starts at its offset.
  const off_t offset = S_ISREG(st.st_mode) ? ::lseek(m_fd, 0, SEEK_CUR) : -1;
  if (offset >= 0 && offset <= st.st_size)
    m_regular_size = static_cast<std::uint64_t>(st.st_size - offset);
}

input_file::~input_file() {
  if (m_owned) ::close(m_fd);
}

void input_file::read_up_to(byte_buffer& data, std::size_t size, const progress_fn& progress) {
  std::size_t used = data.size();
  while (used < size) {
    if (used == data.size()) data.resize(next_capacity(used, size));
    const ssize_t n = ::read(m_fd, data.data() + used, std::min(data.size() - used, io_call_max));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      system_error("cannot read " + m_name, errno);
    }
    used += static_cast<std::size_t>(n);
    if (progress) progress(static_cast<std::size_t>(n));
  }
  data.resize(used);
}

// How far to grow a buffer that holds `used` bytes of at most `size`: to a regular file's size
// at once (plus one byte, for the read that finds its end), otherwise by doubling from one
// chunk, so that a short pipe does not cost the whole bound.
std::size_t input_file::next_capacity(std::size_t used, std::size_t size) const {
  const bool size_known = m_regular_size && *m_regular_size >= used;  // it may have grown
  const std::uint64_t want = size_known ? *m_regular_size + 1 : used + std::max(used, read_chunk);
  return static_cast<std::size_t>(std::min<std::uint64_t>(want, size));
}

std::optional<std::uint64_t> regular_file_size(const std::string& path) {
  const auto st = identity(path, STDIN_FILENO);
  if (!st || !S_ISREG(st->st_mode) || path == "-") return std::nullopt;
  return static_cast<std::uint64_t>(st->st_size);
}

void check_distinct_files(const std::string& in, const std::string& out) {
  const auto input = identity(in, STDIN_FILENO);
  const auto output = identity(out, STDOUT_FILENO);
  if (input && output && S_ISREG(input->st_mode) && input->st_dev == output->st_dev &&
      input->st_ino == output->st_ino)
    throw std::runtime_error(input_name(in) + " and " + output_name(out) +
                             " are the same file; writing the output would destroy the input");
}

void check_output_target(const std::string& path, bool overwrite) {
  if (path == "-") {
    if (!overwrite && ::isatty(STDOUT_FILENO))
      throw std::runtime_error(
          "refusing to write binary data to a terminal (redirect standard output, or use "
          "--force)");
  } else if (classify_target(path) == target_kind::replaceable && !overwrite) {
    refuse_overwrite(path);
  }
}

void check_input_removable(const std::string& in, const std::string& out) {
  if (in != "-" && (out == "-" || classify_target(out) == target_kind::device))
    refuse_removal(in, out);
}

output_kept write_output(const std::string& path, const std::vector<byte_span>& pieces,
                         bool overwrite, const progress_fn& progress) {
  if (path == "-") {
    for (const auto& piece : pieces) write_all(STDOUT_FILENO, piece, output_name(path), progress);
    return output_kept::passed_on;
  }
  if (classify_target(path) == target_kind::device) {
    write_to_device(path, pieces, progress);
    return output_kept::passed_on;
  }
  temporary_file file(path);
  for (const auto& piece : pieces) file.write(piece, progress);
  file.commit(overwrite);
  return output_kept::synced_file;
}

void remove_input(const std::string& in, const std::string& out, output_kept kept) {
  if (in == "-") return;
  if (kept != output_kept::synced_file) refuse_removal(in, out);
  if (::unlink(in.c_str()) != 0)
    system_error("the output is complete, but " + input_name(in) + " could not be removed", errno);
}

}  // namespace ndzip_cli
