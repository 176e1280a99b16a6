// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip-mpi-bench: effective bandwidth of ndzip::mpi against plain MPI between two ranks, on
// Views in the default execution space's memory (device-resident on a GPU build); with
// --collective, of its collectives on any number of ranks (mpi_bench_collective.cpp).
//
//   ping-pong  rank 0 sends a message, rank 1 sends it back; one-way time = round trip / 2
//   exchange   both ranks send a message to each other at once (the two faces of a halo)
//
// Raw and compressed go through the same transport (--transport): plain MPI moves the raw
// values through a host-pinned staging buffer for device memory (copy to the host, MPI, copy to
// the device) with the staged transport, or hands MPI the device memory with mpi-device;
// ndzip::mpi compresses segments and hands their messages to MPI the same way. A message is the
// first rows of a field (synthetic, or a dataset of a manifest) of about the requested size.
// Effective GB/s = uncompressed bytes / one-way time (median of the repetitions). Every
// received message is compared bit for bit with what was sent. The CSV splits the time: the
// message compressed and decompressed on its own (compress_s, decompress_s), its wire bytes at
// the raw rate (link_s), and the bound a pipeline of the three could reach (the slowest), beside
// the copy engine's peer copy of the same bytes (peer_copy_gbps, CUDA builds with two GPUs).
// ndzip::mpi compresses or sends the values plain as --compression says (adaptive by default,
// which each message's own communicator is given 6 untimed rounds to time both ways for); the
// CSV says which share of the timed transfers went plain.
// --link-gbps adds, from the measured transfer, the bandwidth the same pipeline would reach on
// a link of that speed (a model, labelled so): the time the compressed transfer took beyond
// moving its wire bytes at the raw rate measured here, plus its wire bytes over that link.

#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <ndzip/compressor.hpp>
#include <ndzip/mpi.hpp>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench_inputs.hpp"
#include "mpi_bench_collective.hpp"
#include "positive_decimal.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif
#ifdef NDZIP_MPI_HAS_NCCL
#include <ndzip/mpi/nccl.hpp>
#endif

using namespace ndzip::perf::inputs;
using ndzip::perf::mpi_bench::field_source;
using ndzip::perf::mpi_bench::median;
using ndzip::perf::mpi_bench::rank;
using ndzip::perf::mpi_bench::field_spec;
using ndzip::perf::mpi_bench::differing_bits;
using ndzip::perf::mpi_bench::fill_random;
using ndzip::perf::mpi_bench::raw_channel;
using ndzip_perf::non_negative_number;
using ndzip_perf::positive_decimal;
using ndzip_perf::positive_number;

namespace {

using exec_space = Kokkos::DefaultExecutionSpace;
using memory_space = exec_space::memory_space;
using clock_type = std::chrono::steady_clock;

struct config {
  bool synthetic = false;
  std::string manifest;
  std::vector<double> sizes_mib = {0.0625, 1, 4, 16, 64, 256, 1024};
  double max_mib = 1024;
  std::vector<double> link_gbps;
  bool csv = false;
  bool incompressible = false;
  bool checksum = false;
  int repetitions = 0;  // 0: by size
  double segment_mib = 0;  // the transport's choice
  std::size_t pipeline_depth = ndzip::mpi::options{}.pipeline_depth;
  ndzip::mpi::transport_kind transport = ndzip::mpi::transport_kind::automatic;
  bool nccl = false;  // --transport nccl: ndzip::mpi::nccl_communicator against ncclSend/ncclRecv
  ndzip::mpi::compression_choice compression = ndzip::mpi::compression_choice::adaptive;
  bool isend_copies = false;  // options::values_stay_until_complete off for the exchange's isend
  double scale = 1;  // the synthetic fields' slowest extent divided by this (below 1: grown)
};

struct measurement {
  double seconds = 0;        // median one-way time
  double codec_seconds = 0;  // median codec time per direction (sender + receiver), ndzip only
  std::uint64_t wire_bytes = 0;
  double plain_share = 0;  // of the timed transfers both ranks sent, those sent plain (ndzip)
  bool verified = true;
};

// Rank 0's value for both ranks.
double agreed(double v) {
  MPI_Bcast(&v, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return v;
}

// Times `reps` rounds of `round` (both ranks) after `warmups` untimed ones, returning rank 0's
// median.
template <class F>
double timed_rounds(int reps, F&& round, int warmups = 1) {
  for (int w = 0; w < warmups; ++w) round();  // first-touch, codecs, staging buffers
  std::vector<double> seconds;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = clock_type::now();
    round();
    seconds.push_back(std::chrono::duration<double>(clock_type::now() - start).count());
  }
  return agreed(median(seconds));
}

template <class A, class B>
bool same_bits(const exec_space& exec, const A& a, const B& b) {
  int ok = differing_bits(exec, a.data(), b.data(), a.size()) == 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all != 0;
}

// Posts the sending (`send`) or receiving of `bytes` at `data` with `peer` as messages of 1 GiB
// at most (MPI counts are int).
void post_raw(void* data, std::size_t bytes, int peer, bool send, std::vector<MPI_Request>& out) {
  constexpr std::size_t largest = std::size_t{1} << 30;
  auto* at = static_cast<std::byte*>(data);
  std::size_t done = 0;
  do {
    const std::size_t count = std::min(largest, bytes - done);
    out.emplace_back();
    if (send)
      MPI_Isend(at + done, static_cast<int>(count), MPI_BYTE, peer, 1, MPI_COMM_WORLD, &out.back());
    else
      MPI_Irecv(at + done, static_cast<int>(count), MPI_BYTE, peer, 1, MPI_COMM_WORLD, &out.back());
    done += count;
  } while (done < bytes);
}

void wait_all(std::vector<MPI_Request>& requests) {
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  requests.clear();
}

#if defined(KOKKOS_ENABLE_CUDA)
// The physical reference of a device-to-device transfer: the copy engine's peer copy of `bytes`
// from this rank's GPU to the next GPU of the node (cudaMemcpyPeerAsync), median GB/s of `reps`;
// 0 where there is no second GPU this process can reach, or (said on standard error) where the
// copy fails.
double peer_copy_gbps(std::size_t bytes, int reps) {
  int count = 0, here = 0, reachable = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) return 0;
  cudaGetDevice(&here);
  const int there = (here + 1) % count;
  if (cudaDeviceCanAccessPeer(&reachable, here, there) != cudaSuccess || !reachable) return 0;
  const cudaError_t enabled = cudaDeviceEnablePeerAccess(there, 0);
  if (enabled != cudaSuccess && enabled != cudaErrorPeerAccessAlreadyEnabled) return 0;
  cudaGetLastError();  // an already enabled peer access is not an error here
  void *from = nullptr, *to = nullptr;
  bool ok = cudaMalloc(&from, bytes) == cudaSuccess;
  cudaSetDevice(there);
  ok = cudaMalloc(&to, bytes) == cudaSuccess && ok;
  cudaSetDevice(here);
  std::vector<double> seconds;
  for (int r = 0; ok && r <= reps; ++r) {
    const auto start = clock_type::now();
    ok = cudaMemcpyPeerAsync(to, there, from, here, bytes, nullptr) == cudaSuccess &&
         cudaDeviceSynchronize() == cudaSuccess;
    if (r > 0)  // the first copy warms up
      seconds.push_back(std::chrono::duration<double>(clock_type::now() - start).count());
  }
  cudaFree(from);
  cudaSetDevice(there);
  cudaFree(to);
  cudaSetDevice(here);
  if (!ok) {
    std::fprintf(stderr, "ndzip-mpi-bench: the peer copy of %zu bytes failed: %s\n", bytes,
                 cudaGetErrorString(cudaGetLastError()));
    return 0;
  }
  return bytes / median(seconds) / 1e9;
}
#else
double peer_copy_gbps(std::size_t, int) { return 0; }
#endif

// The pipeline's stages measured apart, on rank 0: compressing and decompressing the message
// as one grid on the device (median of `reps`, fenced), to set against the link.
struct stage_times {
  double compress = 0, decompress = 0;
};

// f(grid) with the grid ndzip::mpi compresses `message` as (docs/MPI.md): its extents other
// than 1 (rank 1 at least), as an ndzip::extent of that rank. ndzip::mpi's own function for it
// is internal, so the bench derives it from the View's extents as documented.
template <class View, class F>
auto with_message_grid(const View& message, F&& f) {
  std::array<std::size_t, 3> kept = {1, 1, 1};
  int dims = 0;
  for (int a = 0; a < static_cast<int>(View::rank); ++a)
    if (message.extent(a) != 1) kept[dims++] = message.extent(a);
  const auto grid = [&](auto d) {
    constexpr int grid_dims = decltype(d)::value;
    ndzip::extent<grid_dims> g;
    for (int a = 0; a < grid_dims; ++a) g[a] = kept[a];
    return g;
  };
  switch (dims) {
    case 0:
    case 1:
      return f(grid(std::integral_constant<int, 1>{}));
    case 2:
      return f(grid(std::integral_constant<int, 2>{}));
    default:
      return f(grid(std::integral_constant<int, 3>{}));
  }
}

template <class View>
stage_times codec_stages(const exec_space& exec, const View& message, int reps) {
  using T = typename View::value_type;
  return with_message_grid(message, [&](const auto& grid) {
    constexpr int dims = std::decay_t<decltype(grid)>::dimensions;
    ndzip::compressor<T, dims, exec_space> codec(exec, grid);
    Kokkos::View<std::byte*, memory_space> stream(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "stream"), codec.size_bound());
    Kokkos::View<T*, memory_space> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "out"),
                                       message.size());
    std::vector<double> compress, decompress;
    for (int r = 0; r <= reps; ++r) {
      auto start = clock_type::now();
      const std::size_t size = codec.compress_raw(message.data(), stream.data(), stream.size());
      exec.fence();
      const double c = std::chrono::duration<double>(clock_type::now() - start).count();
      start = clock_type::now();
      codec.decompress_raw(stream.data(), size, out.data());
      const double d = std::chrono::duration<double>(clock_type::now() - start).count();
      if (r > 0) {  // the first round allocates and warms up
        compress.push_back(c);
        decompress.push_back(d);
      }
    }
    return stage_times{median(compress), median(decompress)};
  });
}

// What one round of ndzip transfers reported: the codec time of both directions, and the
// send's wire bytes and way (plain or compressed).
struct round_report {
  double codec_seconds = 0;
  std::uint64_t wire_bytes = 0;
  bool plain = false;
};

// Times `round` (ndzip transfers of `sent` into `received`, or into `spare` and back in a
// ping-pong, returning a round_report) after the untimed rounds the adaptive choice needs, and
// verifies what arrived.
template <class View, class Managed, class Round>
measurement time_ndzip(const exec_space& exec, const View& sent, const Managed& received,
                       const Managed& spare, bool exchange, int reps,
                       const ndzip::mpi::options& opts, Round&& round) {
  Kokkos::deep_copy(exec, received, 0);
  exec.fence();
  std::vector<double> codec, plain;
  std::uint64_t wire = 0;
  // The adaptive choice times both ways before it picks (options::compression; the first
  // transfer of each way is not timed): four transfers, two more for good measure.
  const int warmups = opts.compression == ndzip::mpi::compression_choice::adaptive ? 6 : 1;
  measurement packed;
  const double seconds = timed_rounds(reps, [&] {
    const round_report r = round();
    codec.push_back(r.codec_seconds);
    wire = r.wire_bytes;
    plain.push_back(r.plain);
  }, warmups);
  packed.seconds = exchange ? seconds : seconds / 2;
  plain.erase(plain.begin(), plain.end() - std::min<std::ptrdiff_t>(reps, plain.size()));
  double counts[2] = {static_cast<double>(plain.size()), 0};  // sent, of which plain
  for (const double p : plain) counts[1] += p;
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  packed.plain_share = counts[0] > 0 ? counts[1] / counts[0] : 0;
  packed.codec_seconds = agreed(median(codec));
  packed.wire_bytes = static_cast<std::uint64_t>(agreed(static_cast<double>(wire)));
  packed.verified = same_bits(exec, exchange || rank() == 1 ? received : spare, sent);
  return packed;
}

// What a raw transfer reports: nothing (an ndzip one reports its ndzip::mpi::transfer_stats).
struct raw_report {};

// One round of a mode through `link` (on rank link.me), between its ends link.sent,
// link.received and link.spare: the exchange moves `sent` into `received` on both ranks at once
// (link.exchange); the ping-pong sends `sent` from rank 0 into rank 1's `received`, which rank 1
// sends back into rank 0's `spare` (link.send and link.recv, in that order on each rank).
// link.settle() then waits for what the link queued. Returns this rank's {send's, receive's}
// report.
template <class Link>
auto one_round(Link& link, bool exchange) {
  decltype(link.exchange(link.sent, link.received)) done;
  if (exchange) {
    done = link.exchange(link.sent, link.received);
  } else if (link.me == 0) {
    done.first = link.send(link.sent);
    done.second = link.recv(link.spare);
  } else {
    done.second = link.recv(link.received);
    done.first = link.send(link.received);
  }
  link.settle();
  return done;
}

// ndzip::mpi's transfers through `channel`: an ndzip::mpi::communicator (tag 2; its exchange an
// irecv and an isend) or an nccl_communicator (its exchange a sendrecv; settled by fencing the
// instance, as NCCL's raw transfers are).
template <class Channel, class View, class Managed>
struct ndzip_link {
  static constexpr bool mpi = std::is_same_v<Channel, ndzip::mpi::communicator<exec_space>>;
  const exec_space& exec;
  const Channel& channel;
  const View& sent;
  const Managed &received, &spare;
  const int me = rank(), peer = 1 - me;

  template <class V>
  ndzip::mpi::transfer_stats send(const V& v) const {
    if constexpr (mpi) return channel.send(v, peer, 2);
    else return channel.send(v, peer);
  }
  template <class V>
  ndzip::mpi::transfer_stats recv(const V& v) const {
    if constexpr (mpi) return channel.recv(v, peer, 2);
    else return channel.recv(v, peer);
  }
  std::pair<ndzip::mpi::transfer_stats, ndzip::mpi::transfer_stats> exchange(
      const View& out, const Managed& in) const {
    if constexpr (mpi) {
      auto r = channel.irecv(in, peer, 2);
      auto s = channel.isend(out, peer, 2);
      r.wait();
      s.wait();
      return {s.stats(), r.stats()};
    } else {
      const ndzip::mpi::exchange_stats both = channel.sendrecv(out, peer, in, peer);
      return {both.sent, both.received};
    }
  }
  void settle() const {
    if constexpr (!mpi) exec.fence();
  }
};

// One message (the View `sent`, identical on both ranks) in one mode through one link (MPI:
// run_message, NCCL: run_message_nccl), raw and through `channel`, a communicator of its own
// with `opts` (so that what its adaptive choice measured of one message does not carry over to
// the next). RawLink<View, Managed> is the link's raw transfers (for one_round), made of
// {exec, channel, sent, received, spare} for the raw rounds only (it may hold staging buffers);
// ndzip_link the compressed ones.
template <template <class, class> class RawLink, class Channel, class View>
std::pair<measurement, measurement> measure_message(const exec_space& exec,
                                                    const Channel& channel, const View& sent,
                                                    bool exchange, int reps,
                                                    const ndzip::mpi::options& opts) {
  using managed = Kokkos::View<typename View::data_type, Kokkos::LayoutRight, memory_space>;
  managed received(Kokkos::view_alloc(Kokkos::WithoutInitializing, "received"), sent.layout());
  managed spare(Kokkos::view_alloc(Kokkos::WithoutInitializing, "spare"), sent.layout());
  measurement raw;
  {
    RawLink<View, managed> link{exec, channel, sent, received, spare};
    Kokkos::deep_copy(exec, received, 0);
    exec.fence();
    const double round = timed_rounds(reps, [&] { one_round(link, exchange); });
    raw.seconds = exchange ? round : round / 2;
    raw.wire_bytes = sent.size() * sizeof(typename View::value_type);
    raw.verified = same_bits(exec, exchange || rank() == 1 ? received : spare, sent);
    Kokkos::deep_copy(exec, spare, 0);
  }
  ndzip_link<Channel, View, managed> link{exec, channel, sent, received, spare};
  const measurement packed = time_ndzip(exec, sent, received, spare, exchange, reps, opts, [&] {
    const auto [s, r] = one_round(link, exchange);
    return round_report{r.codec_seconds + s.codec_seconds, s.wire_bytes, s.plain};
  });
  return {raw, packed};
}

// Plain MPI of the values (raw_channel), handed to MPI in device memory where ndzip::mpi's
// `channel` would be (the mpi-device transport), else staged where the host cannot read them.
template <class View, class Managed>
struct raw_mpi_link {
  raw_mpi_link(const exec_space& e, const ndzip::mpi::communicator<exec_space>& channel,
               const View& s, const Managed& r, const Managed& b)
      : exec(e),
        device_pointers(channel.transport(true) == ndzip::mpi::transport_kind::mpi_device),
        sent(s, device_pointers),
        received(r, device_pointers),
        spare(b, device_pointers) {}

  const exec_space& exec;
  const bool device_pointers;
  const int me = rank(), peer = 1 - me;
  raw_channel<View> sent;
  raw_channel<Managed> received, spare;
  std::vector<MPI_Request> requests;

  template <class End>
  raw_report send(End& c) {
    c.before_send(exec);
    post_raw(c.wire(), c.bytes(), peer, true, requests);
    wait_all(requests);
    return {};
  }
  template <class End>
  raw_report recv(End& c) {
    post_raw(c.wire(), c.bytes(), peer, false, requests);
    wait_all(requests);
    c.after_receive(exec);
    return {};
  }
  std::pair<raw_report, raw_report> exchange(raw_channel<View>& out, raw_channel<Managed>& in) {
    out.before_send(exec);
    post_raw(in.wire(), in.bytes(), peer, false, requests);
    post_raw(out.wire(), out.bytes(), peer, true, requests);
    wait_all(requests);
    in.after_receive(exec);
    return {};
  }
  void settle() {}
};

// The measurement through MPI: raw, plain MPI; compressed, an ndzip::mpi::communicator.
template <class View>
std::pair<measurement, measurement> run_message(const exec_space& exec, const View& sent,
                                                bool exchange, int reps,
                                                const ndzip::mpi::options& opts) {
  const ndzip::mpi::communicator<exec_space> channel(exec, MPI_COMM_WORLD, opts);
  return measure_message<raw_mpi_link>(exec, channel, sent, exchange, reps, opts);
}

#ifdef NDZIP_MPI_HAS_NCCL
using ndzip::perf::mpi_bench::check_nccl;
using ndzip::perf::mpi_bench::world_nccl;

// Raw through NCCL: ncclSend and ncclRecv of the values on the instance's stream (grouped in an
// exchange), on the NCCL communicator of `channel`; settled by fencing the instance.
template <class View, class Managed>
struct raw_nccl_link {
  const exec_space& exec;
  const ndzip::mpi::nccl_communicator<exec_space>& channel;
  const View& sent;
  const Managed &received, &spare;
  const int me = rank(), peer = 1 - me;
  const ncclComm_t comm = channel.comm();
  const cudaStream_t stream = exec.cuda_stream();

  template <class V>
  raw_report send(const V& v) const {
    const std::size_t bytes = v.size() * sizeof(typename V::value_type);
    check_nccl(ncclSend(v.data(), bytes, ncclUint8, peer, comm, stream), "ncclSend");
    return {};
  }
  template <class V>
  raw_report recv(const V& v) const {
    const std::size_t bytes = v.size() * sizeof(typename V::value_type);
    check_nccl(ncclRecv(v.data(), bytes, ncclUint8, peer, comm, stream), "ncclRecv");
    return {};
  }
  std::pair<raw_report, raw_report> exchange(const View& out, const Managed& in) const {
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    send(out);
    recv(in);
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    return {};
  }
  void settle() const { exec.fence(); }
};

// The measurement through NCCL (--transport nccl): raw, ncclSend and ncclRecv; compressed, an
// nccl_communicator of its own.
template <class View>
std::pair<measurement, measurement> run_message_nccl(const exec_space& exec, const View& sent,
                                                     bool exchange, int reps,
                                                     const ndzip::mpi::options& opts) {
  const ndzip::mpi::nccl_communicator<exec_space> channel(exec, world_nccl(), opts);
  return measure_message<raw_nccl_link>(exec, channel, sent, exchange, reps, opts);
}
#endif

void print_header(const config& cfg) {
  if (rank() != 0) return;
  if (cfg.csv) {
    std::printf(
        "mode,dataset,type,shape,bytes,raw_gbps,ndzip_gbps,speedup,wire_bytes,ratio,"
        "codec_s,wire_s,verified,peer_copy_gbps,compress_s,link_s,decompress_s,"
        "pipeline_bound_gbps,compression,plain_share");
    for (const double l : cfg.link_gbps) std::printf(",model_gbps_at_%g", l);
    std::printf("\n");
  } else {
    std::printf("%-9s %-28s %-6s %-16s %10s %9s %9s %7s %12s %6s %9s %9s %6s\n", "mode",
                "dataset", "type", "shape", "MiB", "raw GB/s", "ndzip", "x", "wire bytes", "ratio",
                "codec ms", "wire ms", "plain");
  }
}

// The --link-gbps model of a compressed transfer of `bytes` (`packed`) measured beside a raw
// transfer taking `raw_seconds` on this link, moved to a link of `link_gbps`.
double modelled_gbps(std::size_t bytes, const measurement& packed, double raw_seconds,
                     double link_gbps) {
  const double measured_link = bytes / raw_seconds;  // bytes per second
  const double beyond_link =
      std::max(0.0, packed.seconds - static_cast<double>(packed.wire_bytes) / measured_link);
  return bytes / (beyond_link + static_cast<double>(packed.wire_bytes) / (link_gbps * 1e9)) /
         1e9;
}

template <class T>
void report(const config& cfg, const char* mode, const std::string& dataset,
            const std::vector<std::size_t>& shape, std::size_t bytes, const measurement& raw,
            const measurement& packed, double peer_copy, const stage_times& stages) {
  if (rank() != 0) return;
  std::string dims;
  for (const auto e : shape) dims += (dims.empty() ? "" : "x") + std::to_string(e);
  const double raw_gbps = bytes / raw.seconds / 1e9, ndzip_gbps = bytes / packed.seconds / 1e9;
  const double ratio = double(bytes) / double(packed.wire_bytes);
  const double codec = packed.codec_seconds / 2;  // per direction
  const double wire = std::max(0.0, packed.seconds - codec);
  const bool ok = raw.verified && packed.verified;
  const char* type = sizeof(T) == 4 ? "float" : "double";
  if (cfg.csv) {
    std::printf("%s,%s,%s,%s,%zu,%.3f,%.3f,%.3f,%llu,%.3f,%.6f,%.6f,%s,%.3f", mode,
                dataset.c_str(), type, dims.c_str(), bytes, raw_gbps, ndzip_gbps,
                ndzip_gbps / raw_gbps, static_cast<unsigned long long>(packed.wire_bytes), ratio,
                codec, wire, ok ? "yes" : "NO", peer_copy);
    // The stages apart: the message's compression and decompression on the device, and its
    // wire bytes at this link's measured raw rate; a pipeline of the three runs at most as fast
    // as its slowest.
    const double link = static_cast<double>(packed.wire_bytes) / (bytes / raw.seconds);
    std::printf(",%.6f,%.6f,%.6f,%.3f", stages.compress, link, stages.decompress,
                bytes / std::max({stages.compress, link, stages.decompress, 1e-12}) / 1e9);
    std::printf(",%s,%.2f", ndzip::mpi::compression_name(cfg.compression), packed.plain_share);
    for (const double link : cfg.link_gbps)
      std::printf(",%.3f", modelled_gbps(bytes, packed, raw.seconds, link));
    std::printf("\n");
  } else {
    std::printf(
        "%-9s %-28s %-6s %-16s %10.3f %9.2f %9.2f %7.2f %12llu %6.2f %9.3f %9.3f %6.2f%s\n", mode,
        dataset.substr(0, 28).c_str(), type, dims.c_str(), bytes / 1048576.0, raw_gbps,
        ndzip_gbps, ndzip_gbps / raw_gbps, static_cast<unsigned long long>(packed.wire_bytes),
        ratio, codec * 1e3, wire * 1e3, packed.plain_share, ok ? "" : "  VERIFICATION FAILED");
    if (!cfg.link_gbps.empty()) {
      std::printf("%-9s model (the measured transfer on another link):", "");
      for (const double link : cfg.link_gbps)
        std::printf("  %g GB/s link -> %.2f", link,
                    modelled_gbps(bytes, packed, raw.seconds, link));
      std::printf("\n");
    }
  }
  std::fflush(stdout);
}

// Every message size of the configuration cut from one field (its first rows).
template <class T, int Dims>
bool run_field(const exec_space& exec, const config& cfg, const std::string& name,
               const Kokkos::View<T*, memory_space>& field, const std::vector<std::size_t>& shape,
               const ndzip::mpi::options& opts) {
  std::size_t row = 1;
  for (int a = 1; a < Dims; ++a) row *= shape[a];
  bool ok = true;
  for (const double mib : cfg.sizes_mib) {
    if (mib > cfg.max_mib) continue;
    // In floating point, so that a size beyond the field (beyond std::size_t) is the whole field.
    const double want_rows = mib * 1048576.0 / static_cast<double>(row * sizeof(T));
    const std::size_t rows =
        want_rows >= static_cast<double>(shape[0])
            ? shape[0]
            : std::max<std::size_t>(1, static_cast<std::size_t>(want_rows));
    std::vector<std::size_t> message_shape = shape;
    message_shape[0] = rows;
    std::size_t bytes = rows * row * sizeof(T);
    using view_type = Kokkos::View<
        typename std::conditional_t<Dims == 1, T*, std::conditional_t<Dims == 2, T**, T***>>,
        Kokkos::LayoutRight, memory_space, Kokkos::MemoryUnmanaged>;
    Kokkos::LayoutRight layout(rows, Dims > 1 ? shape[1] : KOKKOS_INVALID_INDEX,
                               Dims > 2 ? shape[2] : KOKKOS_INVALID_INDEX);
    const view_type message(field.data(), layout);
    const int reps =
        cfg.repetitions > 0
            ? cfg.repetitions
            : static_cast<int>(std::clamp<std::size_t>((std::size_t{512} << 20) / bytes, 5, 50));
    // Rank 0's peer copy to the next GPU and codec stages, while rank 1 waits.
    const double peer_copy = rank() == 0 ? peer_copy_gbps(bytes, reps) : 0;
    const stage_times stages = rank() == 0 ? codec_stages(exec, message, reps) : stage_times{};
    MPI_Barrier(MPI_COMM_WORLD);
    for (const bool exchange : {false, true}) {
#ifdef NDZIP_MPI_HAS_NCCL
      const auto [raw, packed] = cfg.nccl
                                     ? run_message_nccl(exec, message, exchange, reps, opts)
                                     : run_message(exec, message, exchange, reps, opts);
#else
      const auto [raw, packed] = run_message(exec, message, exchange, reps, opts);
#endif
      report<T>(cfg, exchange ? "exchange" : "ping-pong", name, message_shape, bytes, raw, packed,
                peer_copy, stages);
      ok = ok && raw.verified && packed.verified;
    }
    if (rows == shape[0]) break;  // the whole field: larger sizes would repeat it
  }
  return ok;
}

// The field `name` of `shape`: `host_values` where given, else random bits (`random`) or the
// synthetic field.
template <class T>
bool run_shape(const exec_space& exec, const config& cfg, const std::string& name,
               const std::vector<std::size_t>& shape, const std::vector<T>* host_values,
               const ndzip::mpi::options& opts, bool random = false) {
  std::size_t n = 1;
  for (const auto e : shape) n *= e;
  Kokkos::View<T*, memory_space> field(Kokkos::view_alloc(Kokkos::WithoutInitializing, name), n);
  const auto dispatch = [&](auto dims) -> bool {
    constexpr int Dims = decltype(dims)::value;
    ndzip::extent<Dims> grid;
    for (int a = 0; a < Dims; ++a) grid[a] = shape[a];
    if (host_values) {
      Kokkos::deep_copy(field, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                   host_values->data(), n));
    } else if (random) {
      fill_random<T>(exec, field);
    } else {
      fill_synthetic<T, Dims>(exec, field, grid);
    }
    exec.fence();
    return run_field<T, Dims>(exec, cfg, name, field, shape, opts);
  };
  if (shape.size() == 1) return dispatch(std::integral_constant<int, 1>{});
  if (shape.size() == 2) return dispatch(std::integral_constant<int, 2>{});
  return dispatch(std::integral_constant<int, 3>{});
}

// "float 512x512x512".
std::string describe(bool is_double, const std::vector<std::string>& extents) {
  std::string s = is_double ? "double " : "float ";
  for (std::size_t a = 0; a < extents.size(); ++a) s += (a ? "x" : "") + extents[a];
  return s;
}

std::string describe(const dataset& d) {
  std::vector<std::string> extents;
  for (const auto e : d.extents) extents.push_back(std::to_string(e));
  return describe(d.is_double, extents);
}

// Throws std::runtime_error where `bytes` (of `what`, `why` it is that large) exceed this
// machine's memory: such a field cannot be allocated on one rank, let alone on two.
void require_memory(double bytes, const std::string& what, const std::string& why) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;  // the system does not say
  const double memory = static_cast<double>(pages) * static_cast<double>(page);
  if (bytes <= memory) return;
  char text[160];
  std::snprintf(text, sizeof text, " needs %.4g bytes (%.4g GiB) per rank, more than the %.4g GiB",
                bytes, bytes / 1073741824.0, memory / 1073741824.0);
  throw std::runtime_error(why + what + text + " of this machine's memory");
}

// The synthetic field of `s` with its slowest extent divided by --scale.
field_spec scaled(const shape& s, const std::string& name, field_source source, double scale) {
  const double slowest = std::max(1.0, std::floor(static_cast<double>(s.extents[0]) / scale));
  double bytes = slowest * (s.is_double ? 8 : 4);
  std::vector<std::string> extents;
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", slowest);
  extents.push_back(text);
  for (std::size_t a = 1; a < s.extents.size(); ++a) {
    bytes *= static_cast<double>(s.extents[a]);
    extents.push_back(std::to_string(s.extents[a]));
  }
  std::snprintf(text, sizeof text, "%g", scale);
  require_memory(bytes, "the " + name + " field " + describe(s.is_double, extents),
                 std::string("--scale ") + text + ": ");
  field_spec f{source, {name, "", s.is_double, s.extents}};
  f.data.extents[0] = static_cast<std::size_t>(slowest);  // within memory, so within size_t
  return f;
}

// A dataset of the manifest, checked before its file is read: every extent 1 or more, and their
// bytes exactly the file's size (read_values reads the extents' product, which can wrap around
// 2^64: 4 x (2^62 + 1) floats read 16 bytes, then sent as a message of those extents: SIGSEGV).
field_spec checked(const dataset& d, const std::string& manifest) {
  const std::string where = manifest + ": " + d.name + ": ";
  const std::size_t element_bytes = d.is_double ? 8 : 4;
  std::uint64_t bytes = element_bytes;
  for (const auto e : d.extents) {
    if (e == 0 || e > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))
      throw std::runtime_error(where + "extent " + std::to_string(e) + " in " + describe(d) +
                               (e == 0 ? "" : " (a negative number?)") +
                               "; every extent is a whole number of 1 or more");
    if (bytes > std::numeric_limits<std::uint64_t>::max() / e)
      throw std::runtime_error(where + describe(d) + " takes more than 2^64 bytes");
    bytes *= e;
  }
  std::error_code error;
  const std::uintmax_t file_bytes = std::filesystem::file_size(d.path, error);
  if (error) throw std::runtime_error(where + "cannot read '" + d.path + "': " + error.message());
  if (file_bytes != bytes)
    throw std::runtime_error(where + describe(d) + " takes " + std::to_string(bytes) +
                             " bytes, but '" + d.path + "' holds " + std::to_string(file_bytes));
  require_memory(static_cast<double>(bytes), describe(d), where);
  return {field_source::file, d};
}

// Every field of the run, in the order measured. Throws std::runtime_error saying why one
// cannot be run, before any transfer.
std::vector<field_spec> fields_of(const config& cfg) {
  std::vector<field_spec> fields;
  if (cfg.synthetic)
    for (const auto& s : synthetic_shapes)
      fields.push_back(scaled(s, "synthetic", field_source::synthetic, cfg.scale));
  if (cfg.incompressible)
    fields.push_back(
        scaled({false, {std::size_t{1} << 28}}, "random", field_source::random, cfg.scale));
  if (!cfg.manifest.empty())
    for (const auto& d : read_manifest(cfg.manifest)) fields.push_back(checked(d, cfg.manifest));
  return fields;
}

template <class T>
bool run_spec(const exec_space& exec, const config& cfg, const field_spec& f,
              const ndzip::mpi::options& opts) {
  if (f.source != field_source::file)
    return run_shape<T>(exec, cfg, f.data.name, f.data.extents, nullptr, opts,
                        f.source == field_source::random);
  std::size_t n = 1;
  for (const auto e : f.data.extents) n *= e;
  const auto values = read_values<T>(f.data, n);
  return run_shape<T>(exec, cfg, f.data.name, f.data.extents, &values, opts);
}

// Whether any rank refuses the run (`problem` not empty there). The lowest such rank prints its
// problem; every rank learns the outcome, so that all stop together.
bool refused_anywhere(const std::string& problem) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = problem.empty() ? size : rank(), first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == rank()) std::fprintf(stderr, "ndzip-mpi-bench: %s\n", problem.c_str());
  return first < size;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  config cfg;
  CLI::App app{"ndzip-mpi-bench: ndzip::mpi against plain MPI between two ranks, or in "
               "collectives (--collective)"};
  app.add_flag("--synthetic", cfg.synthetic, "the synthetic fields (bench_inputs.hpp)");
  app.add_option("--manifest", cfg.manifest, "datasets: `file;float|double;dims slowest first`");
  app.add_flag("--incompressible", cfg.incompressible,
               "a float field of random bits (2^28 values / --scale), which no segment shrinks");
  app.add_option("--sizes-mib", cfg.sizes_mib, "message sizes in MiB (default 1/16 .. 1024)")
      ->delimiter(',')
      ->check(positive_number);
  app.add_option("--max-mib", cfg.max_mib, "skip message sizes above this")
      ->check(positive_number);
  app.add_option("--link-gbps", cfg.link_gbps,
                 "model the measured transfer on links of these GB/s (e.g. 12.5,25,50,100)")
      ->delimiter(',')
      ->check(positive_number);
  app.add_option("--repetitions", cfg.repetitions,
                 "timed rounds per measurement (default by size)")
      ->transform(positive_decimal);
  app.add_option("--segment-mib", cfg.segment_mib,
                 "ndzip::mpi segment size (default: the transport's, options::segment_bytes = 0)")
      ->check(non_negative_number);
  app.add_option("--pipeline-depth", cfg.pipeline_depth,
                 "segments compressed ahead of the one handed to MPI (options::pipeline_depth)")
      ->transform(positive_decimal);
  app.add_flag("--checksum", cfg.checksum,
               "segments with their XXH3-64 (ndzip::mpi::options::checksum = true)");
  // nccl is no transport_kind: its transfers go through ndzip::mpi::nccl_communicator.
  constexpr auto nccl_transport = static_cast<ndzip::mpi::transport_kind>(-1);
  std::map<std::string, ndzip::mpi::transport_kind> transports = {
      {"automatic", ndzip::mpi::transport_kind::automatic},
      {"staged", ndzip::mpi::transport_kind::staged},
      {"mpi-device", ndzip::mpi::transport_kind::mpi_device}};
#ifdef NDZIP_MPI_HAS_NCCL
  transports.emplace("nccl", nccl_transport);
#endif
  app.add_option("--transport", cfg.transport,
                 "how device buffers meet MPI (ndzip::mpi::options::transport): automatic, "
                 "staged, or mpi-device (only with a GPU-aware MPI); or nccl (raw: ncclSend and "
                 "ncclRecv, or NCCL's collectives with --collective; ndzip: nccl_communicator), "
                 "where ndzip::mpi is built with NCCL")
      ->transform(CLI::CheckedTransformer(transports, CLI::ignore_case));
  const std::map<std::string, ndzip::mpi::compression_choice> choices = {
      {"adaptive", ndzip::mpi::compression_choice::adaptive},
      {"always", ndzip::mpi::compression_choice::always},
      {"never", ndzip::mpi::compression_choice::never}};
  app.add_option("--compression", cfg.compression,
                 "compress or send plain (ndzip::mpi::options::compression): adaptive (default: "
                 "6 untimed rounds let it time both ways), always, never")
      ->transform(CLI::CheckedTransformer(choices, CLI::ignore_case));
  app.add_flag("--isend-copies", cfg.isend_copies,
               "the exchange's isend copies plain values (options::values_stay_until_complete "
               "off); by default they stay put until it completes, as MPI_Isend asks");
  app.add_option("--scale", cfg.scale,
                 "divide the synthetic fields' slowest extent by K (0.5 doubles it: 2 GiB of "
                 "doubles or random floats, with --sizes-mib 2048 --max-mib 2048)")
      ->check(positive_number);
  app.add_flag("--csv", cfg.csv, "CSV output");
  ndzip::perf::mpi_bench::collective_config collective;
  ndzip::perf::mpi_bench::add_collective_options(app, collective);
  int status = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    status = rank() == 0 ? app.exit(e) : 1;
    MPI_Finalize();
    return status;
  }
  if (!cfg.synthetic && cfg.manifest.empty() && !cfg.incompressible) cfg.synthetic = true;
  // Every field checked before any transfer (and before any rank count is insisted on).
  std::vector<field_spec> fields;
  std::string problem;
  try {
    fields = fields_of(cfg);
  } catch (const std::exception& e) {
    problem = e.what();
  }
  if (refused_anywhere(problem)) {
    MPI_Finalize();
    return 2;
  }
  if (cfg.transport == nccl_transport) {
    cfg.nccl = true;
    cfg.transport = ndzip::mpi::transport_kind::automatic;
  }
  ndzip::mpi::options opts;
  // A segment is one message at most (1 GiB) whatever is asked.
  opts.segment_bytes = static_cast<std::size_t>(std::min(cfg.segment_mib, 1024.0) * 1048576.0);
  opts.pipeline_depth = cfg.pipeline_depth;
  opts.checksum = cfg.checksum;
  opts.transport = cfg.transport;
  opts.compression = cfg.compression;
  // The exchange leaves its values alone until its isend completes, as MPI_Isend asks.
  opts.values_stay_until_complete = !cfg.isend_copies;
  if (!collective.operations.empty()) {
    collective.sizes_mib = cfg.sizes_mib;
    collective.max_mib = cfg.max_mib;
    collective.repetitions = cfg.repetitions;
    collective.csv = cfg.csv;
    collective.nccl = cfg.nccl;
    collective.opts = opts;
    status = ndzip::perf::mpi_bench::run_collectives(collective, fields, argc, argv);
    MPI_Finalize();
    return status;
  }
  if (size != 2) {
    if (rank() == 0) std::fprintf(stderr, "ndzip-mpi-bench: run on exactly 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    const exec_space exec;
    const ndzip::mpi::communicator<exec_space> channel(exec, MPI_COMM_WORLD, opts);
    // ndzip::mpi hands MPI the execution space's own memory where the host can access it (as
    // raw_channel does), else stages it or hands MPI device memory (channel.transport).
    constexpr bool in_place =
        Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible;
    const char* path = cfg.nccl ? "device memory, through NCCL"
                       : in_place
                           ? "host memory, handed to MPI in place"
                       : channel.transport(true) == ndzip::mpi::transport_kind::mpi_device
                           ? "device memory, handed to MPI directly"
                                                   : "device memory, staged through host-pinned";
    if (rank() == 0 && !cfg.csv)
      std::printf(
          "# %s, 2 ranks; one-way effective GB/s = uncompressed bytes / time (median); %s\n",
          exec_space::name(), path);
    print_header(cfg);
    bool ok = true;
    try {
      for (const auto& f : fields)
        ok = (f.data.is_double ? run_spec<double>(exec, cfg, f, opts)
                               : run_spec<float>(exec, cfg, f, opts)) &&
             ok;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ndzip-mpi-bench: rank %d: %s\n", rank(), e.what());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    status = ok ? 0 : 1;
  }
  MPI_Finalize();
  return status;
}
