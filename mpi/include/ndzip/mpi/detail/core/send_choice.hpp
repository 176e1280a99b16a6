// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Whether a send compresses or goes plain (options::compression), for every link: what a
// communicator has measured of its sends both ways, and the choice made from it (adaptive).
// Not part of the API.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>

#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi::detail {

enum class send_mode { compressed = 0, plain = 1 };

// How a send goes under `opts`: compressed (always), plain (never), or, adaptive, as
// `measured()` says (send_history::choose), except with the checksum on: a plain transfer
// carries no checksums, so it is compressed.
template <class Measured>
send_mode choose_send_mode(const options& opts, Measured&& measured) {
  switch (opts.compression) {
    case compression_choice::always:
      return send_mode::compressed;
    case compression_choice::never:
      return send_mode::plain;
    default:
      return opts.checksum ? send_mode::compressed : measured();
  }
}

class send_history {
 public:
  // How the next transfer of `bytes` of values to (dest, tag) goes: compressed until that has
  // been timed, then plain until that has, then the preferred way, the other tried again now
  // and then, for two transfers (the first after a change is not timed). The two ranks of an
  // exchange run the same schedule, so that they try a way together. Where its two ways are
  // within the margin, a `follower` (the higher rank of the pair) takes the way its peer last
  // sent it a transfer of that size: choosing apart, the two ranks of an exchange settled on
  // different ways, and a round with one compressing and the other not was slower than either
  // (2 GiB of doubles on two H200s: 0.73-0.81x plain MPI, against 1.00x plain and 1.03x
  // compressed). Only there: following in every case made each try of the peer a mixed round.
  send_mode choose(int dest, int tag, std::uint64_t bytes, bool follower) {
    std::lock_guard<std::mutex> lock(m_mutex);
    entry& e = m_entries[key_of(dest, tag, bytes)];
    if (e.timed[0] == 0) return send_mode::compressed;
    if (e.timed[1] == 0) return send_mode::plain;
    if (e.trying > 0) {
      --e.trying;
      return other(e.preferred);
    }
    if (++e.since_tried < e.interval) {
      if (follower && e.close())
        if (const auto seen = m_peer_modes.find({dest, size_class(bytes)});
            seen != m_peer_modes.end())
          return seen->second;
      return e.preferred;
    }
    e.since_tried = 0;
    e.trying = 1;
    return other(e.preferred);
  }

  // A transfer of `bytes` of values received from `source`, sent `mode`.
  void observe(int source, std::uint64_t bytes, send_mode mode) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_peer_modes.size() >= max_entries) m_peer_modes.clear();
    m_peer_modes[{source, size_class(bytes)}] = mode;
  }

  // A transfer that took `seconds` from its start until its sender saw it complete. The first
  // after a change of way is not timed: the first of each way allocates buffers and hands MPI
  // memory it has not seen (a CUDA-aware MPI maps it for the peer, which took milliseconds).
  void record(int dest, int tag, std::uint64_t bytes, send_mode mode, double seconds) {
    if (bytes == 0 || !(seconds > 0)) return;
    std::lock_guard<std::mutex> lock(m_mutex);
    // A long-lived program sending ever new (peer, tag, size) starts over (as the codec cache).
    if (m_entries.size() >= max_entries) m_entries.clear();
    entry& e = m_entries[key_of(dest, tag, bytes)];
    const auto m = static_cast<int>(mode);
    if (e.last != mode) {
      e.last = mode;
      return;
    }
    const bool tried_again = e.timed[0] > 0 && e.timed[1] > 0 && mode != e.preferred;
    e.recent[m][e.timed[m]++ % kept] = seconds / static_cast<double>(bytes);
    if (e.timed[0] == 0 || e.timed[1] == 0) return;
    // The other way takes over only once it is faster by a margin: where the two are about
    // equal, noise would otherwise flip between them.
    const send_mode other_way = other(e.preferred);
    const bool turned =
        e.seconds_per_byte(other_way) < (1 - margin) * e.seconds_per_byte(e.preferred);
    if (turned) e.preferred = other_way;
    if (tried_again)  // while the other way stays slower, it is tried less often
      e.interval = turned ? first_interval : std::min(2 * e.interval, longest_interval);
  }

 private:
  static constexpr std::size_t max_entries = 4096;
  static constexpr unsigned first_interval = 16, longest_interval = 256;
  static constexpr double margin = 0.05;

  // Times kept per way: their median decides (the shorter of two), so that one transfer slowed
  // down by its peer (which in an exchange is trying the other way itself, or allocating) does
  // not turn the choice.
  static constexpr int kept = 3;

  struct entry {
    double recent[2][kept] = {};      // seconds per byte of the last timed transfers
    std::uint64_t timed[2] = {0, 0};  // transfers timed, per send_mode
    unsigned since_tried = 0;         // transfers since the other way was tried
    unsigned interval = first_interval;
    unsigned trying = 0;  // transfers of the other way still to go in a try
    send_mode preferred = send_mode::compressed;
    std::optional<send_mode> last;  // the way of the last transfer recorded

    // Whether neither way is faster than the other by the margin.
    bool close() const {
      const double c = seconds_per_byte(send_mode::compressed);
      const double p = seconds_per_byte(send_mode::plain);
      return c >= (1 - margin) * p && p >= (1 - margin) * c;
    }
    double seconds_per_byte(send_mode mode) const {
      const auto m = static_cast<int>(mode);
      const double* t = recent[m];
      switch (std::min<std::uint64_t>(timed[m], kept)) {
        case 1:
          return t[0];
        case 2:
          return std::min(t[0], t[1]);
        default:
          return std::max(std::min(t[0], t[1]), std::min(std::max(t[0], t[1]), t[2]));
      }
    }
  };

  static send_mode other(send_mode m) {
    return m == send_mode::plain ? send_mode::compressed : send_mode::plain;
  }

  // Sizes a power of two apart share an entry: the choice changes with the size (a link's
  // per-message costs, the pipeline's fill) only over such steps.
  static int size_class(std::uint64_t bytes) {
    int c = 0;
    for (; bytes > 1; bytes >>= 1) ++c;
    return c;
  }
  static std::tuple<int, int, int> key_of(int dest, int tag, std::uint64_t bytes) {
    return {dest, tag, size_class(bytes)};
  }

  std::mutex m_mutex;
  std::map<std::tuple<int, int, int>, entry> m_entries;
  // How each peer last sent a transfer of each size class (any tag: a halo's two directions
  // often use two tags).
  std::map<std::pair<int, int>, send_mode> m_peer_modes;
};

}  // namespace ndzip::mpi::detail
