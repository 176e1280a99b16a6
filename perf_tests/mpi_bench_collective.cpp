// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip-mpi-bench --collective: the compressed collectives of ndzip::mpi (ndzip/mpi/bcast.hpp ...
// alltoall.hpp) against MPI's own collective of the same values, on every rank of
// MPI_COMM_WORLD (2 or more); with --transport nccl, those of ndzip::mpi::nccl_communicator
// against NCCL's.
//
// A piece is the first rows of a field of about the size asked for (--sizes-mib), the same field
// on every rank (synthetic, random bits or a dataset of a manifest, as the point-to-point mode
// picks them). bcast sends the root's piece to every rank; gather every rank's to the root;
// scatter n copies of the piece from the root, one to each of the n ranks; allgather every
// rank's to every rank; alltoall n copies from every rank, one to each rank. Raw: MPI_Bcast,
// MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv or MPI_Alltoallv of the values, in the memory the
// compressed collective's transport uses: host memory; device memory handed to MPI with
// mpi-device, else staged through host-pinned copies made in the call, as the point-to-point
// mode's raw path does. Compressed: the operation's ndzip::mpi plan, made once, reading the same
// sent buffers and writing the same receive buffers. Through NCCL (one NCCL communicator over
// MPI_COMM_WORLD, one rank per GPU), raw: ncclBroadcast, ncclAllGather, or grouped ncclSend and
// ncclRecv of each piece (gather, scatter, alltoall: NCCL has no such collectives) of the values
// in device memory, on the instance's stream, waited for; compressed: the operation's plan of an
// nccl_communicator (plan_bcast ... plan_alltoall). Every piece received by either is compared
// bit for bit with the field (raw: after its warm-up call; compressed: after the timed calls);
// since all pieces hold the same values, this checks the values, not where they went
// (mpi/tests/test_collectives.cpp checks that).
//
// The time of a call is its slowest rank's, from an MPI_Barrier to the call's return on that
// rank (a raw NCCL call returns once its stream is done, a plan once its values are decoded);
// each figure is the median over --repetitions calls, raw and compressed calls alternating. GB/s = the uncompressed bytes of the
// largest result one rank ends with (its piece for bcast and scatter; n pieces for gather at the
// root, allgather and alltoall: nccl-tests' "algorithm bandwidth") / that time. The time split
// comes from ndzip::mpi::collective_stats, each part that of the rank which spent the longest
// on it in the call (the root compresses a bcast, every other rank decodes it).

#include "mpi_bench_collective.hpp"

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <ndzip/mpi.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#ifdef NDZIP_MPI_HAS_NCCL
#include <cuda_runtime.h>
#endif

namespace ndzip::perf::mpi_bench {
namespace {

using exec_space = Kokkos::DefaultExecutionSpace;
using memory_space = exec_space::memory_space;
using clock_type = std::chrono::steady_clock;
enum class operation { bcast, gather, scatter, allgather, alltoall };
constexpr const char* operation_names[] = {"bcast", "gather", "scatter", "allgather", "alltoall"};

const char* name_of(operation o) { return operation_names[static_cast<int>(o)]; }
bool rooted(operation o) { return o != operation::allgather && o != operation::alltoall; }

int ranks() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// The pieces rank `me` of `n` sends and receives in operation `o` (its piece to itself included).
std::size_t pieces_sent(operation o, int me, int root, int n) {
  switch (o) {
    case operation::bcast:
      return me == root;
    case operation::scatter:
      return me == root ? n : 0;
    case operation::alltoall:
      return n;
    default:  // gather, allgather
      return 1;
  }
}

std::size_t pieces_received(operation o, int me, int root, int n) {
  switch (o) {
    case operation::bcast:  // the root's result is its own piece
      return me != root;
    case operation::gather:
      return me == root ? n : 0;
    case operation::scatter:
      return 1;
    default:  // allgather, alltoall
      return n;
  }
}

// The pieces of the largest result one rank ends with: what GB/s counts.
std::size_t result_pieces(operation o, int n) {
  return o == operation::bcast || o == operation::scatter ? 1 : n;
}

// Values where plain MPI (or NCCL) reads or writes them (raw_channel): `count` of them in the
// execution space's memory, handed over there or through a host-pinned copy made in each call.
template <class T>
raw_channel<Kokkos::View<T*, memory_space>> raw_buffer(std::size_t count, bool device_pointers) {
  return {Kokkos::View<T*, memory_space>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "values"),
                                         count),
          device_pointers};
}

// One operation through plain MPI, on this rank's sent and received pieces of `count` values
// each (piece p of a buffer at p * count), counted in values of T.
template <class T>
struct raw_collective {
  operation op;
  int root, count;
  raw_channel<Kokkos::View<T*, memory_space>> send, recv;
  std::vector<int> counts, displs;  // per rank, one piece each; bcast has none

  raw_collective(operation o, int root_rank, int piece, bool device_pointers)
      : op(o),
        root(root_rank),
        count(piece),
        send(raw_buffer<T>(pieces_sent(o, rank(), root_rank, ranks()) * piece, device_pointers)),
        recv(raw_buffer<T>(pieces_received(o, rank(), root_rank, ranks()) * piece,
                           device_pointers)) {
    if (o == operation::bcast) return;
    for (int r = 0; r < ranks(); ++r) {
      counts.push_back(piece);
      displs.push_back(r * piece);
    }
  }

  void call(const exec_space& exec) {
    const MPI_Datatype type = std::is_same_v<T, double> ? MPI_DOUBLE : MPI_FLOAT;
    const MPI_Comm comm = MPI_COMM_WORLD;
    send.before_send(exec);
    T* const out = send.wire();
    T* const in = recv.wire();
    switch (op) {
      case operation::bcast:
        MPI_Bcast(rank() == root ? out : in, count, type, root, comm);
        break;
      case operation::gather:
        MPI_Gatherv(out, count, type, in, counts.data(), displs.data(), type, root, comm);
        break;
      case operation::scatter:
        MPI_Scatterv(out, counts.data(), displs.data(), type, in, count, type, root, comm);
        break;
      case operation::allgather:
        MPI_Allgatherv(out, count, type, in, counts.data(), displs.data(), type, comm);
        break;
      case operation::alltoall:
        MPI_Alltoallv(out, counts.data(), displs.data(), type, in, counts.data(), displs.data(),
                      type, comm);
        break;
    }
    recv.after_receive(exec);
  }
};

template <class T, int Dims>
using piece_view =
    Kokkos::View<std::conditional_t<Dims == 1, T*, std::conditional_t<Dims == 2, T**, T***>>,
                 Kokkos::LayoutRight, memory_space, Kokkos::MemoryUnmanaged>;

// The `count` values at each piece of `values`, as Views of `layout` for the compressed plan.
template <class T, int Dims>
std::vector<piece_view<T, Dims>> pieces_of(const Kokkos::View<T*, memory_space>& values,
                                           std::size_t count, const Kokkos::LayoutRight& layout) {
  std::vector<piece_view<T, Dims>> pieces;
  for (std::size_t at = 0; at < values.size(); at += count)
    pieces.emplace_back(values.data() + at, layout);
  return pieces;
}

using collective_call = std::function<ndzip::mpi::collective_stats()>;

// A plan, made once, as a call the bench can copy (std::function): every copy executes it.
template <class Plan>
collective_call executing(Plan plan) {
  return [p = std::make_shared<Plan>(std::move(plan))] { return p->execute(); };
}

// The collectives through MPI: raw, MPI's own (raw_collective), handed device memory where the
// compressed collectives' transport is (`device_pointers`); compressed, ndzip::mpi's plans over
// MPI_COMM_WORLD.
struct mpi_link {
  const exec_space& exec;
  const ndzip::mpi::options& opts;
  bool device_pointers;
  // A buffer of n pieces is addressed in values by MPI's int counts and displacements.
  static constexpr bool int_counts = true;

  // The CSV's link column: how the bytes met MPI.
  const char* name() const {
    if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible) return "mpi";
    return device_pointers ? "mpi-device" : "mpi-staged";
  }

  template <class T>
  raw_collective<T> raw(operation o, int root, std::size_t count) const {
    return {o, root, static_cast<int>(count), device_pointers};
  }

  // The plan of `o` on this rank's `sends` and `recvs` (pieces_sent and pieces_received of
  // them).
  template <class View>
  collective_call plan(operation o, const std::vector<View>& sends, const std::vector<View>& recvs,
                       int root) const {
    namespace nm = ndzip::mpi;
    const MPI_Comm comm = MPI_COMM_WORLD;
    switch (o) {
      case operation::bcast:
        return executing(nm::bcast_plan<exec_space, View>(
            exec, sends.empty() ? recvs[0] : sends[0], root, comm, opts));
      case operation::gather:
        return executing(
            nm::gather_plan<exec_space, View, View>(exec, sends[0], recvs, root, comm, opts));
      case operation::scatter:
        return executing(
            nm::scatter_plan<exec_space, View, View>(exec, sends, recvs[0], root, comm, opts));
      case operation::allgather:
        return executing(
            nm::allgather_plan<exec_space, View, View>(exec, sends[0], recvs, comm, opts));
      default:
        return executing(nm::alltoall_plan<exec_space, View, View>(exec, sends, recvs, comm, opts));
    }
  }
};

#ifdef NDZIP_MPI_HAS_NCCL
// One operation through NCCL on this rank's sent and received pieces of `count` values each
// (piece p of a buffer at p * count), in device memory, counted in bytes: queued on the
// instance's stream and waited for, so that a call's time is the transfer's.
template <class T>
struct raw_nccl_collective {
  operation op;
  int root;
  std::size_t bytes;  // of a piece
  ncclComm_t comm;
  raw_channel<Kokkos::View<T*, memory_space>> send, recv;

  raw_nccl_collective(operation o, int root_rank, std::size_t count, ncclComm_t c)
      : op(o),
        root(root_rank),
        bytes(count * sizeof(T)),
        comm(c),
        send(raw_buffer<T>(pieces_sent(o, rank(), root_rank, ranks()) * count, true)),
        recv(raw_buffer<T>(pieces_received(o, rank(), root_rank, ranks()) * count, true)) {}

  void call(const exec_space& exec) {
    const cudaStream_t stream = exec.cuda_stream();
    auto* const out = reinterpret_cast<std::byte*>(send.values.data());
    auto* const in = reinterpret_cast<std::byte*>(recv.values.data());
    const int me = rank(), n = ranks();
    // NCCL's own collectives where every piece goes as they lay it out; one group of a send and
    // a receive per piece for the rest, so that all of them progress together.
    if (op == operation::bcast) {
      // In place: the root sends its piece, every other rank receives into its own.
      std::byte* const values = me == root ? out : in;
      check_nccl(ncclBroadcast(values, values, bytes, ncclUint8, root, comm, stream),
                 "ncclBroadcast");
    } else if (op == operation::allgather) {
      check_nccl(ncclAllGather(out, in, bytes, ncclUint8, comm, stream), "ncclAllGather");
    } else {
      const auto send_to = [&](int peer, const std::byte* piece) {
        check_nccl(ncclSend(piece, bytes, ncclUint8, peer, comm, stream), "ncclSend");
      };
      const auto receive_from = [&](int peer, std::byte* piece) {
        check_nccl(ncclRecv(piece, bytes, ncclUint8, peer, comm, stream), "ncclRecv");
      };
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      for (int r = 0; r < n; ++r) {
        const std::size_t at = static_cast<std::size_t>(r) * bytes;  // rank r's piece
        if (op == operation::gather) {
          if (r == root) send_to(r, out);
          if (me == root) receive_from(r, in + at);
        } else if (op == operation::scatter) {
          if (me == root) send_to(r, out + at);
          if (r == root) receive_from(r, in);
        } else {
          send_to(r, out + at);
          receive_from(r, in + at);
        }
      }
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    }
    exec.fence();
  }
};

// The collectives through NCCL: raw, NCCL's own (raw_nccl_collective) on the NCCL communicator
// of `channel`; compressed, the plans of `channel`.
struct nccl_link {
  const ndzip::mpi::nccl_communicator<exec_space>& channel;
  static constexpr bool int_counts = false;  // NCCL counts are size_t
  const char* name() const { return "nccl"; }

  template <class T>
  raw_nccl_collective<T> raw(operation o, int root, std::size_t count) const {
    return {o, root, count, channel.comm()};
  }

  template <class View>
  collective_call plan(operation o, const std::vector<View>& sends, const std::vector<View>& recvs,
                       int root) const {
    switch (o) {
      case operation::bcast:
        return executing(channel.plan_bcast(sends.empty() ? recvs[0] : sends[0], root));
      case operation::gather:
        return executing(channel.plan_gather(sends[0], recvs, root));
      case operation::scatter:
        return executing(channel.plan_scatter(sends, recvs[0], root));
      case operation::allgather:
        return executing(channel.plan_allgather(sends[0], recvs));
      default:
        return executing(channel.plan_alltoall(sends, recvs));
    }
  }
};
#endif

// The medians over `reps` rounds of a call of `a` and one of `b`, each timed from an
// MPI_Barrier to its return as the slowest rank saw it. Interleaved, so that whatever else the
// machine does meanwhile falls on both alike.
template <class A, class B>
std::pair<double, double> timed_medians(int reps, A&& a, B&& b) {
  std::vector<double> seconds(2 * static_cast<std::size_t>(reps));  // a's, then b's
  const auto timed = [](auto& call) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = clock_type::now();
    call();
    return std::chrono::duration<double>(clock_type::now() - start).count();
  };
  for (int k = 0; k < reps; ++k) {
    seconds[k] = timed(a);
    seconds[reps + k] = timed(b);
  }
  MPI_Allreduce(MPI_IN_PLACE, seconds.data(), 2 * reps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return {median(std::vector<double>(seconds.begin(), seconds.begin() + reps)),
          median(std::vector<double>(seconds.begin() + reps, seconds.end()))};
}

// What the timed compressed calls reported (collective_stats), over every rank.
struct call_split {
  // Medians over the calls of the longest any rank spent: waiting for the compression of its
  // sent pieces, in the link's collectives of heads and bytes, in the agreement steps, decoding.
  double compress = 0, link = 0, agree = 0, decompress = 0;
  double ratio = 1;        // raw bytes / wire bytes of every piece the calls sent
  double plain_share = 0;  // of the calls on every rank, those that sent plain
};

call_split split_of(const std::vector<ndzip::mpi::collective_stats>& stats) {
  const std::size_t calls = stats.size();
  std::vector<double> parts(4 * calls);  // part k of call c at k * calls + c
  double sums[3] = {0, 0, 0};            // raw bytes, wire bytes, plain calls
  for (std::size_t c = 0; c < calls; ++c) {
    parts[c] = stats[c].sent.codec_seconds;
    parts[calls + c] = stats[c].link_seconds;
    parts[2 * calls + c] = stats[c].agree_seconds;
    parts[3 * calls + c] = stats[c].received.codec_seconds;
    sums[0] += static_cast<double>(stats[c].sent.raw_bytes);
    sums[1] += static_cast<double>(stats[c].sent.wire_bytes);
    sums[2] += stats[c].sent.plain;
  }
  MPI_Allreduce(MPI_IN_PLACE, parts.data(), static_cast<int>(parts.size()), MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const auto part = [&](std::size_t k) {
    return median(std::vector<double>(parts.begin() + k * calls, parts.begin() + (k + 1) * calls));
  };
  const double ratio = sums[1] > 0 ? sums[0] / sums[1] : 1;
  const double plain_share = sums[2] / static_cast<double>(calls * ranks());
  return {part(0), part(1), part(2), part(3), ratio, plain_share};
}

// Whether every piece every rank received (the `count` values at each piece of `received`)
// holds the field's first `count` values; a piece that does not is named on standard error by
// its rank.
template <class T>
bool verified(const exec_space& exec, operation o, const char* path,
              const Kokkos::View<T*, memory_space>& received,
              const Kokkos::View<T*, memory_space>& field, std::size_t count, int root) {
  int ok = 1;
  for (std::size_t at = 0; at < received.size(); at += count) {
    const std::size_t bad = differing_bits(exec, received.data() + at, field.data(), count);
    if (bad == 0) continue;
    ok = 0;
    const int source =
        o == operation::bcast || o == operation::scatter ? root : static_cast<int>(at / count);
    std::fprintf(stderr,
                 "ndzip-mpi-bench: %s, %s: rank %d, the piece from rank %d: %zu of %zu "
                 "values differ\n",
                 name_of(o), path, rank(), source, bad, count);
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return ok != 0;
}

// One row of the output: an operation on pieces of one size from one input.
struct row {
  const char* link;  // mpi, mpi-staged, mpi-device, nccl
  operation op;
  std::string input;
  const char* type;
  std::string shape;  // of one piece
  std::size_t piece_bytes;
  double raw_seconds, ndzip_seconds;
  call_split split;
  bool verified;
};

void print_header(const collective_config& cfg) {
  if (rank() != 0) return;
  if (cfg.csv)
    std::printf(
        "link,operation,ranks,root,input,type,shape,piece_mib,compression,raw_gbps,ndzip_gbps,"
        "speedup,ratio,compress_s,link_s,agree_s,decompress_s,plain_share,verified\n");
  else
    std::printf("%-9s %-20s %-6s %-16s %9s %9s %9s %6s %6s %8s %8s %8s %8s %5s\n", "operation",
                "input", "type", "piece shape", "MiB", "raw GB/s", "ndzip", "x", "ratio", "comp ms",
                "link ms", "agree ms", "dec ms", "plain");
}

void report(const collective_config& cfg, const row& r) {
  if (rank() != 0) return;
  const double result_bytes =
      static_cast<double>(result_pieces(r.op, ranks())) * static_cast<double>(r.piece_bytes);
  const double raw_gbps = result_bytes / r.raw_seconds / 1e9;
  const double ndzip_gbps = result_bytes / r.ndzip_seconds / 1e9;
  const double mib = static_cast<double>(r.piece_bytes) / 1048576.0;
  const call_split& s = r.split;
  if (cfg.csv) {
    const std::string root = rooted(r.op) ? std::to_string(cfg.root) : "";
    std::printf("%s,%s,%d,%s,%s,%s,%s,%.6g,%s,%.3f,%.3f,%.3f,%.3f,%.6f,%.6f,%.6f,%.6f,%.2f,"
                "%s\n",
                r.link, name_of(r.op), ranks(), root.c_str(), r.input.c_str(), r.type,
                r.shape.c_str(), mib,
                ndzip::mpi::compression_name(cfg.opts.compression), raw_gbps, ndzip_gbps,
                ndzip_gbps / raw_gbps, s.ratio, s.compress, s.link, s.agree, s.decompress,
                s.plain_share, r.verified ? "yes" : "NO");
  } else {
    std::printf(
        "%-9s %-20s %-6s %-16s %9.3f %9.2f %9.2f %6.2f %6.2f %8.3f %8.3f %8.3f %8.3f %5.2f%s\n",
        name_of(r.op), r.input.substr(0, 20).c_str(), r.type, r.shape.c_str(), mib, raw_gbps,
        ndzip_gbps, ndzip_gbps / raw_gbps, s.ratio, s.compress * 1e3, s.link * 1e3, s.agree * 1e3,
        s.decompress * 1e3, s.plain_share, r.verified ? "" : "  VERIFICATION FAILED");
  }
  std::fflush(stdout);
}

// Operation `o` on pieces of the field's first `rows` rows, raw and compressed through `link`
// (mpi_link, nccl_link). Returns whether every value arrived intact.
template <class T, int Dims, class Link>
bool run_pieces(const exec_space& exec, const collective_config& cfg, const Link& link,
                operation o, const std::string& name, const Kokkos::View<T*, memory_space>& field,
                const std::vector<std::size_t>& shape, std::size_t rows) {
  const int n = ranks();
  std::size_t count = rows;
  std::string dims = std::to_string(rows);
  for (int a = 1; a < Dims; ++a) {
    count *= shape[a];
    dims += "x" + std::to_string(shape[a]);
  }
  const std::size_t piece_bytes = count * sizeof(T);
  const std::size_t most_pieces = o == operation::bcast ? 1 : n;
  if (Link::int_counts && count > static_cast<std::size_t>(INT_MAX) / most_pieces) {
    if (rank() == 0)
      std::fprintf(stderr,
                   "ndzip-mpi-bench: %s of pieces of %s skipped: %zu x %zu values "
                   "exceed MPI's int counts\n",
                   name_of(o), dims.c_str(), most_pieces, count);
    return true;
  }
  auto raw = link.template raw<T>(o, cfg.root, count);
  const auto piece = Kokkos::subview(field, std::make_pair(std::size_t{0}, count));
  for (std::size_t at = 0; at < raw.send.values.size(); at += count)
    Kokkos::deep_copy(exec, Kokkos::subview(raw.send.values, std::make_pair(at, at + count)),
                      piece);
  Kokkos::deep_copy(exec, raw.recv.values, T{0});
  exec.fence();
  const int reps = cfg.repetitions > 0 ? cfg.repetitions
                                       : static_cast<int>(std::clamp<std::size_t>(
                                             (std::size_t{512} << 20) / piece_bytes, 5, 50));

  raw.call(exec);  // warm-up: first touch, the link's connections and buffers
  const bool raw_ok = verified(exec, o, "raw", raw.recv.values, field, count, cfg.root);

  Kokkos::deep_copy(exec, raw.recv.values, T{0});
  exec.fence();
  const Kokkos::LayoutRight layout(rows, Dims > 1 ? shape[1] : KOKKOS_INVALID_INDEX,
                                   Dims > 2 ? shape[2] : KOKKOS_INVALID_INDEX);
  const auto execute = link.plan(o, pieces_of<T, Dims>(raw.send.values, count, layout),
                                 pieces_of<T, Dims>(raw.recv.values, count, layout), cfg.root);
  // The adaptive choice times both ways before it picks (options::compression; the first call
  // of each way is not timed): four calls, two more for good measure.
  const int warmups = cfg.opts.compression == ndzip::mpi::compression_choice::adaptive ? 6 : 1;
  for (int w = 0; w < warmups; ++w) execute();
  std::vector<ndzip::mpi::collective_stats> stats;
  // The raw calls write the Views the plan wrote: its last call, verified below, comes last.
  const auto [raw_seconds, ndzip_seconds] = timed_medians(
      reps, [&] { raw.call(exec); }, [&] { stats.push_back(execute()); });
  const bool ndzip_ok = verified(exec, o, "ndzip", raw.recv.values, field, count, cfg.root);

  report(cfg, {link.name(), o, name, sizeof(T) == 4 ? "float" : "double", dims, piece_bytes,
               raw_seconds, ndzip_seconds, split_of(stats), raw_ok && ndzip_ok});
  return raw_ok && ndzip_ok;
}

// Every operation and piece size of the configuration on one field (the same on every rank).
template <class T, int Dims, class Link>
bool run_field(const exec_space& exec, const collective_config& cfg, const Link& link,
               const std::vector<operation>& ops, const field_spec& f,
               const Kokkos::View<T*, memory_space>& field) {
  const std::vector<std::size_t>& shape = f.data.extents;
  if (f.source == field_source::file) {
    const auto values = inputs::read_values<T>(f.data, field.size());
    Kokkos::deep_copy(field, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                 values.data(), values.size()));
  } else if (f.source == field_source::random) {
    fill_random<T>(exec, field);
  } else {
    ndzip::extent<Dims> grid;
    for (int a = 0; a < Dims; ++a) grid[a] = shape[a];
    inputs::fill_synthetic<T, Dims>(exec, field, grid);
  }
  exec.fence();
  std::size_t row = 1;
  for (int a = 1; a < Dims; ++a) row *= shape[a];
  bool ok = true;
  for (const operation o : ops)
    for (const double mib : cfg.sizes_mib) {
      if (mib > cfg.max_mib) continue;
      // In floating point, so that a size beyond the field (beyond std::size_t) is the whole
      // field.
      const double want_rows = mib * 1048576.0 / static_cast<double>(row * sizeof(T));
      const std::size_t rows = want_rows >= static_cast<double>(shape[0])
                                   ? shape[0]
                                   : std::max<std::size_t>(1, static_cast<std::size_t>(want_rows));
      ok = run_pieces<T, Dims>(exec, cfg, link, o, f.data.name, field, shape, rows) && ok;
      if (rows == shape[0]) break;  // the whole field: larger sizes would repeat it
    }
  return ok;
}

template <class T, class Link>
bool run_input(const exec_space& exec, const collective_config& cfg, const Link& link,
               const std::vector<operation>& ops, const field_spec& f) {
  std::size_t n = 1;
  for (const auto e : f.data.extents) n *= e;
  const Kokkos::View<T*, memory_space> field(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, f.data.name), n);
  switch (f.data.extents.size()) {
    case 1:
      return run_field<T, 1>(exec, cfg, link, ops, f, field);
    case 2:
      return run_field<T, 2>(exec, cfg, link, ops, f, field);
    default:
      return run_field<T, 3>(exec, cfg, link, ops, f, field);
  }
}

// Every field through `link`; the text output's first line says the raw values' `path`.
template <class Link>
bool run_fields(const exec_space& exec, const collective_config& cfg, const Link& link,
                const std::vector<operation>& ops, const std::vector<field_spec>& fields,
                const char* path) {
  if (rank() == 0 && !cfg.csv)
    std::printf(
        "# %s, %d ranks, root %d, compression %s; GB/s = uncompressed bytes of one "
        "rank's result / the slowest rank's time (median); %s\n",
        exec_space::name(), ranks(), cfg.root, ndzip::mpi::compression_name(cfg.opts.compression),
        path);
  print_header(cfg);
  bool ok = true;
  for (const field_spec& f : fields)
    ok = (f.data.is_double ? run_input<double>(exec, cfg, link, ops, f)
                           : run_input<float>(exec, cfg, link, ops, f)) &&
         ok;
  return ok;
}

#ifdef NDZIP_MPI_HAS_NCCL
constexpr bool built_with_nccl = true;
#else
constexpr bool built_with_nccl = false;
#endif

}  // namespace

void add_collective_options(CLI::App& app, collective_config& cfg) {
  const CLI::Validator known(
      [](std::string& name) -> std::string {
        if (name == "all" || std::find(std::begin(operation_names), std::end(operation_names),
                                       name) != std::end(operation_names))
          return {};
        return "unknown operation '" + name +
               "'; expected bcast, gather, scatter, allgather, alltoall or all";
      },
      "OPERATION");
  CLI::Option* collective =
      app.add_option("--collective", cfg.operations,
                     "time ndzip::mpi's compressed collectives against MPI's (NCCL's with "
                     "--transport nccl) on 2 ranks or more: bcast, gather, scatter, allgather, "
                     "alltoall or all (comma-separated); each rank's piece of --sizes-mib")
          ->delimiter(',')
          ->check(known)
          ->excludes("--checksum", "--link-gbps", "--isend-copies");
  app.add_option("--root", cfg.root, "the root rank of bcast, gather and scatter (default 0)")
      ->needs(collective);
}

int run_collectives(const collective_config& cfg, const std::vector<field_spec>& fields, int& argc,
                    char** argv) {
  const int n = ranks();
  // Every rank has the same arguments and rank count, so every rank refuses alike. (main offers
  // --transport nccl only where the bench is built with NCCL; a configuration asking for it
  // elsewhere is refused all the same, not run through MPI.)
  std::string problem;
  if (cfg.nccl && !built_with_nccl)
    problem = "--transport nccl with --collective: this ndzip-mpi-bench was built without NCCL";
  else if (n < 2)
    problem = "--collective needs 2 ranks or more (mpiexec -n N), got " + std::to_string(n);
  else if (cfg.root < 0 || cfg.root >= n)
    problem = "--root " + std::to_string(cfg.root) + ": no rank of the " + std::to_string(n) +
              " (0 to " + std::to_string(n - 1) + ")";
  if (!problem.empty()) {
    if (rank() == 0) std::fprintf(stderr, "ndzip-mpi-bench: %s\n", problem.c_str());
    return 2;
  }
  std::vector<operation> ops;
  for (const std::string& name : cfg.operations)
    for (int o = 0; o < static_cast<int>(std::size(operation_names)); ++o)
      if (name == "all" || name == operation_names[o]) ops.push_back(static_cast<operation>(o));

  Kokkos::ScopeGuard kokkos(argc, argv);
  const exec_space exec;
  bool ok = false;
  try {
#ifdef NDZIP_MPI_HAS_NCCL
    if (cfg.nccl) {
      const ndzip::mpi::nccl_communicator<exec_space> channel(exec, world_nccl(), cfg.opts);
      ok = run_fields(exec, cfg, nccl_link{channel}, ops, fields, "device memory, through NCCL");
    }
#endif
    if (!cfg.nccl) {
      // The raw baseline meets MPI as the compressed collectives' transport does.
      const bool device_pointers =
          ndzip::mpi::communicator<exec_space>(exec, MPI_COMM_WORLD, cfg.opts).transport(true) ==
          ndzip::mpi::transport_kind::mpi_device;
      const char* path = Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible
                             ? "host memory, handed to MPI in place"
                         : device_pointers ? "device memory, handed to MPI directly"
                                           : "device memory, staged through host-pinned";
      ok = run_fields(exec, cfg, mpi_link{exec, cfg.opts, device_pointers}, ops, fields, path);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ndzip-mpi-bench: rank %d: %s\n", rank(), e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return ok ? 0 : 1;
}

#ifdef NDZIP_MPI_HAS_NCCL
void check_nccl(ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess && rc != ncclInProgress)
    throw std::runtime_error(std::string("NCCL: ") + what + " failed: " + ncclGetErrorString(rc));
}

ncclComm_t world_nccl() {
  static const ncclComm_t comm = [] {
    ncclUniqueId id;
    if (rank() == 0) ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t c = nullptr;
    check_nccl(ncclCommInitRank(&c, ranks(), id, rank()), "ncclCommInitRank");
    return c;
  }();
  return comm;
}
#endif

}  // namespace ndzip::perf::mpi_bench
