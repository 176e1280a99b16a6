// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mpi_halo: heat diffusion on a periodic 3-D domain split over a Cartesian grid of MPI ranks.
// Each rank owns an n^3 block with one layer of ghost cells; every step the 26 neighbours
// (faces, edges and corners, as a 27-point stencil needs) exchange their boundary layers, then
// each rank updates its interior.
//
// The pattern: describe the pieces of the halo once, as (subview, peer, tag) sends and
// receives, in an ndzip::mpi::neighbor_exchange; each step's exchange() then compresses all the
// sends in one batch launch, sends them, and receives and decodes the neighbours' pieces.
//
// The same simulation runs a second time beside it with a plain-MPI halo exchange. The two
// must agree bit for bit after every step (ndzip is lossless); the program says so, prints
// the bytes the compressed halos saved on the wire per step, and exits with 1 otherwise.
//
//   mpiexec -n 4 ndzip-mpi-halo-example [--n CELLS] [--steps STEPS]
//                                       [--transport automatic|staged|mpi-device|nccl]
//                                       [--compression adaptive|always|never]
//
// Each step prints the bytes the halo took over all ranks, the slowest rank's exchange time,
// and how the ranks sent their pieces: "compressed" where every rank compressed, "raw" where
// every rank sent them plain, else how many ranks sent them raw (options::compression:
// adaptive, the default, times the exchange both ways on each rank and keeps the faster, so
// ranks may choose differently; the first two steps of each of the two halos compress).
//
// --transport nccl (where ndzip::mpi is built with NCCL, one rank per GPU): the compressed
// halos go through an ndzip::mpi::nccl_communicator's exchange() on an NCCL communicator made
// over the rank grid, the plain run's through MPI as before.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <ndzip/mpi.hpp>
#ifdef NDZIP_MPI_HAS_NCCL
#include <ndzip/mpi/nccl.hpp>
#endif
#include <string>
#include <utility>
#include <vector>

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;
using block_view = Kokkos::View<double***>;  // n + 2 cells per axis: interior and ghosts
using piece_view = Kokkos::View<double***, Kokkos::LayoutStride>;
using range = std::pair<std::size_t, std::size_t>;
using direction = std::array<int, 3>;  // -1, 0 or 1 per axis

struct settings {
  std::size_t n = 128;  // interior cells per axis and rank
  int steps = 20;
  ndzip::mpi::options options;  // --transport, --compression
  bool nccl = false;             // --transport nccl
};

// The 26 directions to a neighbour.
std::vector<direction> directions() {
  std::vector<direction> all;
  for (int x = -1; x <= 1; ++x)
    for (int y = -1; y <= 1; ++y)
      for (int z = -1; z <= 1; ++z)
        if (x || y || z) all.push_back({x, y, z});
  return all;
}

direction opposite(const direction& d) { return {-d[0], -d[1], -d[2]}; }

// A message travelling in direction d carries this tag, so that two pieces between the same
// pair of ranks (a thin rank grid makes one rank the neighbour in several directions, itself
// included) cannot be mistaken for each other.
int tag_of(const direction& d) { return (d[0] + 1) * 9 + (d[1] + 1) * 3 + (d[2] + 1); }

// The cells of `block` next to side d: the interior layer the neighbour in direction d needs
// (ghost = false), or the ghost layer that neighbour fills (ghost = true).
piece_view region(const block_view& block, std::size_t n, const direction& d, bool ghost) {
  std::array<range, 3> r;
  for (int a = 0; a < 3; ++a) {
    if (d[a] == 0)
      r[a] = {1, n + 1};
    else if (d[a] < 0)
      r[a] = ghost ? range{0, 1} : range{1, 2};
    else
      r[a] = ghost ? range{n + 1, n + 2} : range{n, n + 1};
  }
  return Kokkos::subview(block, r[0], r[1], r[2]);
}

struct rank_grid {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  int dims[3] = {0, 0, 0};
  int coords[3] = {0, 0, 0};

  rank_grid() {
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 3, dims);
    int periodic[3] = {1, 1, 1};
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periodic, 1, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Cart_coords(comm, rank, 3, coords);
  }
  ~rank_grid() { MPI_Comm_free(&comm); }
  int neighbour(const direction& d) const {
    int c[3] = {coords[0] + d[0], coords[1] + d[1], coords[2] + d[2]};
    int r = 0;
    MPI_Cart_rank(comm, c, &r);
    return r;
  }
};

// The halo of `block` as ndzip::mpi pieces: towards each direction d, the interior layer the
// neighbour there needs, tagged with d; from the neighbour at -d (which sends towards d), into
// the ghost layer at -d.
std::pair<std::vector<ndzip::mpi::piece<piece_view>>, std::vector<ndzip::mpi::piece<piece_view>>>
halo_pieces(const block_view& block, std::size_t n, const rank_grid& grid) {
  std::vector<ndzip::mpi::piece<piece_view>> sends, receives;
  for (const auto& d : directions()) {
    sends.push_back({region(block, n, d, false), grid.neighbour(d), tag_of(d)});
    receives.push_back(
        {region(block, n, opposite(d), true), grid.neighbour(opposite(d)), tag_of(d)});
  }
  return {sends, receives};
}

// The same halo exchange by plain MPI, for the check: each piece packed into a contiguous host
// buffer, sent and received raw, unpacked.
class plain_halo {
 public:
  plain_halo(const block_view& block, std::size_t n, const rank_grid& grid) : m_comm(grid.comm) {
    std::tie(m_sends, m_receives) = halo_pieces(block, n, grid);
    for (const auto* pieces : {&m_sends, &m_receives})
      for (const auto& p : *pieces) {
        block_view packed("packed", p.values.extent(0), p.values.extent(1), p.values.extent(2));
        m_packed.push_back(packed);
        m_host.push_back(Kokkos::create_mirror_view(packed));
      }
  }

  void exchange() {
    const std::size_t count = m_sends.size();
    std::vector<MPI_Request> requests(2 * count);
    for (std::size_t i = 0; i < count; ++i) {
      auto& host = m_host[count + i];
      MPI_Irecv(host.data(), static_cast<int>(host.size()), MPI_DOUBLE, m_receives[i].peer,
                m_receives[i].tag, m_comm, &requests[i]);
    }
    for (std::size_t i = 0; i < count; ++i) {
      Kokkos::deep_copy(m_packed[i], m_sends[i].values);
      Kokkos::deep_copy(m_host[i], m_packed[i]);
      MPI_Isend(m_host[i].data(), static_cast<int>(m_host[i].size()), MPI_DOUBLE, m_sends[i].peer,
                m_sends[i].tag, m_comm, &requests[count + i]);
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    for (std::size_t i = 0; i < count; ++i) {
      Kokkos::deep_copy(m_packed[count + i], m_host[count + i]);
      Kokkos::deep_copy(m_receives[i].values, m_packed[count + i]);
    }
  }

 private:
  MPI_Comm m_comm;
  std::vector<ndzip::mpi::piece<piece_view>> m_sends, m_receives;
  std::vector<block_view> m_packed;  // sends, then receives
  std::vector<block_view::HostMirror> m_host;
};

// A smooth start: two warm Gaussian spots on a cool background, in global coordinates, so
// that the field is continuous across rank boundaries. Made once, on the host.
void initialise(const block_view& u, std::size_t n, const rank_grid& grid) {
  auto host = Kokkos::create_mirror_view(u);
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= n; ++j)
      for (std::size_t k = 1; k <= n; ++k) {
        const double x = (double(n * grid.coords[0] + i) - 0.5) / double(n * grid.dims[0]);
        const double y = (double(n * grid.coords[1] + j) - 0.5) / double(n * grid.dims[1]);
        const double z = (double(n * grid.coords[2] + k) - 0.5) / double(n * grid.dims[2]);
        const double a = (x - 0.3) * (x - 0.3) + (y - 0.4) * (y - 0.4) + (z - 0.5) * (z - 0.5);
        const double b = (x - 0.7) * (x - 0.7) + (y - 0.6) * (y - 0.6) + (z - 0.4) * (z - 0.4);
        host(i, j, k) = 280.0 + 40.0 * std::exp(-a / 0.02) + 25.0 * std::exp(-b / 0.01);
      }
  Kokkos::deep_copy(u, host);
}

// One explicit step of diffusion with a 27-point stencil: each cell moves towards the mean of
// its 26 neighbours.
void diffuse(const exec_space& exec, const block_view& from, const block_view& to, std::size_t n) {
  Kokkos::parallel_for(
      "mpi_halo::diffuse",
      Kokkos::MDRangePolicy<exec_space, Kokkos::Rank<3>>(exec, {1, 1, 1}, {n + 1, n + 1, n + 1}),
      KOKKOS_LAMBDA(std::size_t i, std::size_t j, std::size_t k) {
        double sum = 0;
        for (int x = -1; x <= 1; ++x)
          for (int y = -1; y <= 1; ++y)
            for (int z = -1; z <= 1; ++z) sum += from(i + x, j + y, k + z);
        const double centre = from(i, j, k);
        to(i, j, k) = centre + 0.5 * ((sum - centre) / 26.0 - centre);
      });
}

// Interior cells of `a` whose bits differ from those of `b`, over all ranks.
long long differences(const exec_space& exec, const block_view& a, const block_view& b,
                      std::size_t n, MPI_Comm comm) {
  long long wrong = 0;
  Kokkos::parallel_reduce(
      "mpi_halo::compare",
      Kokkos::MDRangePolicy<exec_space, Kokkos::Rank<3>>(exec, {1, 1, 1}, {n + 1, n + 1, n + 1}),
      KOKKOS_LAMBDA(std::size_t i, std::size_t j, std::size_t k, long long& count) {
        const double x = a(i, j, k), y = b(i, j, k);
        std::uint64_t p, q;
        std::memcpy(&p, &x, sizeof p);
        std::memcpy(&q, &y, sizeof q);
        count += p != q;
      },
      wrong);
  exec.fence();
  long long all = 0;
  MPI_Allreduce(&wrong, &all, 1, MPI_LONG_LONG, MPI_SUM, comm);
  return all;
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
    if ((arg == "--n" || arg == "--steps") && i + 1 < argc) {
      char* end = nullptr;
      const long value = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || value < 1 || value > (arg == "--n" ? 1024 : 1000000)) {
        error = arg + " takes a whole number from 1 to " + (arg == "--n" ? "1024" : "1000000") +
                ", not '" + argv[i] + "'";
        return false;
      }
      if (arg == "--n")
        s.n = static_cast<std::size_t>(value);
      else
        s.steps = static_cast<int>(value);
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
      bool known = pick(name, {kind::automatic, kind::staged, kind::mpi_device},
                        ndzip::mpi::transport_name, s.options.transport);
#ifdef NDZIP_MPI_HAS_NCCL
      if (name == "nccl") s.nccl = known = true;
#endif
      if (!known) {
        error = "--transport takes automatic, staged, mpi-device or (where built with NCCL) "
                "nccl, not '" + name + "'";
        return false;
      }
    } else {
      error = "unknown or incomplete argument '" + arg +
              "' (usage: ndzip-mpi-halo-example [--n CELLS] [--steps STEPS] "
              "[--transport automatic|staged|mpi-device|nccl] "
              "[--compression adaptive|always|never])";
      return false;
    }
  }
  return true;
}

int run(const settings& s) {
  const rank_grid grid;
  const exec_space exec;
  const std::size_t n = s.n;
  // Two buffers per run (the step reads one and writes the other), and a halo exchange for
  // each, made once. The compressed run uses u, the plain-MPI run v.
  std::array<block_view, 2> u = {block_view("u0", n + 2, n + 2, n + 2),
                                 block_view("u1", n + 2, n + 2, n + 2)};
  std::array<block_view, 2> v = {block_view("v0", n + 2, n + 2, n + 2),
                                 block_view("v1", n + 2, n + 2, n + 2)};
  std::vector<std::unique_ptr<ndzip::mpi::neighbor_exchange<exec_space, piece_view>>> compressed;
  std::vector<plain_halo> plain;
  for (int b = 0; b < 2; ++b) {
    auto [sends, receives] = halo_pieces(u[b], n, grid);
    compressed.push_back(std::make_unique<ndzip::mpi::neighbor_exchange<exec_space, piece_view>>(
        exec, grid.comm, std::move(sends), std::move(receives), s.options));
    plain.emplace_back(v[b], n, grid);
  }
  initialise(u[0], n, grid);
  Kokkos::deep_copy(v[0], u[0]);
#ifdef NDZIP_MPI_HAS_NCCL
  // --transport nccl: the same pieces, exchanged through NCCL (tags order the pieces between
  // two ranks). NCCL needs a GPU of its own per rank.
  std::unique_ptr<ncclComm_t, void (*)(ncclComm_t*)> nccl(nullptr, [](ncclComm_t* c) {
    ncclCommDestroy(*c);
    delete c;
  });
  std::optional<ndzip::mpi::nccl_communicator<exec_space>> nccl_halo;
  std::array<decltype(halo_pieces(u[0], n, grid)), 2> nccl_pieces;
  if (s.nccl) {
    ncclUniqueId id;
    if (grid.rank == 0) ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, grid.comm);
    nccl.reset(new ncclComm_t(nullptr));
    if (ncclCommInitRank(nccl.get(), grid.size, id, grid.rank) != ncclSuccess)
      throw std::runtime_error("ncclCommInitRank failed (one GPU per rank?)");
    nccl_halo.emplace(exec, *nccl, s.options);
    for (int b = 0; b < 2; ++b) nccl_pieces[b] = halo_pieces(u[b], n, grid);
  }
#endif

  if (grid.rank == 0)
    std::printf(
        "mpi_halo: %d ranks (%dx%dx%d), %zu^3 cells each, %d steps, 26 halo pieces\n"
        "%5s %14s %14s %14s %8s %9s %s\n",
        grid.size, grid.dims[0], grid.dims[1], grid.dims[2], n, s.steps, "step", "raw bytes",
        "wire bytes", "saved bytes", "wire/raw", "ms", "pieces");
  unsigned long long total_raw = 0, total_wire = 0;
  int current = 0;
  for (int step = 1; step <= s.steps; ++step) {
    const double started = MPI_Wtime();
#ifdef NDZIP_MPI_HAS_NCCL
    const auto stats = s.nccl ? nccl_halo->exchange(nccl_pieces[current].first,
                                                    nccl_pieces[current].second)
                              : compressed[current]->exchange();
#else
    const auto stats = compressed[current]->exchange();
#endif
    const double seconds = MPI_Wtime() - started;
    double slowest = 0;  // of the ranks' exchanges, printed
    MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, grid.comm);
    plain[current].exchange();
    diffuse(exec, u[current], u[1 - current], n);
    diffuse(exec, v[current], v[1 - current], n);
    exec.fence();
    current = 1 - current;

    unsigned long long mine[2] = {stats.sent.raw_bytes, stats.sent.wire_bytes}, all[2];
    MPI_Reduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, grid.comm);
    // The bytes are every rank's, so is the column that says how they went (rank 0's own
    // choice printed for all said "raw" on a step the others compressed to 60 %).
    int sent_plain = stats.sent.plain ? 1 : 0, ranks_plain = 0;
    MPI_Reduce(&sent_plain, &ranks_plain, 1, MPI_INT, MPI_SUM, 0, grid.comm);
    total_raw += all[0];
    total_wire += all[1];
    if (grid.rank == 0) {
      const std::string pieces = ranks_plain == 0            ? std::string("compressed")
                                 : ranks_plain == grid.size ? std::string("raw")
                                                            : std::to_string(ranks_plain) + "/" +
                                                                  std::to_string(grid.size) +
                                                                  " ranks raw";
      std::printf("%5d %14llu %14llu %14lld %7.1f%% %9.3f %s\n", step, all[0], all[1],
                  static_cast<long long>(all[0]) - static_cast<long long>(all[1]),
                  100.0 * double(all[1]) / double(all[0]), 1e3 * slowest, pieces.c_str());
    }
    // The check, every step: the compressed run must equal the plain one bit for bit.
    const long long wrong = differences(exec, u[current], v[current], n, grid.comm);
    if (wrong != 0) {
      if (grid.rank == 0)
        std::fprintf(stderr,
                     "mpi_halo: FAILED: after step %d, %lld cells differ from the uncompressed "
                     "run\n",
                     step, wrong);
      return 1;
    }
  }
  if (grid.rank == 0)
    std::printf(
        "total %14llu %14llu %14lld %7.1f%%\n"
        "mpi_halo: bit-exact: every step equals the uncompressed run; %lld bytes saved on the "
        "wire per step\n",
        total_raw, total_wire,
        static_cast<long long>(total_raw) - static_cast<long long>(total_wire),
        100.0 * double(total_wire) / double(total_raw),
        (static_cast<long long>(total_raw) - static_cast<long long>(total_wire)) / s.steps);
  return 0;
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
      std::fprintf(stderr, "ndzip-mpi-halo-example: %s\n", error.c_str());
      status = 2;
    } else if (provided < MPI_THREAD_FUNNELED) {
      std::fprintf(stderr, "ndzip-mpi-halo-example: this MPI offers no MPI_THREAD_FUNNELED\n");
      status = 1;
    } else {
      Kokkos::ScopeGuard kokkos(argc, argv);
      try {
        status = run(s);
      } catch (const std::exception& e) {
        // The other ranks may be waiting for this one's halo: end them all.
        std::fprintf(stderr, "ndzip-mpi-halo-example: %s\n", e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
  // Every rank reaches this with the same status (the same arguments; the check is collective).
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
