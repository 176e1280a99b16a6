// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How a sender of any link codes the segments of one compressed transfer: segment k is
// compressed where its slab's grid holds a whole hypercube, into a stream after the place of its
// segment head, else it goes raw (the finishing kernel copies its values there); once a
// compressed segment has come out larger than options::raw_after_ratio of its values, the
// segments not yet queued go raw (the data does not shrink enough to pay for the codec). Each
// segment is queued on the instance and finished in its slot (segment_slots.hpp); the link
// hands it on once the host knows its payload. Not part of the API.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ndzip/mpi/detail/core/codec_cache.hpp"
#include "ndzip/mpi/detail/core/segment_slots.hpp"
#include "ndzip/mpi/detail/core/slab_grid.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"
#include "ndzip/mpi/options.hpp"

namespace ndzip::mpi::detail {

// How a segment goes: compressed into a stream of at most `bound` bytes, or raw. Its payload
// takes `payload_room` bytes at most.
struct segment_plan {
  bool compressed = false;
  std::size_t bound = 0;
  std::size_t payload_room = 0;
};

template <class T, class ExecSpace>
class segment_encoder {
 public:
  // The segments of `head` over `values` (C order, the execution space's memory), finished in
  // `slots`; with `all_raw`, none is compressed (a checksummed transfer sent plain).
  segment_encoder(codec_cache<ExecSpace>& codecs, segment_slots<ExecSpace>& slots,
                  const transfer_head& head, const T* values, double raw_after_ratio,
                  bool all_raw)
      : m_codecs(codecs),
        m_slots(slots),
        m_head(head),
        m_values(values),
        m_raw_after_ratio(raw_after_ratio),
        m_raw_from_now(all_raw),
        m_compressed(head.segments(), false) {}

  // How segment k goes if it is queued now: the room its payload needs.
  segment_plan plan(std::uint64_t k) const {
    const slab_shape shape = slab_of(m_head, k);
    segment_plan p;
    p.compressed = !m_raw_from_now && holds_hypercube<T>(shape);
    p.bound = p.compressed ? stream_bound<T>(shape) : 0;
    p.payload_room = std::max<std::size_t>(p.bound, m_head.slab_bytes(k));
    return p;
  }

  // Queues segment k as `p` (plan(k)) says into `segment`: its head's 32 bytes, then the
  // payload's room; and its finishing in slot k. Returns at once.
  void queue(std::uint64_t k, const segment_plan& p, std::byte* segment) {
    const T* slab = m_values + m_head.slab_offset(k);
    const std::uint64_t raw = m_head.slab_bytes(k);
    if (p.compressed)
      m_codecs.template with_codec<T>(slab_of(m_head, k), [&](const auto& codec) {
        codec->compress_raw_async(slab, segment + segment_head_bytes, p.bound,
                                  m_slots.stream_bytes(k));
      });
    else
      m_slots.set_stream_bytes(k, raw);
    m_slots.template finish<T>(k, k, slab, raw, segment);
    m_compressed[k] = p.compressed;
  }

  // Segment k has finished with `payload` bytes (segment_slots::wait): its head, counted in
  // `stats`; a compressed segment that shrank too little sends the rest raw.
  segment_head finished(std::uint64_t k, std::uint64_t payload, transfer_stats& stats) {
    const std::uint64_t raw = m_head.slab_bytes(k);
    const bool raw_values = payload == raw;  // a stream is always smaller than its values
    if (raw_values) ++stats.raw_segments;
    if (m_compressed[k] &&
        static_cast<double>(payload) > m_raw_after_ratio * static_cast<double>(raw))
      m_raw_from_now = true;
    return {raw_values ? segment_kind::raw : segment_kind::stream, k, payload};
  }

 private:
  codec_cache<ExecSpace>& m_codecs;
  segment_slots<ExecSpace>& m_slots;
  transfer_head m_head;
  const T* m_values;
  double m_raw_after_ratio;
  bool m_raw_from_now;
  std::vector<bool> m_compressed;  // per segment: queued to the encoder
};

}  // namespace ndzip::mpi::detail
