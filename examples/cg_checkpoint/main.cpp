// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cg_checkpoint: conjugate gradients on a 3-D Poisson problem (Kokkos Kernels: a 7-point
// KokkosSparse::CrsMatrix, KokkosSparse::spmv, KokkosBlas::dot and axpby) that checkpoints its
// state (x, r, p and the iteration's scalars) every K iterations through ndzip-kokkos'
// asynchronous API, on an execution-space instance of its own, while the solver goes on; and
// restarts from such a checkpoint exactly where the uninterrupted run would be.
//
//   ndzip-cg-checkpoint [--n N] [--max-iters M] [--tol T] [--every K] [--checkpoint FILE]
//                       [--raw | --compare-raw] [--stop-after C] [--restart FILE]
//                       [--history FILE] [--x-out FILE] [-h | --help]
//
// --n: grid side (N^3 unknowns, default 160: 4.1 million); --every 0: no checkpoints; --raw:
// the same checkpoints uncompressed; --compare-raw: after each ndzip checkpoint, the same state
// raw into FILE.raw, its size and write time printed beside the ndzip one's; --stop-after C:
// exit after the C-th checkpoint (an interruption); --history: every iteration's r.r, as the bits
// of the double; --x-out: the final x, raw doubles. Checkpoint layout: checkpoint_file.hpp; every
// file, the checkpoints, --history and --x-out, replaces its FILE only once complete and synced
// (durable_file.hpp). Per checkpoint it prints the raw and stored bytes, the time until the
// file is complete and how long the solver waited.

#include <KokkosBlas1_axpby.hpp>
#include <KokkosBlas1_dot.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <memory>
#include <ndzip/ndzip.hpp>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "checkpoint_file.hpp"
#include "durable_file.hpp"
#include "poisson.hpp"

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;
using memory_space = exec_space::memory_space;
using device = Kokkos::Device<exec_space, memory_space>;
using vector = Kokkos::View<double*, device>;
using grid_view =
    Kokkos::View<double***, Kokkos::LayoutRight, device, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using clock_type = std::chrono::steady_clock;
using cg_example::storage;

constexpr bool host_memory =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;

double seconds_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct options {
  int n = 160;
  bool n_given = false;
  int max_iters = 500;
  double tol = 1e-8;
  int every = 50;
  std::string checkpoint = "cg.ckpt";
  bool raw = false;
  bool compare_raw = false;
  int stop_after = 0;
  std::string restart, history, x_out;
};

// The largest iteration count a run takes (--max-iters), so the largest a checkpoint records.
constexpr int max_iterations = 100000000;

constexpr const char* usage_line =
    "usage: ndzip-cg-checkpoint [--n N] [--max-iters M] [--tol T] [--every K] [--checkpoint "
    "FILE] [--raw | --compare-raw] [--stop-after C] [--restart FILE] [--history FILE] [--x-out "
    "FILE]\n";

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "ndzip-cg-checkpoint: %s\n%s", why.c_str(), usage_line);
  std::exit(2);
}

void print_help() {
  std::printf(
      "ndzip-cg-checkpoint: conjugate gradients on the 3-D Poisson problem (Kokkos Kernels),\n"
      "checkpointing its state through ndzip while it runs, and restarting from a checkpoint.\n"
      "%s\n"
      "  --n N              grid side, N^3 unknowns (2 to 1024, default 160)\n"
      "  --max-iters M      iterations at most (default 500)\n"
      "  --tol T            stop once |r|/|b| <= T (default 1e-8; 0: run all M iterations)\n"
      "  --every K          a checkpoint every K iterations (default 50; 0: none)\n"
      "  --checkpoint FILE  where the checkpoints go (default cg.ckpt)\n"
      "  --raw              checkpoints of raw doubles instead of ndzip frames\n"
      "  --compare-raw      after each ndzip checkpoint the same state raw into FILE.raw, timed\n"
      "  --stop-after C     exit after the C-th checkpoint (an interruption)\n"
      "  --restart FILE     continue from the checkpoint FILE (its n; --n, if given, must match)\n"
      "  --history FILE     every iteration's r.r, as the bits of the double\n"
      "  --x-out FILE       the final x, raw doubles\n"
      "  -h, --help         this help\n"
      "Kokkos' own options (--kokkos-threads=N, ...) go to Kokkos; --kokkos-help lists them.\n",
      usage_line);
}

// The options followed by a value: a "-h" after one of them is that value (a file name), not a
// request for help.
bool takes_value(const std::string& arg) {
  for (const char* option : {"--n", "--max-iters", "--tol", "--every", "--checkpoint",
                             "--stop-after", "--restart", "--history", "--x-out"})
    if (arg == option) return true;
  return false;
}

// Whether `wanted` is among the options (not a value). Looked for before Kokkos is
// initialised: Kokkos answers --help with its own help and leaves it in place for the
// program's parser, and takes --kokkos-help away after printing its help.
bool has_option(int argc, char* argv[], std::initializer_list<const char*> wanted) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    for (const char* option : wanted)
      if (arg == option) return true;
    if (takes_value(arg)) ++i;
  }
  return false;
}

options parse(int argc, char* argv[]) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    const auto number = [&](long low, long high) {
      const std::string text = value();
      char* end = nullptr;
      const long v = std::strtol(text.c_str(), &end, 10);
      if (text.empty() || *end || v < low || v > high)
        usage(arg + " " + text + ": not a whole number from " + std::to_string(low) + " to " +
              std::to_string(high));
      return static_cast<int>(v);
    };
    if (arg == "--n") {
      o.n = number(2, 1024);
      o.n_given = true;
    }
    else if (arg == "--max-iters") o.max_iters = number(1, max_iterations);
    else if (arg == "--every") o.every = number(0, 100000000);
    else if (arg == "--stop-after") o.stop_after = number(1, 100000000);
    else if (arg == "--tol") {
      const std::string text = value();
      char* end = nullptr;
      o.tol = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || !(o.tol >= 0)) usage("--tol " + text + ": not a number >= 0");
    } else if (arg == "--checkpoint") o.checkpoint = value();
    else if (arg == "--restart") o.restart = value();
    else if (arg == "--history") o.history = value();
    else if (arg == "--x-out") o.x_out = value();
    else if (arg == "--raw") o.raw = true;
    else if (arg == "--compare-raw") o.compare_raw = true;
    else usage("unknown option " + arg);
  }
  if (o.stop_after && !o.every) usage("--stop-after needs checkpoints (--every K, K > 0)");
  if (o.compare_raw && o.raw) usage("--compare-raw compares ndzip checkpoints with raw ones");
  return o;
}

// What CG carries from one iteration to the next.
struct cg_state {
  vector x, r, p;
  double rho = 0;    // r.r
  double bnorm = 0;  // |b|, for the relative residual
  int iteration = 0;
  int n = 0;
};

// The checkpoints' own instance: a CUDA stream of their own, which does not wait for the
// solver's (the default instance's stream); on host backends the calling thread runs the
// kernels wherever they are queued, so the default instance.
#if defined(KOKKOS_ENABLE_CUDA)
struct checkpoint_stream {
  cudaStream_t stream = nullptr;
  checkpoint_stream() { cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); }
  ~checkpoint_stream() { cudaStreamDestroy(stream); }
};
exec_space make_checkpoint_instance(const checkpoint_stream& s) {
  if constexpr (std::is_same_v<exec_space, Kokkos::Cuda>)
    return exec_space(s.stream);
  else
    return exec_space();
}
#else
struct checkpoint_stream {};
exec_space make_checkpoint_instance(const checkpoint_stream&) { return exec_space(); }
#endif

// One checkpoint's account, printed once its file is complete.
struct checkpoint_record {
  int iteration = 0;
  std::size_t raw_bytes = 0, stored_bytes = 0;
  double total_s = 0;        // from the solver's call to the renamed file
  double solver_wait_s = 0;  // the solver's call, and its later wait for the writer
};

// Takes checkpoints: a snapshot of the state on the solver's instance (the solver waits for
// that copy only), its compression queued on the checkpoint instance, and a thread that waits
// for it, frames the streams and writes the file, while the solver goes on. One checkpoint is
// in flight at a time: the next one first waits for the previous file.
class checkpointer {
 public:
  // compare_raw: after each ndzip file, the same state raw into FILE.raw, timed on its own.
  checkpointer(int n, storage kind, std::string path, bool compare_raw)
      : m_exec(make_checkpoint_instance(m_stream)),
        m_n(n),
        m_kind(kind),
        m_path(std::move(path)),
        m_compare_raw(compare_raw && kind == storage::ndzip),
        m_codec(m_exec, ndzip::extent<3>(n, n, n)) {
    const std::size_t values = static_cast<std::size_t>(n) * n * n;
    for (int a = 0; a < 3; ++a) {
      m_snapshots[a] = vector("snapshot", values);
      if (m_kind == storage::ndzip) {
        m_streams[a] = Kokkos::View<std::byte*, memory_space>("stream", m_codec.size_bound());
        m_sizes[a] = Kokkos::View<std::uint64_t, memory_space>("stream_size");
      }
      if constexpr (!host_memory)  // a raw array fits in a stream's bound too
        m_host[a].resize(m_kind == storage::ndzip ? m_codec.size_bound() : values * sizeof(double));
    }
  }

  ~checkpointer() {
    if (m_writer.joinable()) m_writer.join();
  }

  // Called after iteration s.iteration with the solver's instance idle or busy.
  void take(const exec_space& solver, const cg_state& s) {
    const auto start = clock_type::now();
    finish_previous();
    solver.fence();
    const vector* state[3] = {&s.x, &s.r, &s.p};
    for (int a = 0; a < 3; ++a) Kokkos::deep_copy(solver, m_snapshots[a], *state[a]);
    solver.fence();  // the snapshot is what the checkpoint instance reads
    m_scalars = {static_cast<double>(s.iteration), static_cast<double>(m_n), s.rho, s.bnorm};
    if (m_kind == storage::ndzip) {
      for (int a = 0; a < 3; ++a)
        m_codec.compress_raw_async(m_snapshots[a].data(), m_streams[a].data(),
                                   m_streams[a].size(), m_sizes[a].data());
      frame_scalars();
    }
    checkpoint_record record;
    record.iteration = s.iteration;
    record.raw_bytes = 3 * m_snapshots[0].size() * sizeof(double) + sizeof m_scalars;
    if constexpr (host_memory) m_exec.fence();  // host backends ran it already: no Kokkos below
    m_writer = std::thread([this, start] { write(start); });
    record.solver_wait_s = seconds_between(start, clock_type::now());
    m_pending = record;
  }

  // Waits for the last file; every checkpoint's account.
  const std::vector<checkpoint_record>& finish() {
    finish_previous();
    return m_records;
  }

 private:
  // The 4 scalars as a frame of their own (checksummed like the rest), on the host.
  void frame_scalars() {
    const Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> values(
        m_scalars.data(), m_scalars.size());
    m_scalar_frame.resize(ndzip::frame_size_bound(values));
    const Kokkos::View<std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> frame(
        m_scalar_frame.data(), m_scalar_frame.size());
    m_scalar_frame.resize(
        ndzip::compress_frame(Kokkos::DefaultHostExecutionSpace(), values, frame));
  }

  void finish_previous() {
    if (!m_writer.joinable()) return;
    const auto start = clock_type::now();
    m_writer.join();
    m_pending.solver_wait_s += seconds_between(start, clock_type::now());
    if (!m_error.empty()) throw std::runtime_error("checkpoint not written: " + m_error);
    m_pending.total_s = m_written_s;
    m_pending.stored_bytes = m_stored_bytes;
    m_records.push_back(m_pending);
    const auto& r = m_pending;
    std::printf("checkpoint at iteration %d: %zu raw bytes -> %zu bytes in %s (%.3f); %.1f ms "
                "until the file is complete, the solver waited %.1f ms\n",
                r.iteration, r.raw_bytes, r.stored_bytes, m_path.c_str(),
                static_cast<double>(r.stored_bytes) / static_cast<double>(r.raw_bytes),
                r.total_s * 1e3, r.solver_wait_s * 1e3);
    if (m_compare_raw)
      std::printf("  the same state raw: %zu bytes in %s.raw, %.1f ms to write\n", m_raw_bytes,
                  m_path.c_str(), m_raw_written_s * 1e3);
    std::fflush(stdout);
  }

  // The writer thread: the streams (or the raw snapshot) to the host, framed, into the file;
  // then, with --compare-raw, the same state raw into FILE.raw, timed on its own.
  void write(clock_type::time_point start) {
    try {
      m_stored_bytes = stage_and_write(m_kind, m_path);
      m_written_s = seconds_between(start, clock_type::now());
      if (m_compare_raw) {
        const auto raw_start = clock_type::now();
        m_raw_bytes = stage_and_write(storage::raw, m_path + ".raw");
        m_raw_written_s = seconds_between(raw_start, clock_type::now());
      }
    } catch (const std::exception& e) {
      m_error = e.what();
    }
  }

  // Brings the checkpoint in `kind` to the host (device backends) and writes it to `path`;
  // returns the file's size.
  std::size_t stage_and_write(storage kind, const std::string& path) {
    std::array<std::uint64_t, 3> sizes{};
    std::array<const std::byte*, 3> data{};
    const std::size_t raw = m_snapshots[0].size() * sizeof(double);
    for (int a = 0; a < 3; ++a) {
      if (kind == storage::ndzip) {
        if constexpr (host_memory) {
          sizes[a] = m_sizes[a]();
          data[a] = m_streams[a].data();
        } else {
          Kokkos::deep_copy(m_exec, sizes[a], m_sizes[a]);
          m_exec.fence();
          Kokkos::deep_copy(m_exec, host_bytes(a, sizes[a]),
                            Kokkos::subview(m_streams[a], std::make_pair(std::size_t{0},
                                                                         std::size_t(sizes[a]))));
          data[a] = m_host[a].data();
        }
      } else {
        sizes[a] = raw;
        if constexpr (host_memory) {
          data[a] = reinterpret_cast<const std::byte*>(m_snapshots[a].data());
        } else {
          const Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host(
              reinterpret_cast<double*>(m_host[a].data()), m_snapshots[a].size());
          Kokkos::deep_copy(m_exec, host, m_snapshots[a]);
          data[a] = m_host[a].data();
        }
      }
    }
    if constexpr (!host_memory) m_exec.fence();
    std::vector<std::vector<cg_example::byte_range>> sections;
    std::array<std::array<std::byte, ndzip::frame_header_bytes>, 3> headers;
    if (kind == storage::ndzip) {
      sections.push_back({{m_scalar_frame.data(), m_scalar_frame.size()}});
      const std::array<std::uint64_t, 3> extents = {std::uint64_t(m_n), std::uint64_t(m_n),
                                                    std::uint64_t(m_n)};
      for (int a = 0; a < 3; ++a) {
        headers[a] = ndzip::encode_frame_header(ndzip::element_type::float64, 3, extents,
                                                data[a], sizes[a]);
        sections.push_back({{headers[a].data(), headers[a].size()}, {data[a], sizes[a]}});
      }
    } else {
      sections.push_back(
          {{reinterpret_cast<const std::byte*>(m_scalars.data()), sizeof m_scalars}});
      for (int a = 0; a < 3; ++a) sections.push_back({{data[a], sizes[a]}});
    }
    return cg_example::write_checkpoint_file(path, kind, sections);
  }

  Kokkos::View<std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> host_bytes(
      int a, std::size_t size) {
    return Kokkos::View<std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(m_host[a].data(),
                                                                               size);
  }

  checkpoint_stream m_stream;
  exec_space m_exec;
  int m_n;
  storage m_kind;
  std::string m_path;
  bool m_compare_raw;
  ndzip::compressor<double, 3, exec_space> m_codec;
  std::array<vector, 3> m_snapshots;
  std::array<Kokkos::View<std::byte*, memory_space>, 3> m_streams;
  std::array<Kokkos::View<std::uint64_t, memory_space>, 3> m_sizes;
  std::array<std::vector<std::byte>, 3> m_host;  // device backends: the bytes on their way
  std::array<double, 4> m_scalars{};
  std::vector<std::byte> m_scalar_frame;

  std::thread m_writer;
  checkpoint_record m_pending;
  std::vector<checkpoint_record> m_records;
  // Written by the writer thread, read after joining it.
  std::string m_error;
  std::size_t m_stored_bytes = 0, m_raw_bytes = 0;
  double m_written_s = 0, m_raw_written_s = 0;
};

// The state of a checkpoint file, checked whole before anything of it is used, and before any
// memory of the size its scalars claim is allocated: its layout and section names; the
// scalars (iteration and n whole numbers in range, r.r finite and >= 0, |b| finite and > 0);
// each section's length against what a section of this n can be and what the file holds,
// before the section is read; each frame's header (a double n x n x n grid) and checksum. Only
// then are Views of the problem's size allocated and the sections decoded into them. A damaged,
// forged or mismatched file is refused with std::runtime_error (or ndzip's frame_error /
// stream_error) and no state.
cg_state load_checkpoint(const std::string& path, int n_asked) {
  cg_example::checkpoint_reader in(path);
  const storage kind = in.read_header();
  const auto bad = [&](const std::string& what) { return in.bad(what); };

  // The scalars come first: their n bounds everything after them.
  std::array<double, 4> scalars{};
  const Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> scalar_view(
      scalars.data(), scalars.size());
  const auto scalar_bytes = in.read_section(
      0, kind == storage::ndzip ? ndzip::frame_size_bound(scalar_view) : sizeof scalars);
  if (kind == storage::ndzip) {
    const auto info = ndzip::inspect_frame(scalar_bytes.data(), scalar_bytes.size());
    if (info.type != ndzip::element_type::float64 || info.dimensions != 1 ||
        info.extents[0] != scalars.size())
      throw bad("its first section is not the 4 scalars");
    ndzip::decompress_frame(  // checks the frame's checksum first
        Kokkos::DefaultHostExecutionSpace(),
        Kokkos::View<const std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
            scalar_bytes.data(), scalar_bytes.size()),
        scalar_view);
  } else {
    if (scalar_bytes.size() != sizeof scalars) throw bad("its scalars are not 4 doubles");
    std::memcpy(scalars.data(), scalar_bytes.data(), sizeof scalars);
  }
  // A value converted to int only once it is known to be one in range (anything else is
  // undefined behaviour); r.r and |b| are what the solver divides by and compares with.
  const auto whole = [](double v, double low, double high) {
    return std::isfinite(v) && v == std::floor(v) && v >= low && v <= high;
  };
  const auto text = [](double v) {
    char s[32];
    std::snprintf(s, sizeof s, "%.17g", v);
    return std::string(s);
  };
  if (!whole(scalars[0], 1, max_iterations))
    throw bad("its iteration " + text(scalars[0]) + " is not a whole number from 1 to " +
              std::to_string(max_iterations));
  if (!whole(scalars[1], 2, 1024))
    throw bad("its grid side " + text(scalars[1]) + " is not a whole number from 2 to 1024");
  if (!(std::isfinite(scalars[2]) && scalars[2] >= 0))
    throw bad("its r.r " + text(scalars[2]) + " is not a finite number >= 0");
  if (!(std::isfinite(scalars[3]) && scalars[3] > 0))
    throw bad("its |b| " + text(scalars[3]) + " is not a finite number > 0");
  cg_state state;
  state.iteration = static_cast<int>(scalars[0]);
  state.n = static_cast<int>(scalars[1]);
  state.rho = scalars[2];
  state.bnorm = scalars[3];
  if (n_asked && n_asked != state.n)
    throw bad("it holds a " + std::to_string(state.n) + "^3 problem, --n asks for " +
              std::to_string(n_asked) + "^3");

  // x, r and p: read (each at most as long as a section of this n can be), and their frames'
  // headers and checksums checked, before anything of the problem's size is allocated.
  const int n = state.n;
  const std::size_t values = static_cast<std::size_t>(n) * n * n;
  const std::uint64_t grid_bytes =
      kind == storage::ndzip ? ndzip::frame_header_bytes +
                                   ndzip::compressed_size_bound<double>(ndzip::extent<3>(n, n, n))
                             : values * sizeof(double);
  std::array<std::vector<std::byte>, 3> grids;
  for (int a = 0; a < 3; ++a) {
    const std::string name = "section " + std::to_string(a + 1) + " (\"" +
                             cg_example::section_roles[a + 1] + "\")";
    if (kind == storage::ndzip) {
      // The frame's header first: a double n x n x n grid, and a frame as long as the section.
      const auto check_header = [&](const std::byte* header, std::size_t bytes,
                                    std::uint64_t section_bytes) {
        const auto info = ndzip::read_frame_header(header, bytes);
        if (info.type != ndzip::element_type::float64 || info.dimensions != 3 ||
            info.extents != std::array<std::uint64_t, 3>{std::uint64_t(n), std::uint64_t(n),
                                                         std::uint64_t(n)})
          throw bad(name + " holds a " + ndzip::array_shape::of(info).to_string() +
                    " array, not the double " + std::to_string(n) + "x" + std::to_string(n) +
                    "x" + std::to_string(n) + " grid its scalars announce");
        ndzip::check_frame_size(info, section_bytes);
      };
      grids[a] = in.read_section(a + 1, grid_bytes, check_header, ndzip::frame_header_bytes);
      ndzip::verify_frame_checksum(grids[a].data(), grids[a].size());
    } else {
      grids[a] = in.read_section(a + 1, grid_bytes);
      if (grids[a].size() != values * sizeof(double))
        throw bad(name + " is not " + std::to_string(values) + " doubles");
    }
  }
  in.expect_end();

  vector* targets[3] = {&state.x, &state.r, &state.p};
  for (int a = 0; a < 3; ++a) {
    *targets[a] = vector("state", values);
    if (kind == storage::ndzip) {
      ndzip::decompress_frame(
          exec_space(),
          Kokkos::View<const std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
              grids[a].data(), grids[a].size()),
          grid_view(targets[a]->data(), n, n, n));
    } else {
      auto host = Kokkos::create_mirror_view(*targets[a]);
      std::memcpy(host.data(), grids[a].data(), grids[a].size());
      Kokkos::deep_copy(*targets[a], host);
    }
    grids[a] = {};  // its memory back before the next View is allocated
  }
  return state;
}

std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// An output of the run other than the checkpoints (--history, --x-out): written to a new
// temporary file that replaces FILE, synced, only once the run has finished it
// (durable_file.hpp), so a failed run or a full disk leaves the previous FILE whole. Every error
// says which output was not written and why.
class run_output {
 public:
  run_output(std::string option, const std::string& path) : m_what(option + " " + path) {
    guarded([&] { m_file.emplace(path); });
  }
  void write(const void* data, std::size_t size) {
    guarded([&] { m_file->write(data, size); });
  }
  void commit() {
    guarded([&] { m_file->commit_replacing(); });
  }

 private:
  template <class Action>
  void guarded(const Action& action) {
    try {
      action();
    } catch (const std::exception& e) {
      throw std::runtime_error(m_what + " not written: " + e.what());
    }
  }

  std::string m_what;
  std::optional<durable_file::replacement> m_file;
};

int run(const options& o) {
  const exec_space solver;
  cg_state s;
  if (!o.restart.empty()) {
    try {
      s = load_checkpoint(o.restart, o.n_given ? o.n : 0);
    } catch (const std::exception& e) {
      throw std::runtime_error("cannot restart from " + o.restart + ": " + e.what());
    }
    std::printf("restarting from %s at iteration %d (%d^3 unknowns)\n", o.restart.c_str(),
                s.iteration, s.n);
  } else {
    s.n = o.n;
    const vector b = cg_example::smooth_source<device>(s.n);
    s.x = vector("x", b.size());
    s.r = vector("r", b.size());
    s.p = vector("p", b.size());
    Kokkos::deep_copy(s.r, b);  // x = 0: r = b - A x = b
    Kokkos::deep_copy(s.p, b);
    s.rho = KokkosBlas::dot(s.r, s.r);
    s.bnorm = std::sqrt(s.rho);
  }
  const auto A = cg_example::laplacian_7pt<device>(s.n);
  vector q("q", s.x.size());
  std::optional<run_output> history;
  if (!o.history.empty()) history.emplace("--history", o.history);
  std::unique_ptr<checkpointer> checkpoints;
  if (o.every)
    checkpoints = std::make_unique<checkpointer>(s.n, o.raw ? storage::raw : storage::ndzip,
                                                 o.checkpoint, o.compare_raw);
  std::printf("CG on %s: %d^3 unknowns, %s, checkpoints %s\n", exec_space::name(), s.n,
              o.every ? ("every " + std::to_string(o.every) + " iterations").c_str() : "none",
              o.every ? (o.raw ? "raw" : "ndzip frames") : "off");

  const auto start = clock_type::now();
  const int first = s.iteration;
  int taken = 0;
  bool converged = std::sqrt(s.rho) <= o.tol * s.bnorm;
  while (!converged && s.iteration < o.max_iters) {
    KokkosSparse::spmv("N", 1.0, A, s.p, 0.0, q);
    const double alpha = s.rho / KokkosBlas::dot(s.p, q);
    KokkosBlas::axpby(alpha, s.p, 1.0, s.x);   // x += alpha p
    KokkosBlas::axpby(-alpha, q, 1.0, s.r);    // r -= alpha q
    const double rho = KokkosBlas::dot(s.r, s.r);
    KokkosBlas::axpby(1.0, s.r, rho / s.rho, s.p);  // p = r + beta p
    s.rho = rho;
    ++s.iteration;
    if (history) {
      char line[40];
      const int length = std::snprintf(line, sizeof line, "%d %016" PRIx64 "\n", s.iteration,
                                       bits_of(s.rho));
      history->write(line, static_cast<std::size_t>(length));
    }
    converged = std::sqrt(s.rho) <= o.tol * s.bnorm;
    if (o.every && s.iteration % o.every == 0) {
      checkpoints->take(solver, s);
      if (o.stop_after && ++taken == o.stop_after) {
        checkpoints->finish();
        if (history) history->commit();
        std::printf("stopped after the checkpoint of iteration %d\n", s.iteration);
        return 0;
      }
    }
  }
  solver.fence();
  std::vector<checkpoint_record> records;
  if (checkpoints) records = checkpoints->finish();
  const double elapsed = seconds_between(start, clock_type::now());
  const int iterations = s.iteration - first;
  std::printf("%s after %d iterations: |r|/|b| = %.3e; %.3f s, %.3f ms per iteration\n",
              converged ? "converged" : "stopped", s.iteration, std::sqrt(s.rho) / s.bnorm,
              elapsed, iterations ? elapsed / iterations * 1e3 : 0.0);
  if (!records.empty()) {
    double wait = 0, total = 0;
    std::size_t raw = 0, stored = 0;
    for (const auto& r : records) {
      wait += r.solver_wait_s;
      total += r.total_s;
      raw += r.raw_bytes;
      stored += r.stored_bytes;
    }
    std::printf("checkpoints: %zu, %zu raw bytes -> %zu stored (%.3f); %.1f ms each until "
                "complete, the solver waited %.1f ms each, %.3f ms per iteration\n",
                records.size(), raw, stored, static_cast<double>(stored) / raw,
                total / records.size() * 1e3, wait / records.size() * 1e3,
                iterations ? wait / iterations * 1e3 : 0.0);
  }
  if (history) history->commit();
  if (!o.x_out.empty()) {
    const auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.x);
    run_output x_out("--x-out", o.x_out);
    x_out.write(x.data(), x.size() * sizeof(double));
    x_out.commit();
  }
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  if (has_option(argc, argv, {"--help", "-h"})) {
    print_help();
    return 0;
  }
  const bool kokkos_help = has_option(argc, argv, {"--kokkos-help"});
  Kokkos::ScopeGuard kokkos(argc, argv);
  if (kokkos_help) return 0;  // Kokkos printed its help; nothing is run
  const options o = parse(argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ndzip-cg-checkpoint: %s\n", e.what());
    return 1;
  }
}
