// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// How a receiver of any link decodes the segments of one transfer into its View: each stream is
// queued to its grid's decoder on the instance as it arrives, its outcome written to device
// memory, and once the instance has done the work (one wait for all) every outcome is checked: a
// stream that does not decode, or that ends before its payload does, is refused naming its
// segment. Raw values are the link's to copy (they may lie where the instance does not read).
// Also the checks and errors every receiver shares: an arrived transfer head against the View,
// and a failure named with the sender and the View. Not part of the API.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ndzip/compressor.hpp"
#include "ndzip/error.hpp"
#include "ndzip/mpi/detail/core/buffer_pool.hpp"
#include "ndzip/mpi/detail/core/codec_cache.hpp"
#include "ndzip/mpi/detail/core/slab_grid.hpp"
#include "ndzip/mpi/detail/core/wire_format.hpp"
#include "ndzip/mpi/error.hpp"

namespace ndzip::mpi::detail {

// The error of a decoder's finding in segment k.
inline stream_error in_segment(std::uint64_t k, const std::string& what) {
  return stream_error("segment " + std::to_string(k) + " of the received message: " + what);
}

template <class T, class ExecSpace>
class segment_decoder {
 public:
  using memory_space = typename ExecSpace::memory_space;

  // Decodes the segments of `head` into `values` (C order, the execution space's memory).
  segment_decoder(buffer_pool<ExecSpace>& buffers, codec_cache<ExecSpace>& codecs,
                  const transfer_head& head, T* values)
      : m_buffers(buffers), m_codecs(codecs), m_head(head), m_values(values) {}

  // Queues the decoding of segment k's stream, `bytes` at `payload` (the execution space's
  // memory, unchanged until check()). Throws stream_error naming the segment where the decoder
  // refuses it at once (shorter than its grid's smallest stream).
  void queue(std::uint64_t k, const std::byte* payload, std::size_t bytes) {
    if (m_outcomes.size() == 0)
      m_outcomes = m_buffers.device_buffer(m_head.segments() * sizeof(decompress_outcome));
    auto* outcome = reinterpret_cast<decompress_outcome*>(m_outcomes.data()) + k;
    m_codecs.template with_codec<T>(slab_of(m_head, k), [&](const auto& codec) {
      try {
        codec->decompress_raw_async(payload, bytes, m_values + m_head.slab_offset(k), outcome);
      } catch (const stream_error& e) {
        throw in_segment(k, e.what());
      }
      m_checks.push_back({k, bytes, [codec](const decompress_outcome& o) {
                            return codec->check_outcome(o);
                          }});
    });
  }

  bool idle() const { return m_checks.empty(); }

  // Queues the copy of the outcomes to the host, after the decoders: the caller then waits for
  // the instance, and calls check().
  void copy_outcomes() {
    if (idle()) return;
    m_host_outcomes.resize(m_head.segments());
    copy_bytes<Kokkos::HostSpace, memory_space>(
        m_buffers.exec(), reinterpret_cast<std::byte*>(m_host_outcomes.data()), m_outcomes.data(),
        m_host_outcomes.size() * sizeof(decompress_outcome));
  }

  // Once the instance has done the work queued so far: throws stream_error for the first
  // segment whose stream did not decode to exactly its slab from exactly its payload.
  void check() const {
    for (const auto& c : m_checks) {
      std::size_t consumed = 0;
      try {
        consumed = c.check(m_host_outcomes[c.segment]);
      } catch (const stream_error& e) {
        throw in_segment(c.segment, e.what());
      }
      if (consumed != c.payload_bytes)
        throw stream_error("segment " + std::to_string(c.segment) +
                           " of the received message is damaged: its stream ends after " +
                           std::to_string(consumed) + " of its " +
                           std::to_string(c.payload_bytes) + " bytes");
    }
  }

  // Forgets what was queued (the instance must be done with it).
  void clear() {
    m_checks.clear();
    m_host_outcomes.clear();
    m_outcomes = {};
  }

 private:
  struct pending_check {
    std::uint64_t segment;
    std::size_t payload_bytes;
    std::function<std::size_t(const decompress_outcome&)> check;
  };

  buffer_pool<ExecSpace>& m_buffers;
  codec_cache<ExecSpace>& m_codecs;
  transfer_head m_head;
  T* m_values;
  typename buffer_pool<ExecSpace>::device_lease m_outcomes;  // one per segment
  std::vector<decompress_outcome> m_host_outcomes;
  std::vector<pending_check> m_checks;
};

// The mismatch_error of a transfer `arrived` that is not of the View's type and extents
// (`expected`), or none. `sender` names where it came from ("ndzip::mpi: the message from rank
// 1 (tag 7)"), `what` the thing consumed ("message"), `label` the View.
inline std::optional<mismatch_error> mismatch_of(const transfer_head& arrived,
                                                 const transfer_head& expected,
                                                 const std::string& sender,
                                                 const std::string& label, const char* what) {
  if (arrived.type == expected.type && arrived.dims == expected.dims &&
      arrived.extents == expected.extents)
    return std::nullopt;
  return mismatch_error(sender + " holds " + arrived.describe() + ", but the " + label +
                        " it is received into is " + expected.describe() + "; the " + what +
                        " was consumed and the View was not written");
}

// Rethrows a receive's failure named with where it happened (`where`: "ndzip::mpi: receiving
// from rank 1 (tag 7) into View 'x': "); a mismatch_error names it already.
[[noreturn]] inline void rethrow_received(std::exception_ptr failure, const std::string& where) {
  try {
    std::rethrow_exception(failure);
  } catch (const mismatch_error&) {
    throw;
  } catch (const stream_error& e) {
    throw stream_error(where + e.what());
  } catch (const error& e) {
    throw error(where + e.what());
  }
}

}  // namespace ndzip::mpi::detail
