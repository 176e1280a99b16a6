// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "file_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "durable_file.hpp"

namespace ndzip_cli {

namespace {

constexpr std::size_t read_chunk = std::size_t{1} << 20;
// The most one read() or write() call moves: a progress bar is told about each call.
constexpr std::size_t io_call_max = std::size_t{64} << 20;

using durable_file::system_error;

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

// The signals whose default action ends the process and that a handler can catch: those sent
// to it (kill, a terminal, a parent, timers, ulimit -t, abort()), the real-time ones included.
// Not the faults of the process itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGSYS, SIGTRAP), which
// belong to debuggers and sanitizers; SIGXFSZ is ignored (main).
std::vector<int> terminating_signals() {
  // Pushed one by one: built from an initializer list and grown, GCC 12 sees a write past its
  // end where it is inlined into output_file (a false -Warray-bounds).
  std::vector<int> signals;
  for (const int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM,
                        SIGVTALRM, SIGPROF, SIGXCPU, SIGABRT})
    signals.push_back(sig);
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

// The output file: a durable_file::replacement of the target (a new temporary file beside it,
// synced, renamed or linked onto it, the directory synced) whose temporary file a terminating
// signal removes too.
class output_file {
 public:
  // The signal handlers go in before the file is created, told its name, so that a signal which
  // comes as soon as the file exists removes it.
  explicit output_file(const std::string& target)
      : m_file(target, [this](const char* name) { m_cleanup.emplace(name); }) {}
  // The temporary file is removed before the handlers that know its name are.
  ~output_file() {
    m_file.discard();
    m_cleanup.reset();
  }
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;

  void write(byte_span bytes, const progress_fn& progress) {
    while (bytes.size > 0) {
      const std::size_t n = std::min(bytes.size, io_call_max);
      m_file.write(bytes.data, n);
      if (progress) progress(n);
      bytes = bytes.from(n);
    }
  }

  void commit(bool overwrite) {
    const std::string& target = m_file.target();
    if (!overwrite) {
      if (!m_file.commit_unless_exists()) refuse_overwrite(target);
      return;
    }
    // --force replaces files, never a device or FIFO that appeared since the first check.
    if (classify_target(target) == target_kind::device)
      throw std::runtime_error(output_name(target) +
                               " became a device or FIFO while ndzip ran; not replaced");
    m_file.commit_replacing();
  }

 private:
  std::optional<removal_on_signal> m_cleanup;  // declared first: in place when m_file names
  durable_file::replacement m_file;
};

}  // namespace

std::string input_name(const std::string& path) {
  return path == "-" ? "standard input" : "'" + path + "'";
}

std::string output_name(const std::string& path) {
  return path == "-" ? "standard output" : "'" + path + "'";
}

bool ends_with(const std::string& path, std::string_view suffix) {
  return path.size() >= suffix.size() &&
         path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
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
  if (offset >= 0 && offset <= st.st_size) {
    m_regular_size = static_cast<std::uint64_t>(st.st_size - offset);
    m_start = static_cast<std::uint64_t>(offset);
  }
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

std::uint64_t input_file::skip(std::uint64_t size, const progress_fn& progress) {
  byte_buffer scratch;
  std::uint64_t skipped = 0;
  while (skipped < size) {
    scratch.clear();
    read_up_to(scratch, static_cast<std::size_t>(std::min<std::uint64_t>(size - skipped, read_chunk)),
               progress);
    if (scratch.empty()) break;
    skipped += scratch.size();
  }
  return skipped;
}

void input_file::read_at(std::uint64_t offset, std::size_t size, byte_buffer& data) {
  if (!m_regular_size)
    throw std::logic_error("ndzip_cli: input_file::read_at on an input that is not a regular file");
  data.resize(size);
  std::size_t used = 0;
  while (used < size) {
    const ssize_t n = ::pread(m_fd, data.data() + used, std::min(size - used, io_call_max),
                              static_cast<off_t>(m_start + offset + used));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      system_error("cannot read " + m_name, errno);
    }
    used += static_cast<std::size_t>(n);
  }
  data.resize(used);
}

mapped_bytes::~mapped_bytes() { ::munmap(m_base, m_length); }

void mapped_bytes::advise_sequential() const { ::madvise(m_base, m_length, MADV_SEQUENTIAL); }
void mapped_bytes::advise_random() const { ::madvise(m_base, m_length, MADV_RANDOM); }

void mapped_bytes::will_need(std::uint64_t offset, std::uint64_t size) const {
  if (offset >= m_size) return;
  size = std::min<std::uint64_t>(size, m_size - offset);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const std::size_t page = page_size > 0 ? static_cast<std::size_t>(page_size) : 4096;
  const std::size_t from = (m_offset + static_cast<std::size_t>(offset)) / page * page;
  const std::size_t to = m_offset + static_cast<std::size_t>(offset + size);
  ::madvise(static_cast<std::byte*>(m_base) + from, to - from, MADV_WILLNEED);
}

std::unique_ptr<mapped_bytes> input_file::map() const {
  if (!m_regular_size || *m_regular_size == 0)
    throw std::logic_error("ndzip_cli: input_file::map on an input that is not a regular file "
                           "of at least one byte");
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const std::uint64_t page = page_size > 0 ? static_cast<std::uint64_t>(page_size) : 4096;
  const std::uint64_t from = m_start / page * page;  // mmap's offset is a multiple of pages
  const std::uint64_t offset = m_start - from, length = offset + *m_regular_size;
  if (length > std::numeric_limits<std::size_t>::max() ||
      from > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max()))
    throw std::runtime_error(m_name + " is too large to map into memory");
  void* const base = ::mmap(nullptr, static_cast<std::size_t>(length), PROT_READ, MAP_PRIVATE,
                            m_fd, static_cast<off_t>(from));
  if (base == MAP_FAILED) system_error("cannot map " + m_name + " into memory", errno);
  return std::make_unique<mapped_bytes>(base, static_cast<std::size_t>(length),
                                        static_cast<std::size_t>(offset),
                                        static_cast<std::size_t>(*m_regular_size));
}

void input_file::advise_sequential() {
  if (m_regular_size) ::posix_fadvise(m_fd, 0, 0, POSIX_FADV_SEQUENTIAL);
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

// The three kinds of output behind output_stream.
struct output_stream::impl {
  enum class kind { standard_output, device, file } where;
  std::string path;
  bool overwrite = false;
  std::optional<unique_fd> device;    // kind::device
  std::optional<output_file> file;    // kind::file

  impl(const std::string& target, bool force) : path(target), overwrite(force) {
    if (path == "-") {
      where = kind::standard_output;
    } else if (classify_target(path) == target_kind::device) {
      where = kind::device;
      open_device();
    } else {
      where = kind::file;
      file.emplace(path);
    }
  }

  // The character device or FIFO `path`, as any program writes to /dev/null: opened without
  // O_CREAT or O_TRUNC, so that the node itself is never replaced. (Opening a FIFO waits for a
  // reader.)
  void open_device() {
    device.emplace(::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC));
    if (device->get() < 0) system_error("cannot open " + output_name(path), errno);
    struct stat st;
    if (::fstat(device->get(), &st) != 0)
      system_error("cannot examine " + output_name(path), errno);
    if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))  // replaced since it was classified
      throw std::runtime_error(output_name(path) +
                               " is no longer a device or FIFO; nothing was written to it");
  }

  void write(byte_span bytes, const progress_fn& progress) {
    switch (where) {
      case kind::standard_output:
        return write_all(STDOUT_FILENO, bytes, output_name(path), progress);
      case kind::device:
        return write_all(device->get(), bytes, output_name(path), progress);
      case kind::file:
        return file->write(bytes, progress);
    }
  }

  output_kept commit() {
    switch (where) {
      case kind::standard_output:
        return output_kept::passed_on;
      case kind::device:
        if (device->close_checked() != 0) system_error("cannot write " + output_name(path), errno);
        return output_kept::passed_on;
      case kind::file:
        file->commit(overwrite);
        return output_kept::synced_file;
    }
    return output_kept::passed_on;
  }
};

output_stream::output_stream(const std::string& path, bool overwrite)
    : m_impl(std::make_unique<impl>(path, overwrite)) {}
output_stream::~output_stream() = default;

void output_stream::write(byte_span bytes, const progress_fn& progress) {
  m_impl->write(bytes, progress);
  m_written += bytes.size;
}

output_kept output_stream::commit() { return m_impl->commit(); }

bool output_stream::passes_on() const { return m_impl->where != impl::kind::file; }

std::string output_stream::name() const { return output_name(m_impl->path); }

output_kept write_output(const std::string& path, const std::vector<byte_span>& pieces,
                         bool overwrite, const progress_fn& progress) {
  output_stream out(path, overwrite);
  for (const auto& piece : pieces) out.write(piece, progress);
  return out.commit();
}

void remove_input(const std::string& in, const std::string& out, output_kept kept) {
  if (in == "-") return;
  if (kept != output_kept::synced_file) refuse_removal(in, out);
  if (::unlink(in.c_str()) != 0)
    system_error("the output is complete, but " + input_name(in) + " could not be removed", errno);
}

}  // namespace ndzip_cli
