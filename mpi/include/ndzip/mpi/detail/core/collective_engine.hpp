// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The compressed collectives (ndzip/mpi/bcast.hpp ... alltoall.hpp), written once for every
// link: the five operations differ only in who sends which piece to whom, and a link (MPI:
// detail/mpi/collective_link.hpp; NCCL: detail/nccl/collective_link.hpp) moves the heads and
// the bytes with its own collectives (docs/FORMAT.md "Collectives"). Not part of the API.
//
// A call, on every rank of the communicator:
//   1. agreement: an all-reduce of each rank's argument errors, its root (and minus it: every
//      rank must give the same), the rounds its pieces need, the time its last call took (so
//      that adaptive ranks choose alike), whether it can take the plain way, and its share of
//      the call's balance (collective_balance.hpp). Where every rank sends raw and can move its
//      pieces whole from and into its Views, and the balance says every receiver expects what
//      its sender sends, the call is one collective of the values (the plain way), else:
//   2. per round r: wait for this rank's segments r (compressed on the instance while the
//      previous round was on the wire), then the heads of the round by the operation's
//      fixed-size collective (96 bytes a piece in round 0: the transfer head and segment 0's
//      head; 32 bytes after), each checked where it arrives; an all-reduce of the verdicts: a
//      head that cannot be trusted (damaged, forged, a piece larger than its receiver can hold)
//      stops the call on every rank before its bytes move; then the payloads by the operation's
//      own collective, in units of 64 bytes, so that the link's tuned trees and rings forward
//      the compressed bytes; the round's decoding queued on the instance;
//   3. one fence; every stream's outcome checked; strided Views unpacked; own pieces copied.
//
// A link offers: rank(), size(), require_ready(call), refused() (an option it cannot take),
// its memory (assembly, inbox, stages_outgoing, staging, stage_outgoing, decodes_inbox,
// codec_buffer, copy_to_codec: as detail/mpi/transport.hpp's; reads_views: whether it moves the
// Views' own memory), delivers_own_piece (whether allgather's bytes reach their own rank too,
// as MPI_Allgatherv's do), agree(values) (the agreement: agreement_values host integers, all
// but the last by MAX, the last summed), allreduce_max(values, count) of host integers,
// exchange_heads(kind, root, out, in, head_bytes) of host bytes, fits(counts) (why it cannot
// move a round so laid out, if it cannot) and move_bytes(kind, root, counts, send, recv).

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "ndzip/mpi/collective_plan.hpp"
#include "ndzip/mpi/collective_stats.hpp"
#include "ndzip/mpi/detail/core/batch_cache.hpp"
#include "ndzip/mpi/detail/core/collective_balance.hpp"
#include "ndzip/mpi/detail/core/collective_arguments.hpp"
#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/collective_layout.hpp"
#include "ndzip/mpi/detail/core/round_decoder.hpp"
#include "ndzip/mpi/detail/core/round_encoder.hpp"
#include "ndzip/mpi/detail/core/segment_decoder.hpp"
#include "ndzip/mpi/detail/core/send_choice.hpp"
#include "ndzip/mpi/detail/core/transfer_plan.hpp"
#include "ndzip/mpi/detail/core/view_support.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"
#include "ndzip/mpi/error.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi::detail {

#ifdef NDZIP_MPI_FAULT_INJECTION
// Tests only (the collectives' test binary defines it): the next call on this rank fails, as an
// allocation or the codec could, just before it compresses round `collective_fault_at()` (-1:
// no fault), and clears the fault.
inline std::atomic<long long>& collective_fault_at() {
  static std::atomic<long long> round{-1};
  return round;
}
#endif

// A mismatched piece is received and dropped only up to this much more than its View holds:
// a head announcing more stops the call (a receiver's memory stays bounded by its Views).
inline constexpr std::uint64_t mismatch_slack_bytes = std::uint64_t{16} << 20;

// Buffers a plan keeps between calls, carved round by round: one allocation holds every round
// of a call where the sizes expected from the Views fit, and a round that does not (a piece of
// other extents) takes a buffer of its own for the call.
class round_arena {
 public:
  // Room for `bytes` in one buffer, made by `make(bytes)` where the one kept is smaller.
  template <class Make>
  void reserve(std::size_t bytes, Make&& make) {
    if (m_block.size() < bytes) m_block = make(std::max<std::size_t>(bytes, 1));
  }
  // Starts a call: the block is free again, the extra buffers given back.
  void reset() {
    m_used = 0;
    m_extra.clear();
  }
  // `bytes` for one round, at a multiple of collective_unit.
  template <class Make>
  std::byte* take(std::size_t bytes, Make&& make) {
    bytes = static_cast<std::size_t>(round_up_to_unit(bytes));
    if (m_block && m_used + bytes <= m_block.size()) {
      std::byte* at = m_block.data() + m_used;
      m_used += bytes;
      return at;
    }
    m_extra.push_back(make(std::max<std::size_t>(bytes, 1)));
    return m_extra.back().data();
  }

 private:
  buffer m_block;
  std::size_t m_used = 0;
  std::vector<buffer> m_extra;
};

// One collective on this rank (collective_arguments.hpp says which pieces it sends and
// receives) over `Link`, with everything it needs kept between calls: the encoder and decoder's
// scratch, the batch codecs, the packed copies of strided Views, the link's buffers, and what
// the adaptive choice measured.
template <class ExecSpace, class SendView, class RecvView, class Link>
class collective_engine {
 public:
  using value_type = std::remove_const_t<typename SendView::value_type>;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr int dims = static_cast<int>(SendView::rank);

  using arguments = collective_arguments<SendView, RecvView>;

  collective_engine(const ExecSpace& exec, Link link, arguments args, const options& opts)
      : m_exec(exec),
        m_link(std::move(link)),
        m_opts(opts),
        m_args(std::move(args)),
        m_batches(exec),
        m_decoder(exec, m_batches) {
    check_view_type<SendView, ExecSpace>();
    check_view_type<RecvView, ExecSpace>();
    static_assert(std::is_same_v<value_type, std::remove_const_t<typename RecvView::value_type>> &&
                      SendView::rank == RecvView::rank,
                  "ndzip::mpi collectives send and receive Views of one element type and rank");
    static_assert(!std::is_const_v<typename RecvView::value_type>,
                  "ndzip::mpi collectives receive into writable Views");
    m_link.require_ready(name());
    m_rank = m_link.rank();
    m_size = m_link.size();
    try {
      if (opts.checksum)
        throw std::invalid_argument(
            "options::checksum is not offered by the collectives (their pieces carry no "
            "checksums); the links check their own frames, and every piece is validated on "
            "arrival");
      if (!m_link.refused().empty()) throw std::invalid_argument(m_link.refused());
      prepare();
    } catch (const std::exception& e) {
      if (m_args.error.empty()) m_args.error = e.what();
    }
  }

  // One call (ndzip/mpi/<operation>.hpp say what each does).
  collective_stats execute() {
    m_link.require_ready(name());
    const auto started = clock::now();
    collective_stats stats;
    // Chosen before the agreement, which brings the last call's time: the adaptive choice sees
    // each call's time one call late.
    const send_mode mode = choose_send_mode(m_opts, [&] {
      return m_history.choose(-2, static_cast<int>(m_args.kind), m_values_bytes, false);
    });
    const bool plain_way = agree_on_call(mode, stats);
    stats.sent.plain = mode == send_mode::plain;
    std::exception_ptr failure;
    try {
      if (plain_way)
        run_plain_way(stats, failure);
      else
        run_rounds(mode == send_mode::compressed, stats, failure);
    } catch (...) {
      m_exec.fence();  // no queued work may outlive the buffers of the call
      reset_rounds();
      throw;
    }
    m_last_mode = mode;
    m_last_seconds = std::chrono::duration<double>(clock::now() - started).count();
    stats.total_seconds = m_last_seconds;
    if (failure) std::rethrow_exception(failure);
    return stats;
  }

 private:
  using clock = std::chrono::steady_clock;

  const char* name() const { return collective_name(m_args.kind); }
  bool one_send_slot() const {
    return m_args.kind != collective_kind::scatter && m_args.kind != collective_kind::alltoall;
  }
  bool one_recv_slot() const {
    return m_args.kind == collective_kind::bcast || m_args.kind == collective_kind::scatter;
  }
  int source_of(std::size_t slot) const {
    return one_recv_slot() ? m_args.root : static_cast<int>(slot);
  }

  // The pieces as the codec sees them, their packed copies where a View is strided, and the
  // encoder of the sent ones.
  void prepare() {
    if (has_root(m_args.kind) && (m_args.root < 0 || m_args.root >= m_size))
      throw std::invalid_argument("root " + std::to_string(m_args.root) +
                                  " is not a rank of the communicator (it has " +
                                  std::to_string(m_size) + ")");
    const std::size_t segment = m_opts.segment_bytes > 0 ? m_opts.segment_bytes
                                                          : std::size_t{16} << 20;
    std::vector<outgoing_piece<value_type>> out;
    std::uint64_t rounds = 1;  // round 0 carries every transfer head, even of empty pieces
    for (std::size_t s = 0; s < m_args.sends.size(); ++s) {
      if (!m_args.sends[s]) continue;
      const SendView& v = *m_args.sends[s];
      const transfer_head head =
          plan_transfer<value_type, dims>(extents_of(v), segment, false, false);
      rounds = std::max<std::uint64_t>(rounds, head.segments());
      m_send_slots.push_back(s);
      out.push_back({packed_send(v), head});
      m_values_bytes += v.size() * sizeof(value_type);
    }
    m_send_rounds = rounds;
    // A rank that sends nothing queues no round at all (not even a publication).
    const std::uint64_t encoded_rounds = out.empty() ? 0 : rounds;
    m_encoder.emplace(m_exec, m_batches, std::move(out), encoded_rounds);
    plan_view_rounds();
    if (m_args.kind == collective_kind::allgather && Link::delivers_own_piece &&
        m_args.own_send && m_args.own_recv &&
        is_c_contiguous(*m_args.own_recv) &&
        extents_of(*m_args.own_recv) == extents_of(*m_args.own_send))
      m_own_recv = m_args.own_recv->data();
    for (std::size_t s = 0; s < m_args.recvs.size(); ++s) {
      if (!m_args.recvs[s]) continue;
      const RecvView& v = *m_args.recvs[s];
      incoming_piece<value_type> in;
      in.values = packed_recv(v);
      in.expected = plan_transfer<value_type, dims>(extents_of(v), segment, false, false);
      m_recv_slots.push_back(s);
      m_incoming.push_back(in);
      m_values_bytes += v.size() * sizeof(value_type);
    }
    reserve_rounds();
    plan_plain_way();
  }

  // The kept buffers for the rounds the Views expect: what this rank's segments take, and what
  // the segments it receives take (and its own piece, which MPI_Allgatherv delivers to it).
  void reserve_rounds() {
    const auto& encoder = *m_encoder;
    std::size_t sent = 0, received = 0;
    for (std::uint64_t r = 0; r < encoder.rounds(); ++r) {
      sent += encoder.region_bytes(r);
      if (m_args.kind == collective_kind::allgather && Link::delivers_own_piece)
        received += encoder.region_bytes(r);
    }
    for (const auto& in : m_incoming)
      for (std::uint64_t r = 0; r < in.expected.segments(); ++r) {
        const slab_shape shape = slab_of(in.expected, r);
        const std::size_t bound =
            holds_hypercube<value_type>(shape) ? stream_bound<value_type>(shape) : 0;
        received += round_up_to_unit(std::max<std::size_t>(bound, in.expected.slab_bytes(r)));
      }
    m_assemblies.reserve(sent, [&](std::size_t b) { return m_link.assembly(b); });
    if (m_link.stages_outgoing())
      m_staged.reserve(sent, [&](std::size_t b) { return m_link.staging(b); });
    m_inboxes.reserve(received, [&](std::size_t b) { return m_link.inbox(b); });
    if (!m_link.decodes_inbox())
      m_codec_copies.reserve(received, [&](std::size_t b) { return m_link.codec_buffer(b); });
  }

  // Where the codec reads a sent View: its own memory, or a packed copy (refreshed per call).
  const value_type* packed_send(const SendView& v) {
    if (is_c_contiguous(v)) return v.data();
    m_packed_sends.emplace_back(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi collective packed"), v.size());
    m_repack.push_back(m_packed_sends.size() - 1);
    m_repack_views.push_back(v);
    return m_packed_sends.back().data();
  }
  value_type* packed_recv(const RecvView& v) {
    if (is_c_contiguous(v)) return v.data();
    m_packed_recvs.emplace_back(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::mpi collective packed"), v.size());
    m_unpack.emplace_back(v, m_packed_recvs.size() - 1);
    return m_packed_recvs.back().data();
  }

  // Step 1: every rank learns of every rank's argument errors, that all gave one root, the
  // rounds of the call, the time of its last call, and whether all take the plain way: each
  // sends raw (`mode`) and can move its pieces whole from and into its Views (plan_plain_way),
  // and every receiver expects what its sender sends (the call's balance is 0). Returns whether
  // they do.
  bool agree_on_call(send_mode mode, collective_stats& stats) {
    const auto t = clock::now();
    const bool plain_here = mode == send_mode::plain && m_plain && m_args.error.empty();
    std::int64_t all[agreement_values] = {
        m_args.error.empty() ? 0 : m_rank + 1,
        m_args.root,
        -m_args.root,
        static_cast<std::int64_t>(m_send_rounds),
        static_cast<std::int64_t>(m_last_seconds * 1e9),
        plain_here ? 0 : m_rank + 1,
        static_cast<std::int64_t>(m_balance_share)};
    static_assert(agreement_values == 7, "the agreement's values as docs/FORMAT.md lists them");
    m_link.agree(all);  // in place: this rank's values in, every rank's reduced out
    stats.agree_seconds += std::chrono::duration<double>(clock::now() - t).count();
    if (!m_args.error.empty())
      throw std::invalid_argument(std::string(name()) + ": " + m_args.error);
    if (all[0] > 0)
      throw std::invalid_argument(std::string(name()) + ": rank " + std::to_string(all[0] - 1) +
                                  " refused its arguments (its error says why); nothing was "
                                  "moved");
    if (has_root(m_args.kind) && all[1] != -all[2])
      throw std::invalid_argument(std::string(name()) + ": the ranks gave different roots (" +
                                  std::to_string(-all[2]) + " to " + std::to_string(all[1]) +
                                  "); nothing was moved");
    m_rounds = static_cast<std::uint64_t>(all[3]);
    // The last call's time as its slowest rank saw it: every adaptive rank records the same.
    if (m_last_mode && all[4] > 0)
      m_history.record(-2, static_cast<int>(m_args.kind), m_values_bytes, *m_last_mode,
                       static_cast<double>(all[4]) * 1e-9);
    return all[5] == 0 && all[6] == 0;
  }

  // Which pieces a raw call can move whole, from and into the Views themselves, in one
  // collective of the link (the plain way: no heads, no verdicts, as an application's own
  // collective of the values): where the link reads the Views, none is strided, every piece is
  // whole units (the link then moves no byte past one), each side's Views (with, for
  // allgather, this rank's own received View) are addressed together within the link's counts.
  // Also this rank's share of the call's balance (collective_balance.hpp).
  void plan_plain_way() {
    const auto& pieces = m_encoder->pieces();
    const auto destinations = [&](std::size_t slot, auto&& to) {
      if (!one_send_slot()) return to(static_cast<int>(slot));
      if (m_args.kind == collective_kind::gather) return to(m_args.root);
      for (int d = 0; d < m_size; ++d)
        if (d != m_rank) to(d);
    };
    m_balance_share = 0;
    for (std::size_t p = 0; p < pieces.size(); ++p)
      destinations(m_send_slots[p], [&](int d) {
        m_balance_share += piece_fingerprint(m_rank, d, pieces[p].head);
      });
    for (std::size_t q = 0; q < m_incoming.size(); ++q)
      m_balance_share -= piece_fingerprint(source_of(m_recv_slots[q]), m_rank,
                                           m_incoming[q].expected);

    m_plain.reset();
    if (!m_link.reads_views() || !m_repack.empty() || !m_unpack.empty()) return;
    const bool own_delivered = m_args.kind == collective_kind::allgather &&
                               Link::delivers_own_piece;
    if (own_delivered && !m_own_recv) return;
    plain_layout plain;
    round_counts& c = plain.counts;
    c.send_units.assign(one_send_slot() ? 1 : static_cast<std::size_t>(m_size), 0);
    c.send_offsets.assign(c.send_units.size(), 0);
    c.recv_units.assign(one_recv_slot() ? 1 : static_cast<std::size_t>(m_size), 0);
    c.recv_offsets.assign(c.recv_units.size(), 0);
    std::vector<std::byte*> from(c.send_units.size(), nullptr), into(c.recv_units.size(), nullptr);
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      const std::uint64_t b = pieces[p].head.values_bytes();
      if (b % collective_unit != 0) return;
      c.send_units[one_send_slot() ? 0 : m_send_slots[p]] = b / collective_unit;
      if (b > 0)
        from[one_send_slot() ? 0 : m_send_slots[p]] =
            reinterpret_cast<std::byte*>(const_cast<value_type*>(pieces[p].values));
    }
    for (std::size_t q = 0; q < m_incoming.size(); ++q) {
      const std::uint64_t b = m_incoming[q].expected.values_bytes();
      if (b % collective_unit != 0) return;
      const std::size_t slot = one_recv_slot() ? 0 : m_recv_slots[q];
      c.recv_units[slot] = b / collective_unit;
      if (b > 0) into[slot] = reinterpret_cast<std::byte*>(m_incoming[q].values);
    }
    if (own_delivered) {
      c.recv_units[m_rank] = c.send_units[0];
      if (c.send_units[0] > 0) into[m_rank] = reinterpret_cast<std::byte*>(m_own_recv);
    }
    const auto sent = address_together(from);
    const auto received = address_together(into);
    if (!sent || !received) return;
    for (std::size_t s = 0; s < c.send_units.size(); ++s) c.send_offsets[s] = sent->offsets[s];
    for (std::size_t s = 0; s < c.recv_units.size(); ++s) {
      c.recv_offsets[s] = received->offsets[s];
      c.recv_total = std::max(c.recv_total, c.recv_offsets[s] + c.recv_units[s]);
    }
    if (m_link.fits(c)) return;
    plain.send = sent->base;
    plain.recv = received->base;
    m_plain = std::move(plain);
  }

  // A call the plain way: every piece moved whole by one collective of the link.
  void run_plain_way(collective_stats& stats, std::exception_ptr& failure) {
    for (auto& in : m_incoming) in.decode = false;
    m_settled = false;
    settle_for_link();
    const auto t = clock::now();
    m_link.move_bytes(m_args.kind, m_args.root, m_plain->counts, m_plain->send, m_plain->recv);
    stats.link_seconds += std::chrono::duration<double>(clock::now() - t).count();
    // Each piece one raw segment of its whole values, without heads.
    const auto count_whole = [](transfer_stats& side, std::uint64_t bytes) {
      side.segments += bytes > 0;
      side.raw_segments += bytes > 0;
      side.raw_bytes += bytes;
      side.wire_bytes += bytes;
    };
    for (const auto& piece : m_encoder->pieces())
      count_whole(stats.sent, piece.head.values_bytes());
    for (const auto& in : m_incoming) count_whole(stats.received, in.expected.values_bytes());
    if (m_own_recv) m_own_rounds_delivered = m_encoder->pieces()[0].head.segments();
    std::vector<std::exception_ptr> errors;
    copy_own_piece(errors);
    m_exec.fence();
    stats.rounds = 0;
    if (!errors.empty()) failure = errors.front();
  }

  void run_rounds(bool compress, collective_stats& stats, std::exception_ptr& failure) {
    for (std::size_t i = 0; i < m_repack.size(); ++i)
      Kokkos::deep_copy(m_exec, c_order_over(m_packed_sends[m_repack[i]].data(), m_repack_views[i]),
                        m_repack_views[i]);
    auto& encoder = *m_encoder;
    encoder.reset();
    m_decoder.reset(m_incoming.size(), m_rounds);
    m_own_rounds_delivered = 0;
    for (auto& in : m_incoming) in.decode = false;
    m_oversized.reset();
    reset_rounds();
    std::vector<std::byte*> assemblies(m_rounds, nullptr);
    const auto assemble = [&](std::uint64_t r) {
      if (r >= encoder.rounds() || sends_from_views(compress, r)) return;
#ifdef NDZIP_MPI_FAULT_INJECTION
      if (collective_fault_at().load() == static_cast<long long>(r)) {
        collective_fault_at() = -1;
        throw std::runtime_error("injected fault before round " + std::to_string(r));
      }
#endif
      assemblies[r] = m_assemblies.take(encoder.region_bytes(r),
                                        [&](std::size_t b) { return m_link.assembly(b); });
      encoder.queue(r, compress, assemblies[r]);
    };
    // A failure of this rank's own work (an allocation, the codec) before a round's verdict is
    // its refusal of the round, so that no rank waits for it; after the verdict, it is thrown
    // once the call is over.
    std::optional<std::string> failed_here;
    m_failure = nullptr;
    m_settled = false;
    const auto fail_here = [&](const std::exception& e) {
      if (failed_here) return;
      failed_here = e.what();
      m_failure = std::current_exception();
    };
    // On a host backend the codec runs inside queue(): its time is the host's wait too.
    const auto first = clock::now();
    try {
      assemble(0);
    } catch (const std::exception& e) {
      fail_here(e);
    }
    stats.sent.codec_seconds += std::chrono::duration<double>(clock::now() - first).count();
    std::vector<std::exception_ptr> errors;  // mismatches and damaged streams, thrown at the end
    for (std::uint64_t r = 0; r < m_rounds; ++r) {
      const auto waiting = clock::now();
      const std::uint64_t* sizes = nullptr;
      const std::byte* outgoing = nullptr;
      const bool direct = sends_from_views(compress, r);
      const view_round* views = direct ? &m_view_rounds[r] : nullptr;
      if (!failed_here) try {
          if (direct) {
            settle_for_link();
            sizes = view_sizes(r);
          } else {
            sizes = r < encoder.rounds() ? encoder.wait(r) : nullptr;
          }
          outgoing = sent_region(r, sizes, direct ? views->from.base : assemblies[r],
                                 [&](std::size_t p) {
                                   return direct ? views->slabs[p]
                                                 : assemblies[r] + encoder.payload_offset(r, p);
                                 });
          assemble(r + 1);
          if (m_link.stages_outgoing() && sizes) encoder.wait_staged(r);
        } catch (const std::exception& e) {
          fail_here(e);
          sizes = nullptr;
          outgoing = nullptr;
        }
      stats.sent.codec_seconds += std::chrono::duration<double>(clock::now() - waiting).count();
      exchange_heads(r, sizes, stats);
      std::vector<segment_head> heads(m_incoming.size());
      std::optional<std::string> refusal = check_heads(r, heads, errors);
      round_counts counts =
          lay_out_sends(r, sizes, views && !m_link.stages_outgoing() ? &views->from : nullptr);
      std::optional<unit_addressing> into_views = views_receiving(r, heads, sizes);
      lay_out_receives(r, heads, into_views ? &*into_views : nullptr, counts);
      if (into_views && m_link.fits(counts)) {  // the Views lie too far apart: an inbox
        into_views.reset();
        lay_out_receives(r, heads, nullptr, counts);
      }
      const bool straight_in = into_views.has_value();
      if (straight_in && m_own_recv && sizes && sizes[0] > 0) ++m_own_rounds_delivered;
      if (!refusal) refusal = m_link.fits(counts);
      std::byte* inbox = nullptr;
      if (!refusal && !failed_here) try {
          inbox = straight_in ? into_views->base : take_inbox(counts);
        } catch (const std::exception& e) {
          fail_here(e);
        }
      if (failed_here) refusal = failed_here;
      agree_on_round(r, refusal, stats);
      if (straight_in) settle_for_link();
      move_bytes(r, counts, outgoing, inbox, straight_in, heads, stats, errors);
      count_sent(r, sizes, stats);
    }
    const auto decoding = clock::now();
    m_exec.fence();
    std::vector<bool> failed(m_incoming.size(), false);
    if (auto damaged = m_decoder.check(failed, [&](std::size_t q, std::uint64_t r) {
          return std::string(name()) + ": the piece from rank " +
                 std::to_string(source_of(m_recv_slots[q])) + ", segment " + std::to_string(r) +
                 ": ";
        }))
      errors.push_back(damaged);
    for (const auto& [view, packed] : m_unpack)
      Kokkos::deep_copy(m_exec, view, c_order_over(m_packed_recvs[packed].data(), view));
    copy_own_piece(errors);
    m_exec.fence();
    stats.received.codec_seconds += std::chrono::duration<double>(clock::now() - decoding).count();
    stats.rounds = m_rounds;
    reset_rounds();
    if (!errors.empty()) failure = errors.front();
  }

  // Which rounds a raw call sends from the Views themselves (or staging copies of them) rather
  // than from copies in the round's assembly: where every slab of the round is whole units (the
  // link then reads no byte past one) and the link stages the Views, or reads their memory, all
  // of the round's slabs addressed together within its counts.
  void plan_view_rounds() {
    const auto& pieces = m_encoder->pieces();
    m_view_rounds.assign(m_encoder->rounds(), {});
    m_view_sizes.assign(pieces.size(), 0);
    if (!m_link.reads_views() && !m_link.stages_outgoing()) return;
    for (std::uint64_t r = 0; r < m_encoder->rounds(); ++r) {
      view_round round;
      round.slabs.assign(pieces.size(), nullptr);
      bool whole = true;
      for (std::size_t p = 0; p < pieces.size(); ++p) {
        const transfer_head& head = pieces[p].head;
        if (r >= head.segments()) continue;
        whole = whole && head.slab_bytes(r) % collective_unit == 0;
        round.slabs[p] = reinterpret_cast<std::byte*>(const_cast<value_type*>(pieces[p].values) +
                                                      head.slab_offset(r));
      }
      if (!whole) continue;
      if (m_link.reads_views()) {
        auto together = address_together(round.slabs);
        if (!together || m_link.fits(lay_out_sends(r, view_sizes(r), &*together))) continue;
        round.from = std::move(*together);
      }
      round.usable = true;
      m_view_rounds[r] = std::move(round);
    }
  }
  bool sends_from_views(bool compress, std::uint64_t r) const {
    return !compress && r < m_view_rounds.size() && m_view_rounds[r].usable;
  }
  // The payload sizes of round r sent from the Views: every slab whole.
  const std::uint64_t* view_sizes(std::uint64_t r) {
    const auto& pieces = m_encoder->pieces();
    for (std::size_t p = 0; p < pieces.size(); ++p)
      m_view_sizes[p] = r < pieces[p].head.segments() ? pieces[p].head.slab_bytes(r) : 0;
    return m_view_sizes.data();
  }
  // Before the link first reads or writes a View itself in a call: on a device, the work queued
  // on the instance before the call (which may still write or read the View) is done. Once a
  // call is enough: the call queues no work on a View the link moves itself. Host backends have
  // run it all.
  void settle_for_link() {
    if constexpr (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible) {
      if (!m_settled) m_exec.fence();
    }
    m_settled = true;
  }

  // Where round r's received pieces arrive straight in their Views: each a raw segment of whole
  // units (the link then writes no byte past its slab) into a View that passed its checks,
  // where the link writes the Views' memory; for allgather, this rank's own raw piece too,
  // into its View (MPI_Allgatherv delivers it), where that View is contiguous and of the sent
  // extents. Nullopt: through an inbox.
  std::optional<unit_addressing> views_receiving(std::uint64_t r,
                                                 const std::vector<segment_head>& heads,
                                                 const std::uint64_t* sizes) const {
    if (m_incoming.empty() || !m_link.reads_views()) return std::nullopt;
    std::vector<std::byte*> at(one_recv_slot() ? 1 : static_cast<std::size_t>(m_size), nullptr);
    for (std::size_t q = 0; q < m_incoming.size(); ++q) {
      const auto& in = m_incoming[q];
      if (r >= in.arrived.segments()) continue;
      if (!in.decode || heads[q].kind != segment_kind::raw ||
          heads[q].payload_bytes % collective_unit != 0)
        return std::nullopt;
      at[one_recv_slot() ? 0 : m_recv_slots[q]] =
          reinterpret_cast<std::byte*>(in.values + in.arrived.slab_offset(r));
    }
    if (m_args.kind == collective_kind::allgather && Link::delivers_own_piece && sizes &&
        sizes[0] > 0) {
      const transfer_head& own = m_encoder->pieces()[0].head;
      if (!m_own_recv || sizes[0] != own.slab_bytes(r) || sizes[0] % collective_unit != 0)
        return std::nullopt;
      at[m_rank] = reinterpret_cast<std::byte*>(m_own_recv + own.slab_offset(r));
    }
    return address_together(at);
  }

  // Where the link sends round r's payloads from: `region` (the round's assembly, or the base of
  // the Views its pieces are sent from, view_round), or a staging copy of each payload, from
  // where `payload(p)` lies (queued; the caller waits for it).
  template <class Payload>
  const std::byte* sent_region(std::uint64_t r, const std::uint64_t* sizes, std::byte* region,
                               Payload&& payload) {
    if (!sizes) return nullptr;
    if (!m_link.stages_outgoing()) return region;
    auto& encoder = *m_encoder;
    std::byte* staged = m_staged.take(encoder.region_bytes(r),
                                      [&](std::size_t b) { return m_link.staging(b); });
    for (std::size_t p = 0; p < encoder.pieces().size(); ++p)
      if (sizes[p] > 0)
        m_link.stage_outgoing(staged + encoder.payload_offset(r, p), payload(p),
                              round_up_to_unit(sizes[p]));
    encoder.queue_staged_mark(r);
    return staged;
  }

  // The kept buffers free for a call.
  void reset_rounds() {
    m_assemblies.reset();
    m_staged.reset();
    m_inboxes.reset();
    m_codec_copies.reset();
  }

  // The heads of round r, by the operation's fixed-size collective.
  void exchange_heads(std::uint64_t r, const std::uint64_t* sizes, collective_stats& stats) {
    const std::size_t h = round_head_bytes(r);
    const std::size_t n = static_cast<std::size_t>(m_size);
    m_out_heads.assign((one_send_slot() ? 1 : n) * h, std::byte{0});
    m_in_heads.assign((one_recv_slot() ? 1 : n) * h, std::byte{0});
    const auto& pieces = m_encoder->pieces();
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      std::byte* slot = m_out_heads.data() + (one_send_slot() ? 0 : m_send_slots[p]) * h;
      const transfer_head& head = pieces[p].head;
      if (r == 0) {
        write_transfer_head(head, slot);
        slot += transfer_head_bytes;
      }
      // Without its sizes (this rank failed) the round's heads stay zeros: refused anyway.
      if (sizes && r < head.segments()) {
        const bool raw = sizes[p] == head.slab_bytes(r);  // a stream is always smaller
        put_segment_head(slot, raw ? segment_kind::raw : segment_kind::stream, r, sizes[p], 0);
      }
    }
    const auto t = clock::now();
    m_link.exchange_heads(m_args.kind, m_args.root, m_out_heads.data(), m_in_heads.data(), h);
    stats.link_seconds += std::chrono::duration<double>(clock::now() - t).count();
  }

  // Checks the heads of round r that arrived for this rank's pieces: round 0's transfer heads
  // against the Views (a mismatched piece is received and dropped; its error goes to `errors`),
  // and every segment head against its slab. Returns why this rank cannot take the round's
  // bytes, if it cannot.
  std::optional<std::string> check_heads(std::uint64_t r, std::vector<segment_head>& heads,
                                         std::vector<std::exception_ptr>& errors) {
    const std::size_t h = round_head_bytes(r);
    for (std::size_t q = 0; q < m_incoming.size(); ++q) {
      auto& in = m_incoming[q];
      const int source = source_of(m_recv_slots[q]);
      const std::string from = "the piece from rank " + std::to_string(source);
      const std::byte* slot = m_in_heads.data() + (one_recv_slot() ? 0 : m_recv_slots[q]) * h;
      try {
        if (r == 0) {
          in.arrived = read_transfer_head(slot, transfer_head_bytes);
          slot += transfer_head_bytes;
          if (in.arrived.plain || in.arrived.checksummed)
            throw stream_error("its head says plain or checksummed, which collectives never send");
          if (in.arrived.segments() > m_rounds)
            throw stream_error("its head announces " + std::to_string(in.arrived.segments()) +
                               " segments, more than the " + std::to_string(m_rounds) +
                               " rounds its sender agreed to");
          in.decode = true;
          if (auto mismatch = mismatch_of(in.arrived, in.expected, "rank " + std::to_string(source),
                                          "View", "piece")) {
            in.decode = false;
            if (in.arrived.values_bytes() > in.expected.values_bytes() + mismatch_slack_bytes) {
              m_oversized = *mismatch;
              throw mismatch_error(std::string(mismatch->what()) +
                                   "; it is too large to be received and dropped, so the call "
                                   "stopped on every rank");
            }
            errors.push_back(std::make_exception_ptr(mismatch_error(
                std::string(name()) + ": " + mismatch->what())));
          }
        }
        heads[q] = {};
        if (r < in.arrived.segments()) {
          const std::uint64_t announced = announced_payload_bytes(slot);
          heads[q] = read_segment_head(slot, segment_head_bytes + announced, r,
                                       in.arrived.slab_bytes(r), false);
        }
      } catch (const mismatch_error& e) {
        return std::string(e.what());
      } catch (const stream_error& e) {
        m_oversized.reset();
        return std::string(name()) + ": " + from + ", segment " + std::to_string(r) + ": " +
               e.what();
      }
    }
    return std::nullopt;
  }

  // Every rank learns whether one cannot take round r's bytes; then all stop.
  void agree_on_round(std::uint64_t r, const std::optional<std::string>& refusal,
                      collective_stats& stats) {
    const auto t = clock::now();
    // A rank that failed, and a rank that refused a head: a failure explains the refusals it
    // causes (the heads it could not send), so it is what the other ranks report.
    std::int64_t all[2] = {m_failure ? m_rank + 1 : 0, refusal ? m_rank + 1 : 0};
    m_link.allreduce_max(all, 2);
    stats.agree_seconds += std::chrono::duration<double>(clock::now() - t).count();
    if (all[0] == 0 && all[1] == 0) return;
    m_exec.fence();
    if (m_failure) std::rethrow_exception(m_failure);
    if (all[0] > 0)
      throw error(std::string(name()) + ": rank " + std::to_string(all[0] - 1) +
                  " failed in round " + std::to_string(r) +
                  " (its error says why); the call stopped on every rank");
    if (refusal) {
      if (m_oversized) throw mismatch_error(*refusal);
      throw stream_error(*refusal + " (the call stopped on every rank)");
    }
    throw error(std::string(name()) + ": rank " + std::to_string(all[1] - 1) +
                " refused a piece's head in round " + std::to_string(r) +
                " (its error says why); the call stopped on every rank");
  }

  // Round r's sends in units of collective_unit, per head slot: where each payload lies in the
  // round's region, or in the Views addressed together (`from_views`).
  round_counts lay_out_sends(std::uint64_t r, const std::uint64_t* sizes,
                             const unit_addressing* from_views) const {
    round_counts c;
    c.send_units.assign(one_send_slot() ? 1 : static_cast<std::size_t>(m_size), 0);
    c.send_offsets.assign(c.send_units.size(), 0);
    const auto& pieces = m_encoder->pieces();
    for (std::size_t p = 0; p < pieces.size() && sizes; ++p) {
      const std::size_t slot = one_send_slot() ? 0 : m_send_slots[p];
      c.send_units[slot] = round_up_to_unit(sizes[p]) / collective_unit;
      c.send_offsets[slot] =
          from_views ? from_views->offsets[p] : m_encoder->payload_offset(r, p) / collective_unit;
    }
    return c;
  }

  // Round r's receives in units, per slot, as the heads announce them: packed in an inbox, or
  // in the Views addressed together (`into_views`, views_receiving).
  void lay_out_receives(std::uint64_t r, const std::vector<segment_head>& heads,
                        const unit_addressing* into_views, round_counts& c) const {
    c.recv_units.assign(one_recv_slot() ? 1 : static_cast<std::size_t>(m_size), 0);
    c.recv_offsets.assign(c.recv_units.size(), 0);
    for (std::size_t q = 0; q < m_incoming.size(); ++q)
      if (r < m_incoming[q].arrived.segments())
        c.recv_units[one_recv_slot() ? 0 : m_recv_slots[q]] =
            round_up_to_unit(heads[q].payload_bytes) / collective_unit;
    if (m_args.kind == collective_kind::allgather && Link::delivers_own_piece)
      c.recv_units[m_rank] = c.send_units[0];
    std::uint64_t total = 0;
    for (std::size_t s = 0; s < c.recv_units.size(); ++s) {
      c.recv_offsets[s] = into_views ? into_views->offsets[s] : total;
      total = into_views ? std::max(total, c.recv_offsets[s] + c.recv_units[s])
                         : total + c.recv_units[s];
    }
    c.recv_total = total;
  }

  // Where round r's payloads arrive: room for the announced ones, kept until the call is over.
  std::byte* take_inbox(const round_counts& counts) {
    const std::size_t bytes = static_cast<std::size_t>(counts.recv_total) * collective_unit;
    return m_inboxes.take(bytes, [&](std::size_t b) { return m_link.inbox(b); });
  }

  // The payloads of round r, by the operation's collective, and their decoding queued (a
  // failure to queue it is thrown once the call is over).
  void move_bytes(std::uint64_t r, const round_counts& counts, const std::byte* outgoing,
                  std::byte* inbox, bool straight_in, const std::vector<segment_head>& heads,
                  collective_stats& stats, std::vector<std::exception_ptr>& errors) {
    const std::size_t inbox_bytes = static_cast<std::size_t>(counts.recv_total) * collective_unit;
    const auto t = clock::now();
    m_link.move_bytes(m_args.kind, m_args.root, counts, outgoing, inbox);
    stats.link_seconds += std::chrono::duration<double>(clock::now() - t).count();
    try {
      queue_decoding(r, counts, straight_in ? nullptr : inbox, inbox_bytes, heads, stats);
    } catch (...) {
      errors.push_back(std::current_exception());
    }
  }

  // Round r's decoding, from the inbox or its copy in the execution space's memory (raw pieces
  // of a staged inbox: copied from there, unpacks_raw_round); nothing to decode without an
  // inbox (the pieces arrived in their Views).
  void queue_decoding(std::uint64_t r, const round_counts& counts, const std::byte* inbox,
                      std::size_t inbox_bytes, const std::vector<segment_head>& heads,
                      collective_stats& stats) {
    for (std::size_t q = 0; q < m_incoming.size(); ++q)
      if (r < m_incoming[q].arrived.segments() && m_incoming[q].decode) {
        ++stats.received.segments;
        if (heads[q].kind == segment_kind::raw) ++stats.received.raw_segments;
        stats.received.wire_bytes += heads[q].payload_bytes + round_head_bytes(r);
        stats.received.raw_bytes += m_incoming[q].arrived.slab_bytes(r);
      }
    if (!inbox) return;
    const std::byte* at = inbox;
    if (!m_link.decodes_inbox()) {
      if (unpacks_raw_round(r, counts, inbox, heads)) return;
      std::byte* copy = m_codec_copies.take(inbox_bytes,
                                            [&](std::size_t b) { return m_link.codec_buffer(b); });
      m_link.copy_to_codec(copy, inbox, inbox_bytes);
      at = copy;
    }
    std::vector<const std::byte*> payloads(m_incoming.size(), nullptr);
    for (std::size_t q = 0; q < m_incoming.size(); ++q)
      payloads[q] = at + static_cast<std::size_t>(
                             counts.recv_offsets[one_recv_slot() ? 0 : m_recv_slots[q]]) *
                             collective_unit;
    m_decoder.queue(r, m_incoming, heads, payloads);
  }

  // Where every piece of round r that is decoded arrived raw in an inbox the codec cannot read
  // (host staging): each copied from there into its View, with nothing to decode. Returns
  // whether it was (false: the round has a stream, and is decoded from a copy of its inbox).
  bool unpacks_raw_round(std::uint64_t r, const round_counts& counts, const std::byte* inbox,
                         const std::vector<segment_head>& heads) {
    for (std::size_t q = 0; q < m_incoming.size(); ++q)
      if (r < m_incoming[q].arrived.segments() && m_incoming[q].decode &&
          heads[q].kind != segment_kind::raw)
        return false;
    for (std::size_t q = 0; q < m_incoming.size(); ++q) {
      const auto& in = m_incoming[q];
      if (r >= in.arrived.segments() || !in.decode) continue;
      const std::size_t slot = one_recv_slot() ? 0 : m_recv_slots[q];
      m_link.copy_to_codec(reinterpret_cast<std::byte*>(in.values + in.arrived.slab_offset(r)),
                           inbox + static_cast<std::size_t>(counts.recv_offsets[slot]) *
                                       collective_unit,
                           heads[q].payload_bytes);
    }
    return true;
  }

  void count_sent(std::uint64_t r, const std::uint64_t* sizes, collective_stats& stats) const {
    const auto& pieces = m_encoder->pieces();
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      if (r == 0) stats.sent.wire_bytes += transfer_head_bytes;
      if (!sizes || r >= pieces[p].head.segments()) continue;
      const std::uint64_t raw = pieces[p].head.slab_bytes(r);
      ++stats.sent.segments;
      if (sizes[p] == raw) ++stats.sent.raw_segments;
      stats.sent.raw_bytes += raw;
      stats.sent.wire_bytes += segment_head_bytes + sizes[p];
    }
  }

  // This rank's piece to itself (gather at the root, scatter at the root, allgather,
  // alltoall): copied, or a mismatch_error.
  void copy_own_piece(std::vector<std::exception_ptr>& errors) {
    if (!m_args.own_send || !m_args.own_recv) return;
    if (m_own_recv && m_own_rounds_delivered == m_encoder->pieces()[0].head.segments()) return;
    const auto& from = *m_args.own_send;
    const auto& to = *m_args.own_recv;
    if (extents_of(from) != extents_of(to)) {
      transfer_head a = plan_transfer<value_type, dims>(extents_of(from), 1, false, false);
      transfer_head b = plan_transfer<value_type, dims>(extents_of(to), 1, false, false);
      errors.push_back(std::make_exception_ptr(mismatch_error(
          std::string(name()) + ": this rank's own piece holds " + a.describe() +
          ", but the View it is copied into is " + b.describe() + "; the View was not written")));
      return;
    }
    Kokkos::deep_copy(m_exec, to, from);
  }

  ExecSpace m_exec;
  Link m_link;
  options m_opts;
  arguments m_args;
  int m_rank = 0, m_size = 1;
  batch_cache<value_type, ExecSpace> m_batches;
  std::optional<round_encoder<value_type, ExecSpace>> m_encoder;
  round_decoder<value_type, ExecSpace> m_decoder;
  std::vector<std::size_t> m_send_slots, m_recv_slots;  // per piece
  std::vector<incoming_piece<value_type>> m_incoming;
  std::uint64_t m_send_rounds = 1, m_rounds = 1;
  std::uint64_t m_values_bytes = 0;  // of every piece sent and received: the history's key
  // Strided Views: packed copies (sends refreshed per call, receives unpacked after it).
  std::vector<Kokkos::View<value_type*, memory_space>> m_packed_sends, m_packed_recvs;
  std::vector<std::size_t> m_repack;
  std::vector<SendView> m_repack_views;
  std::vector<std::pair<RecvView, std::size_t>> m_unpack;
  // Host heads of a round; the rounds' assemblies, staging copies, inboxes and the codec's copies
  // of them (kept between calls, every round of a call until its last is decoded).
  std::vector<std::byte> m_out_heads, m_in_heads;
  // Per round, where a raw call sends each piece from its View (plan_view_rounds): its slab
  // (null: no segment r) and, where the link reads the Views, their addressing.
  struct view_round {
    bool usable = false;
    std::vector<std::byte*> slabs;
    unit_addressing from;
  };
  std::vector<view_round> m_view_rounds;
  std::vector<std::uint64_t> m_view_sizes;  // per piece, of the round sent from the Views
  // The plain way's collective (plan_plain_way): its counts, over the sent Views addressed
  // from `send` and the received ones from `recv`.
  struct plain_layout {
    round_counts counts;
    std::byte* send = nullptr;
    std::byte* recv = nullptr;
  };
  std::optional<plain_layout> m_plain;
  std::uint64_t m_balance_share = 0;
  // Allgather: this rank's own received View, where MPI may deliver its own piece into it (C
  // order, the sent extents; else null), and the rounds of a call in which it did.
  value_type* m_own_recv = nullptr;
  std::uint64_t m_own_rounds_delivered = 0;
  round_arena m_assemblies, m_staged, m_inboxes, m_codec_copies;
  std::optional<mismatch_error> m_oversized;
  std::exception_ptr m_failure;  // this rank's own failure in the call, rethrown here
  bool m_settled = false;        // settle_for_link() has fenced in this call
  send_history m_history;
  std::optional<send_mode> m_last_mode;
  double m_last_seconds = 0;
};

}  // namespace ndzip::mpi::detail

namespace ndzip::mpi::detail {

template <class ExecSpace, class SendView, class RecvView, class Link>
class collective_call_over final : public collective_call {
 public:
  collective_call_over(const ExecSpace& exec, Link link,
                       collective_arguments<SendView, RecvView> args, const options& opts)
      : m_engine(exec, std::move(link), std::move(args), opts) {}
  collective_stats execute() override { return m_engine.execute(); }

 private:
  collective_engine<ExecSpace, SendView, RecvView, Link> m_engine;
};

// The call of a plan over `link`, its pieces as `arguments_for(rank, size)` gives them.
template <class ExecSpace, class SendView, class RecvView, class Link, class Arguments>
std::unique_ptr<collective_call> make_collective_call(const ExecSpace& exec, Link link,
                                                      Arguments&& arguments_for,
                                                      const options& opts) {
  auto args = arguments_for(link.rank(), link.size());
  return std::make_unique<collective_call_over<ExecSpace, SendView, RecvView, Link>>(
      exec, std::move(link), std::move(args), opts);
}

}  // namespace ndzip::mpi::detail
