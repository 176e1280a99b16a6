// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Single-pass compression: where each hypercube's block goes in the stream, decided inside the
// compression kernel by a decoupled look-back over the blocks before it.
//
// A team takes its number from a ticket counter, in the order teams start, so a team with a
// ticket is running or done, and every predecessor it waits for is too. A team's block is its
// hypercube's, or on the host the blocks of its run of consecutive hypercubes together
// (core/encoder.hpp). Once its block
// length is known, it publishes that length (an "aggregate"), then walks back over its
// predecessors' published words, adding aggregates until it meets an inclusive prefix (the sum
// of all lengths up to that block), and publishes its own inclusive prefix. It waits only where
// a predecessor has published nothing yet.
//
// A published word: bits 63..34 the call's epoch, bits 33..32 the kind, bits 31..0 the value
// (block-area words fit in 32 bits: the offset table is 32-bit). Every call publishes a word for
// every hypercube, so a word from the previous call carries the previous epoch and reads as not
// yet published; epochs are never 0, the words' initial value. Only the published words are
// shared between teams, and each is one atomic 64-bit word, so no other ordering is needed.
//
// Needs teams that progress independently of each other (GPUs); on the host, a team waiting on
// a predecessor yields its thread.

#include <cstdint>
#include <thread>

#include <Kokkos_Core.hpp>

namespace ndzip::core {

struct block_placement {
  std::uint64_t* published;  // one word per team that encodes (hypercubes at most)
  std::uint64_t* tickets;    // counter; this call's first ticket is ticket_base
  std::uint64_t ticket_base;
  std::uint64_t epoch;       // 1 .. max_epoch
  // Teams that run at once (host: the threads). A thread's next ticket is about this many
  // after its current one, so that is the hypercube a host team prefetches.
  std::uint64_t teams_at_once = 1;

  static constexpr std::uint64_t max_epoch = (std::uint64_t{1} << 30) - 1;
  // The epoch of the `call`-th single-pass compression of a compressor (call >= 1).
  static constexpr std::uint64_t epoch_of_call(std::uint64_t call) {
    return (call - 1) % max_epoch + 1;
  }

  enum kind : std::uint64_t { aggregate = 1, inclusive_prefix = 2 };

  // About how far apart one thread's successive tickets are.
  KOKKOS_INLINE_FUNCTION std::uint64_t ticket_distance() const { return teams_at_once; }

  // The next index in start order (one caller per team).
  KOKKOS_INLINE_FUNCTION std::uint64_t take_ticket() const {
    return Kokkos::atomic_fetch_add(tickets, std::uint64_t{1}) - ticket_base;
  }

  // Returns the sum of the block lengths before block `index` and publishes the sum up to and
  // including it (one caller per team).
  KOKKOS_INLINE_FUNCTION std::uint64_t exclusive_prefix(std::uint64_t index,
                                                        std::uint64_t length) const {
    if (index == 0) {
      publish(0, inclusive_prefix, length);
      return 0;
    }
    publish(index, aggregate, length);
    std::uint64_t before = 0;
    for (std::uint64_t j = index; j-- > 0;) {
      const std::uint64_t word = wait_for(j);
      before += word & 0xffffffffu;
      if ((word >> 32 & 3) == inclusive_prefix) break;
    }
    publish(index, inclusive_prefix, before + length);
    return before;
  }

  // The parts of exclusive_prefix, for look-backs that read several words at once
  // (core/streamed_kernels.hpp).
  KOKKOS_INLINE_FUNCTION void publish_aggregate(std::uint64_t index, std::uint64_t length) const {
    publish(index, aggregate, length);
  }
  KOKKOS_INLINE_FUNCTION void publish_inclusive_prefix(std::uint64_t index,
                                                       std::uint64_t words) const {
    publish(index, inclusive_prefix, words);
  }
  // Block j's word, once this call has published one: its value, and whether that is an
  // inclusive prefix (else an aggregate).
  KOKKOS_INLINE_FUNCTION std::uint64_t published_word(std::uint64_t j) const { return wait_for(j); }
  KOKKOS_INLINE_FUNCTION static std::uint64_t value_of(std::uint64_t word) {
    return word & 0xffffffffu;
  }
  KOKKOS_INLINE_FUNCTION static bool is_inclusive_prefix(std::uint64_t word) {
    return (word >> 32 & 3) == inclusive_prefix;
  }

  // The inclusive prefix of block `index`, once published (one caller per team).
  KOKKOS_INLINE_FUNCTION std::uint64_t inclusive_prefix_of(std::uint64_t index) const {
    for (;;) {
      const std::uint64_t word = wait_for(index);
      if ((word >> 32 & 3) == inclusive_prefix) return word & 0xffffffffu;
      pause();
    }
  }

 private:
  KOKKOS_INLINE_FUNCTION void publish(std::uint64_t index, kind k, std::uint64_t value) const {
    Kokkos::atomic_exchange(published + index, epoch << 34 | std::uint64_t{k} << 32 | value);
  }

  // Block j's word, once this call has published one.
  KOKKOS_INLINE_FUNCTION std::uint64_t wait_for(std::uint64_t j) const {
    for (;;) {
      // An atomic read-modify-write that changes nothing: coherent at device scope on every
      // Kokkos version (Kokkos 3 has no public atomic load).
      const std::uint64_t word = Kokkos::atomic_fetch_or(published + j, std::uint64_t{0});
      if (word >> 34 == epoch) return word;
      pause();
    }
  }

  KOKKOS_INLINE_FUNCTION static void pause() {
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
    std::this_thread::yield();  // host threads: let the predecessor's thread run
#endif
  }
};

}  // namespace ndzip::core
