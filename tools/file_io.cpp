#include "file_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>

namespace ndzip_cli {

namespace {

constexpr std::size_t read_chunk = std::size_t{1} << 20;

[[noreturn]] void system_error(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + std::strerror(err));
}

void write_all(int fd, byte_span bytes, const std::string& name) {
  while (bytes.size > 0) {
    const ssize_t n = ::write(fd, bytes.data, bytes.size);
    if (n < 0) {
      if (errno == EINTR) continue;
      system_error("cannot write " + name, errno);
    }
    bytes = bytes.from(static_cast<std::size_t>(n));
  }
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

[[noreturn]] void refuse_overwrite(const std::string& path) {
  throw std::runtime_error(output_name(path) + " already exists (use --force to overwrite it)");
}

// While one lives, SIGINT, SIGTERM and SIGHUP (unless ignored) first remove the file `path` and
// then take their default action, so that an interrupted run leaves no temporary file behind.
class removal_on_signal {
 public:
  explicit removal_on_signal(const char* path) {
    s_path.store(path);
    struct sigaction action = {};
    action.sa_handler = &handler;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < std::size(signals); ++i) {
      ::sigaction(signals[i], nullptr, &m_old[i]);
      if (m_old[i].sa_handler != SIG_IGN) ::sigaction(signals[i], &action, nullptr);  // nohup
    }
  }
  ~removal_on_signal() {
    for (std::size_t i = 0; i < std::size(signals); ++i)
      ::sigaction(signals[i], &m_old[i], nullptr);
    s_path.store(nullptr);
  }
  removal_on_signal(const removal_on_signal&) = delete;
  removal_on_signal& operator=(const removal_on_signal&) = delete;

 private:
  static void handler(int sig) {
    if (const char* path = s_path.load()) ::unlink(path);
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }

  static constexpr int signals[] = {SIGINT, SIGTERM, SIGHUP};
  static inline std::atomic<const char*> s_path{nullptr};  // lock-free, so signal-safe
  struct sigaction m_old[std::size(signals)];
};

// A new file next to its target that disappears again unless commit() succeeds.
class temporary_file {
 public:
  explicit temporary_file(const std::string& target) : m_target(target) {
    std::vector<char> name(target.begin(), target.end());
    const char suffix[] = ".tmp.XXXXXX";
    name.insert(name.end(), suffix, suffix + sizeof suffix);  // with the terminating NUL
    m_fd = ::mkstemp(name.data());
    if (m_fd < 0) system_error("cannot create a temporary file for " + output_name(target), errno);
    m_path = name.data();
    m_cleanup.emplace(m_path.c_str());
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

  void write(byte_span bytes) { write_all(m_fd, bytes, "'" + m_path + "'"); }

  void commit(bool overwrite) {
    if (::fsync(m_fd) != 0) fail("cannot sync", errno);
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) fail("cannot close", errno);
    if (overwrite) {
      if (::rename(m_path.c_str(), m_target.c_str()) != 0) fail_target("cannot rename", errno);
    } else if (::link(m_path.c_str(), m_target.c_str()) == 0) {
      // link() never replaces an existing file, so a file that appeared meanwhile is kept.
      ::unlink(m_path.c_str());
    } else if (errno == EEXIST) {
      refuse_overwrite(m_target);
    } else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == ENOSYS) {
      // The file system has no hard links: check and rename instead.
      if (exists(m_target)) refuse_overwrite(m_target);
      if (::rename(m_path.c_str(), m_target.c_str()) != 0) fail_target("cannot rename", errno);
    } else {
      fail_target("cannot link", errno);
    }
    m_committed = true;
  }

 private:
  [[noreturn]] void fail(const std::string& what, int err) const {
    system_error(what + " '" + m_path + "'", err);
  }
  [[noreturn]] void fail_target(const std::string& what, int err) const {
    system_error(what + " '" + m_path + "' to " + output_name(m_target), err);
  }

  std::string m_target;
  std::string m_path;
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

byte_buffer read_input(const std::string& path) {
  const bool is_stdin = path == "-";
  const int fd = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) system_error("cannot open " + input_name(path), errno);
  struct fd_closer {
    int fd;
    bool owned;
    ~fd_closer() {
      if (owned) ::close(fd);
    }
  } closer{fd, !is_stdin};

  struct stat st;
  if (::fstat(fd, &st) != 0) system_error("cannot stat " + input_name(path), errno);
  if (S_ISDIR(st.st_mode)) system_error("cannot read " + input_name(path), EISDIR);

  byte_buffer data;
  // A regular file is read in one piece (plus one read that finds its end); anything else grows.
  std::size_t capacity =
      S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size) + 1 : read_chunk;
  std::size_t used = 0;
  for (;;) {
    if (used == data.size()) data.resize(std::max(capacity, used + read_chunk));
    const ssize_t n = ::read(fd, data.data() + used, data.size() - used);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      system_error("cannot read " + input_name(path), errno);
    }
    used += static_cast<std::size_t>(n);
    capacity = 2 * used;
  }
  data.resize(used);
  return data;
}

void check_output_target(const std::string& path, bool overwrite) {
  if (overwrite) return;
  if (path == "-") {
    if (::isatty(STDOUT_FILENO))
      throw std::runtime_error(
          "refusing to write binary data to a terminal (redirect standard output, or use "
          "--force)");
  } else if (exists(path)) {
    refuse_overwrite(path);
  }
}

void write_output(const std::string& path, const std::vector<byte_span>& pieces, bool overwrite) {
  if (path == "-") {
    for (const auto& piece : pieces) write_all(STDOUT_FILENO, piece, output_name(path));
    return;
  }
  temporary_file file(path);
  for (const auto& piece : pieces) file.write(piece);
  file.commit(overwrite);
}

}  // namespace ndzip_cli
