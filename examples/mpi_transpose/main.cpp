// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mpi_transpose: a 3-D field redistributed from slabs to pencils and back, the transpose step
// of a distributed FFT. Rank r owns the x-planes [x0(r), x1(r)) of an NX x NY x NZ grid, all of
// y and z (its slab, where the transform along y and z runs locally); the pencil layout gives it
// the y-rows [y0(r), y1(r)), all of x and z (where the transform along x runs locally). The
// splits may be uneven (3 ranks, 128 planes: 42, 43, 43); a rank may own none.
//
// The pattern: the forward transpose sends rank d the part of the slab in d's y-range (a
// strided subview) and receives from rank s the part of the pencil in s's x-range; the
// backward transpose the reverse. Each is an ndzip::mpi::alltoall_plan, made once; each step's
// execute() compresses all of a rank's pieces in batch launches and moves them by one
// MPI_Alltoallv.
//
// Beside it the same pieces go through plain MPI_Alltoallv (packed into one contiguous host
// buffer, unpacked). Every step the two pencils must agree bit for bit (ndzip is lossless) and
// the slab must come back from its round trip unchanged; the program says which cells differ
// and exits with 1 otherwise.
//
//   mpiexec -n 4 ndzip-mpi-transpose-example [--n N | --nx NX --ny NY --nz NZ] [--steps STEPS]
//                                            [--type float|double]
//                                            [--transport automatic|staged|mpi-device]
//                                            [--compression adaptive|always|never]
//
// Each step prints the slowest rank's time for each of the four transposes (ndzip and plain
// MPI, forward and backward), and the raw and wire bytes that the two ndzip transposes sent
// over all ranks (a rank's piece to itself is copied, not sent).
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <ndzip/mpi.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;
// x slowest: a slab's x-planes, and a pencil's part from one rank, are contiguous.
template <class T>
using field_view = Kokkos::View<T***, Kokkos::LayoutRight>;
template <class T>
using piece_view = Kokkos::View<T***, Kokkos::LayoutStride>;
using range = std::pair<std::size_t, std::size_t>;

struct settings {
  std::size_t nx = 128, ny = 128, nz = 128;  // the global grid
  int steps = 10;
  bool single = false;          // --type float
  ndzip::mpi::options options;  // --transport, --compression
};

// Rank r's share of n indices among `parts` ranks: shares differ by one index at most.
range share(std::size_t n, int parts, int r) {
  return {n * static_cast<std::size_t>(r) / static_cast<std::size_t>(parts),
          n * static_cast<std::size_t>(r + 1) / static_cast<std::size_t>(parts)};
}

enum class axis { x, y };

// `field` cut along `along` into one piece per rank: rank r's holds r's share of that axis and
// all of the other two.
template <class T>
std::vector<piece_view<T>> cut(const field_view<T>& field, axis along, int ranks) {
  std::vector<piece_view<T>> pieces;
  for (int r = 0; r < ranks; ++r)
    if (along == axis::x)
      pieces.emplace_back(
          Kokkos::subview(field, share(field.extent(0), ranks, r), Kokkos::ALL, Kokkos::ALL));
    else
      pieces.emplace_back(
          Kokkos::subview(field, Kokkos::ALL, share(field.extent(1), ranks, r), Kokkos::ALL));
  return pieces;
}

template <class T>
MPI_Datatype mpi_type() {
  return std::is_same_v<T, float> ? MPI_FLOAT : MPI_DOUBLE;
}

// The same redistribution by plain MPI, for the check and for the times beside ndzip's: the
// pieces packed in rank order into one contiguous buffer, MPI_Alltoallv between host copies of
// the buffers, the received pieces unpacked.
template <class T>
class plain_alltoall {
 public:
  plain_alltoall(const exec_space& exec, std::vector<piece_view<T>> sends,
                 std::vector<piece_view<T>> recvs, MPI_Comm comm)
      : m_exec(exec),
        m_comm(comm),
        m_sends(std::move(sends)),
        m_recvs(std::move(recvs)),
        m_packed_sends(m_sends, "packed sends"),
        m_packed_recvs(m_recvs, "packed recvs") {}

  void execute() {
    for (std::size_t d = 0; d < m_sends.size(); ++d)
      Kokkos::deep_copy(m_exec, m_packed_sends.slots[d], m_sends[d]);
    m_exec.fence();
    Kokkos::deep_copy(m_packed_sends.host, m_packed_sends.device);
    MPI_Alltoallv(m_packed_sends.host.data(), m_packed_sends.counts.data(),
                  m_packed_sends.offsets.data(), mpi_type<T>(), m_packed_recvs.host.data(),
                  m_packed_recvs.counts.data(), m_packed_recvs.offsets.data(), mpi_type<T>(),
                  m_comm);
    Kokkos::deep_copy(m_packed_recvs.device, m_packed_recvs.host);
    for (std::size_t s = 0; s < m_recvs.size(); ++s)
      Kokkos::deep_copy(m_exec, m_recvs[s], m_packed_recvs.slots[s]);
    m_exec.fence();
  }

 private:
  // One buffer for all the pieces, each piece a contiguous slot of it; with a device, its host
  // copy is what MPI sees.
  struct packing {
    using slot_view =
        Kokkos::View<T***, Kokkos::LayoutRight, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    std::vector<int> counts, offsets;  // in values, per rank
    Kokkos::View<T*> device;
    typename Kokkos::View<T*>::HostMirror host;
    std::vector<slot_view> slots;

    packing(const std::vector<piece_view<T>>& pieces, const char* label) {
      std::size_t total = 0;  // at most the whole grid: 1024^3 values fit MPI's int counts
      for (const auto& p : pieces) {
        offsets.push_back(static_cast<int>(total));
        counts.push_back(static_cast<int>(p.size()));
        total += p.size();
      }
      device = Kokkos::View<T*>(std::string(label), total);
      host = Kokkos::create_mirror_view(device);
      for (std::size_t r = 0; r < pieces.size(); ++r)
        slots.emplace_back(device.data() + offsets[r], pieces[r].extent(0), pieces[r].extent(1),
                           pieces[r].extent(2));
    }
  };

  exec_space m_exec;
  MPI_Comm m_comm;
  std::vector<piece_view<T>> m_sends, m_recvs;
  packing m_packed_sends, m_packed_recvs;
};

// A smooth start, a sum of sines of the global coordinates (so that the field is continuous
// across the slabs), made once on the host for the slab whose first x-plane is x0.
template <class T>
void initialise(const field_view<T>& slab, std::size_t x0, const settings& s) {
  constexpr double two_pi = 6.283185307179586;
  auto host = Kokkos::create_mirror_view(slab);
  for (std::size_t i = 0; i < slab.extent(0); ++i)
    for (std::size_t j = 0; j < slab.extent(1); ++j)
      for (std::size_t k = 0; k < slab.extent(2); ++k) {
        const double x = double(x0 + i) / double(s.nx), y = double(j) / double(s.ny),
                     z = double(k) / double(s.nz);
        host(i, j, k) = T(3.0 + std::sin(two_pi * x) + 0.5 * std::sin(two_pi * (2 * y + x)) +
                          0.25 * std::cos(two_pi * 3 * z));
      }
  Kokkos::deep_copy(slab, host);
}

// A step's change of the field: small and smooth, as a simulation's time step would make it,
// and another every step, so that no transpose sends what an earlier one did. A bump, highest
// at the centre of the grid, growing with the step.
template <class T>
void perturb(const exec_space& exec, const field_view<T>& slab, std::size_t x0, int step,
             const settings& s) {
  const double nx = double(s.nx), ny = double(s.ny), nz = double(s.nz);
  const double amount = 1e-3 * step;
  Kokkos::parallel_for(
      "mpi_transpose::perturb",
      Kokkos::MDRangePolicy<exec_space, Kokkos::Rank<3>>(
          exec, {0, 0, 0}, {slab.extent(0), slab.extent(1), slab.extent(2)}),
      KOKKOS_LAMBDA(std::size_t i, std::size_t j, std::size_t k) {
        const double x = (double(x0 + i) + 0.5) / nx, y = (double(j) + 0.5) / ny,
                     z = (double(k) + 0.5) / nz;
        slab(i, j, k) += T(amount * x * (1 - x) * y * (1 - y) * z * (1 - z));
      });
}

template <class T>
KOKKOS_INLINE_FUNCTION bool same_bits(T a, T b) {
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  bits p, q;
  std::memcpy(&p, &a, sizeof p);
  std::memcpy(&q, &b, sizeof q);
  return p == q;
}

struct difference {
  long long cells = 0;  // over all ranks
  long long first = 0;  // where cells > 0: the first such cell's index in the global grid
};

// Where `a` and `b` (the cells from (x0, y0, 0) on of the global grid) differ bit for bit.
template <class T>
difference compare(const exec_space& exec, const field_view<T>& a, const field_view<T>& b,
                   std::size_t x0, std::size_t y0, const settings& s, MPI_Comm comm) {
  const Kokkos::MDRangePolicy<exec_space, Kokkos::Rank<3>> cells(
      exec, {0, 0, 0}, {a.extent(0), a.extent(1), a.extent(2)});
  long long wrong = 0;
  Kokkos::parallel_reduce(
      "mpi_transpose::compare", cells,
      KOKKOS_LAMBDA(std::size_t i, std::size_t j, std::size_t k, long long& count) {
        count += !same_bits(a(i, j, k), b(i, j, k));
      },
      wrong);
  exec.fence();
  difference all;
  MPI_Allreduce(&wrong, &all.cells, 1, MPI_LONG_LONG, MPI_SUM, comm);
  if (all.cells == 0) return all;
  const long long ny = static_cast<long long>(s.ny), nz = static_cast<long long>(s.nz);
  const long long gx = static_cast<long long>(x0), gy = static_cast<long long>(y0);
  long long first = LLONG_MAX;
  Kokkos::parallel_reduce(
      "mpi_transpose::first_difference", cells,
      KOKKOS_LAMBDA(std::size_t i, std::size_t j, std::size_t k, long long& least) {
        const long long at =
            ((gx + static_cast<long long>(i)) * ny + gy + static_cast<long long>(j)) * nz +
            static_cast<long long>(k);
        if (!same_bits(a(i, j, k), b(i, j, k)) && at < least) least = at;
      },
      Kokkos::Min<long long>(first));
  exec.fence();
  MPI_Allreduce(&first, &all.first, 1, MPI_LONG_LONG, MPI_MIN, comm);
  return all;
}

// The slowest rank's time for `work`, the ranks starting together (so that a rank's wait for a
// late one is not counted as its transfer).
template <class Work>
double timed(MPI_Comm comm, Work&& work) {
  MPI_Barrier(comm);
  const double started = MPI_Wtime();
  work();
  const double seconds = MPI_Wtime() - started;
  double slowest = 0;
  MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return slowest;
}

// wire/raw as a percentage, or "-" where nothing was sent (a single rank sends only to itself).
std::string ratio(unsigned long long wire, unsigned long long raw) {
  if (raw == 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * double(wire) / double(raw));
  return text;
}

template <class T>
int run(const settings& s) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const exec_space exec;
  const range xs = share(s.nx, size, rank), ys = share(s.ny, size, rank);
  const std::size_t planes = xs.second - xs.first, rows = ys.second - ys.first;
  // The slab, and what each transpose makes of it: the compressed run's pencil and the slab it
  // transposes back to, and the same for the plain-MPI run.
  field_view<T> slab("slab", planes, s.ny, s.nz);
  field_view<T> pencil("pencil", s.nx, rows, s.nz), plain_pencil("plain pencil", s.nx, rows, s.nz);
  field_view<T> returned("returned", planes, s.ny, s.nz),
      plain_returned("plain returned", planes, s.ny, s.nz);
  ndzip::mpi::alltoall_plan forward(exec, cut(slab, axis::y, size), cut(pencil, axis::x, size),
                                    comm, s.options);
  ndzip::mpi::alltoall_plan backward(exec, cut(pencil, axis::x, size), cut(returned, axis::y, size),
                                     comm, s.options);
  plain_alltoall<T> plain_forward(exec, cut(slab, axis::y, size), cut(plain_pencil, axis::x, size),
                                  comm);
  plain_alltoall<T> plain_backward(exec, cut(plain_pencil, axis::x, size),
                                   cut(plain_returned, axis::y, size), comm);
  initialise(slab, xs.first, s);

  const char* type = s.single ? "float" : "double";
  if (rank == 0)
    std::printf(
        "mpi_transpose: %d ranks, %zux%zux%zu %ss (%.1f MiB a rank), %d steps: slabs of %zu-%zu "
        "x-planes to pencils of %zu-%zu y-rows and back\n"
        "%5s %11s %11s %11s %11s %14s %14s %8s\n",
        size, s.nx, s.ny, s.nz, type,
        double(s.nx * s.ny * s.nz * sizeof(T)) / double(size) / double(1 << 20), s.steps,
        s.nx / size, (s.nx + size - 1) / size, s.ny / size, (s.ny + size - 1) / size, "step",
        "ndzip fwd s", "ndzip bwd s", "MPI fwd s", "MPI bwd s", "raw bytes", "wire bytes",
        "wire/raw");
  double totals[4] = {0, 0, 0, 0};  // seconds: ndzip forward, backward, MPI forward, backward
  unsigned long long total_raw = 0, total_wire = 0;
  for (int step = 1; step <= s.steps; ++step) {
    perturb(exec, slab, xs.first, step, s);
    exec.fence();
    ndzip::mpi::collective_stats there, back;
    const double seconds[4] = {timed(comm, [&] { there = forward.execute(); }),
                               timed(comm, [&] { back = backward.execute(); }),
                               timed(comm, [&] { plain_forward.execute(); }),
                               timed(comm, [&] { plain_backward.execute(); })};
    unsigned long long mine[2] = {there.sent.raw_bytes + back.sent.raw_bytes,
                                  there.sent.wire_bytes + back.sent.wire_bytes},
                       all[2];
    MPI_Reduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm);
    for (int t = 0; t < 4; ++t) totals[t] += seconds[t];
    total_raw += all[0];
    total_wire += all[1];
    if (rank == 0)
      std::printf("%5d %11.4f %11.4f %11.4f %11.4f %14llu %14llu %8s\n", step, seconds[0],
                  seconds[1], seconds[2], seconds[3], all[0], all[1],
                  ratio(all[1], all[0]).c_str());

    // The checks, every step, on every rank (each is collective): the compressed pencil must
    // equal the plain one, and both round trips must give back the slab.
    const auto check = [&](const char* what, const field_view<T>& a, const field_view<T>& b,
                           std::size_t x0, std::size_t y0) {
      const difference d = compare(exec, a, b, x0, y0, s, comm);
      if (d.cells != 0 && rank == 0) {
        const long long nz = static_cast<long long>(s.nz), ny = static_cast<long long>(s.ny);
        std::fprintf(stderr,
                     "mpi_transpose: FAILED: step %d: %lld cells of %s differ, the first at "
                     "(x, y, z) = (%lld, %lld, %lld)\n",
                     step, d.cells, what, d.first / (ny * nz), d.first / nz % ny, d.first % nz);
      }
      return d.cells == 0;
    };
    const bool pencils =
        check("the pencils from ndzip and from MPI_Alltoallv", pencil, plain_pencil, 0, ys.first);
    const bool round_trip =
        check("the slab and its round trip through ndzip", returned, slab, xs.first, 0);
    const bool plain_round_trip = check("the slab and its round trip through MPI_Alltoallv",
                                        plain_returned, slab, xs.first, 0);
    if (!pencils || !round_trip || !plain_round_trip) return 1;
  }
  if (rank == 0)
    std::printf(
        "total %11.4f %11.4f %11.4f %11.4f %14llu %14llu %8s\n"
        "mpi_transpose: bit-exact: every step's pencils equal MPI_Alltoallv's and its slabs "
        "come back unchanged; %lld bytes saved on the wire per step\n",
        totals[0], totals[1], totals[2], totals[3], total_raw, total_wire,
        ratio(total_wire, total_raw).c_str(),
        (static_cast<long long>(total_raw) - static_cast<long long>(total_wire)) / s.steps);
  return 0;
}

// The one of `values` that `name_of` calls `name`, into `to`; whether there was one.
template <class T, class Name>
bool pick(const std::string& name, std::initializer_list<T> values, Name name_of, T& to) {
  for (const T v : values)
    if (name == name_of(v)) {
      to = v;
      return true;
    }
  return false;
}

bool parse(int argc, char** argv, settings& s, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--n" || arg == "--nx" || arg == "--ny" || arg == "--nz" || arg == "--steps") &&
        i + 1 < argc) {
      const long limit = arg == "--steps" ? 1000000 : 1024;
      char* end = nullptr;
      const long value = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || value < 1 || value > limit) {
        error = arg + " takes a whole number from 1 to " + std::to_string(limit) + ", not '" +
                argv[i] + "'";
        return false;
      }
      const auto cells = static_cast<std::size_t>(value);
      if (arg == "--steps") s.steps = static_cast<int>(value);
      if (arg == "--n" || arg == "--nx") s.nx = cells;
      if (arg == "--n" || arg == "--ny") s.ny = cells;
      if (arg == "--n" || arg == "--nz") s.nz = cells;
    } else if (arg == "--type" && i + 1 < argc) {
      const std::string name = argv[++i];
      if (name != "float" && name != "double") {
        error = "--type takes float or double, not '" + name + "'";
        return false;
      }
      s.single = name == "float";
    } else if (arg == "--compression" && i + 1 < argc) {
      const std::string name = argv[++i];
      using choice = ndzip::mpi::compression_choice;
      if (!pick(name, {choice::adaptive, choice::always, choice::never},
                ndzip::mpi::compression_name, s.options.compression)) {
        error = "--compression takes adaptive, always or never, not '" + name + "'";
        return false;
      }
    } else if (arg == "--transport" && i + 1 < argc) {
      const std::string name = argv[++i];
      using kind = ndzip::mpi::transport_kind;
      if (!pick(name, {kind::automatic, kind::staged, kind::mpi_device}, ndzip::mpi::transport_name,
                s.options.transport)) {
        error = "--transport takes automatic, staged or mpi-device, not '" + name + "'";
        return false;
      }
    } else {
      error = "unknown or incomplete argument '" + arg +
              "' (usage: ndzip-mpi-transpose-example [--n N | --nx NX --ny NY --nz NZ] "
              "[--steps STEPS] [--type float|double] [--transport automatic|staged|mpi-device] "
              "[--compression adaptive|always|never])";
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int status = 0;
  {
    settings s;
    std::string error;
    if (!parse(argc, argv, s, error)) {
      std::fprintf(stderr, "ndzip-mpi-transpose-example: %s\n", error.c_str());
      status = 2;
    } else if (provided < MPI_THREAD_FUNNELED) {
      std::fprintf(stderr, "ndzip-mpi-transpose-example: this MPI offers no MPI_THREAD_FUNNELED\n");
      status = 1;
    } else {
      Kokkos::ScopeGuard kokkos(argc, argv);
      try {
        status = s.single ? run<float>(s) : run<double>(s);
      } catch (const std::exception& e) {
        // The other ranks may be waiting in a transpose for this one: end them all.
        std::fprintf(stderr, "ndzip-mpi-transpose-example: %s\n", e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
  // Every rank reaches this with the same status (the same arguments; the checks are
  // collective).
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
