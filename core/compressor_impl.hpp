// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Definitions of ndzip::compressor's members and the host side of the codec (core::codec): the
// sequence of kernel launches, size checks and error reporting. Included by the explicit
// instantiation units, and by tests that run the kernels with emulated lane groups.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "backends/lane_ops.hpp"
#include "core/border.hpp"
#include "core/call_guard.hpp"
#include "core/decoder.hpp"
#include "core/encoder.hpp"
#include "core/stream_status.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/detail/disjoint.hpp"
#include "ndzip/high_ratio.hpp"

namespace ndzip {

namespace detail {

template <class Bits>
void check_stream_alignment(const void* stream) {
  if (reinterpret_cast<std::uintptr_t>(stream) % sizeof(Bits) != 0)
    throw std::invalid_argument("ndzip: the stream buffer must be aligned to " +
                                std::to_string(sizeof(Bits)) + " bytes");
}

}  // namespace detail

template <class T, int Dims, class ExecSpace>
compressor<T, Dims, ExecSpace>::compressor(const ExecSpace& exec, const extent<Dims>& grid,
                                           codec_mode mode)
    : m_exec(exec), m_grid(grid) {
  check_grid_representable<T>(grid);
  if (mode == codec_mode::high_ratio)
    // Before the library's lock below, which its constructor takes itself.
    m_high_ratio = std::make_unique<high_ratio_compressor<T, Dims, ExecSpace>>(exec, grid);
  else if (mode != codec_mode::ndzip)
    throw std::invalid_argument("ndzip: unknown codec mode " +
                                std::to_string(static_cast<unsigned>(mode)));
  const core::call_guard<ExecSpace> guard(nullptr);
  m_stream_bytes = decltype(m_stream_bytes)(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::stream_bytes"));
  m_stream_bytes_host = Kokkos::create_mirror_view(m_stream_bytes);
  m_outcome =
      decltype(m_outcome)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::outcome"));
  m_outcome_host = Kokkos::create_mirror_view(m_outcome);
  // Zeroed on the instance, ahead of every decompression in its queue.
  m_decode_status = decltype(m_decode_status)(Kokkos::view_alloc(exec, "ndzip::decode_status"));
}

template <class T, int Dims, class ExecSpace>
compressor<T, Dims, ExecSpace>::~compressor() = default;
template <class T, int Dims, class ExecSpace>
compressor<T, Dims, ExecSpace>::compressor(compressor&&) noexcept = default;
template <class T, int Dims, class ExecSpace>
compressor<T, Dims, ExecSpace>& compressor<T, Dims, ExecSpace>::operator=(compressor&&) noexcept =
    default;

template <class T, int Dims, class ExecSpace>
void compressor<T, Dims, ExecSpace>::check_stream_size(std::size_t stream_size) const {
  core::check_stream_size<T>(m_grid, stream_size, mode());
}

template <class T, int Dims, class ExecSpace>
std::size_t compressor<T, Dims, ExecSpace>::check_outcome(const decompress_outcome& outcome) const {
  if (m_high_ratio) return m_high_ratio->check_outcome(outcome);
  using profile_type = profile<T, Dims>;
  if (outcome.failure != decompress_outcome::no_failure)
    throw stream_error(core::describe_stream_failure(outcome, profile_type::chunks_per_hypercube,
                                                     profile_type::max_block_words,
                                                     to_string(m_grid)));
  return outcome.stream_bytes;
}

namespace core {

// What ndzip::compressor's raw calls do, with the kernels over LaneOps: the space's own
// lane-ops in the library, an emulation of GPU lane groups in tests. The enqueue_ functions
// queue kernels only; their callers hold the call guard.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct codec {
  using compressor_type = compressor<T, Dims, ExecSpace>;
  using bits_type = typename compressor_type::bits_type;
  using kernels = kernel_types<T, Dims, ExecSpace, LaneOps>;

  static std::size_t compress_raw(compressor_type& self, const T* values, std::byte* stream,
                                  std::size_t stream_capacity) {
    check_buffers(self, values, stream, stream_capacity);
    const call_guard<ExecSpace> guard(self.m_calls.get());
    if (stream_capacity >= self.size_bound()) {
      enqueue_compress(self, values, stream, self.m_stream_bytes.data());
      return read_stream_bytes(self);
    }
    // A stream View smaller than the bound: the size is read back before anything is written,
    // so that a stream that would not fit is refused (three kernels on every backend).
    const stream_layout<T, Dims> layout(self.m_grid);
    std::size_t size = layout.stream_bytes(0);
    if (layout.hypercube_count > 0) {
      encode_blocks(self, values);
      size = read_stream_bytes(self);
    }
    if (size > stream_capacity)
      throw capacity_error("ndzip: the stream needs " + std::to_string(size) +
                           " bytes but the output holds only " + std::to_string(stream_capacity) +
                           " (compressed_size_bound is " + std::to_string(self.size_bound()) + ")");
    compact_blocks_into(self, values, stream, self.m_stream_bytes.data());
    return size;
  }

  static void compress_raw_async(compressor_type& self, const T* values, std::byte* stream,
                                 std::size_t stream_capacity, std::uint64_t* stream_bytes) {
    check_buffers(self, values, stream, stream_capacity);
    if (stream_capacity < self.size_bound())
      throw capacity_error(
          "ndzip: an asynchronous compression needs a stream of "
          "compressed_size_bound = " +
          std::to_string(self.size_bound()) + " bytes, but the output holds only " +
          std::to_string(stream_capacity));
    const call_guard<ExecSpace> guard(self.m_calls.get());
    enqueue_compress(self, values, stream, stream_bytes);
  }

  static std::size_t decompress_raw(compressor_type& self, const std::byte* stream,
                                    std::size_t stream_size, T* values) {
    const call_guard<ExecSpace> guard(self.m_calls.get());
    enqueue_decompress(self, stream, stream_size, values, self.m_outcome.data());
    if (self.m_outcome_host.data() != self.m_outcome.data())
      Kokkos::deep_copy(self.m_exec, self.m_outcome_host, self.m_outcome);
    self.m_exec.fence();
    return self.check_outcome(self.m_outcome_host());
  }

  static void decompress_raw_async(compressor_type& self, const std::byte* stream,
                                   std::size_t stream_size, T* values,
                                   decompress_outcome* outcome) {
    const call_guard<ExecSpace> guard(self.m_calls.get());
    enqueue_decompress(self, stream, stream_size, values, outcome);
  }

 private:
  static void check_buffers(compressor_type& self, const T* values, std::byte* stream,
                            std::size_t stream_capacity) {
    detail::check_stream_alignment<bits_type>(stream);
    detail::check_disjoint(values, self.m_grid.size() * sizeof(T), stream, stream_capacity);
  }

  static std::size_t read_stream_bytes(compressor_type& self) {
    if (self.m_stream_bytes_host.data() != self.m_stream_bytes.data())
      Kokkos::deep_copy(self.m_exec, self.m_stream_bytes_host, self.m_stream_bytes);
    self.m_exec.fence();
    return self.m_stream_bytes_host();
  }

  // Teams of the block kernels: one per hypercube and per border slice, and one at least, which
  // writes the stream size (or the outcome) when there are no hypercubes.
  static std::size_t block_kernel_teams(const stream_layout<T, Dims>& layout) {
    const std::size_t teams = layout.hypercube_count + border_slices(layout);
    return teams > 0 ? teams : 1;
  }

  // Compression into a stream with room for the worst case, writing its size to *stream_bytes.
  // Single pass where teams progress independently, otherwise three kernels.
  static void enqueue_compress(compressor_type& self, const T* values, std::byte* stream,
                               std::uint64_t* stream_bytes) {
    const stream_layout<T, Dims> layout(self.m_grid);
    if constexpr (LaneOps::teams_progress_independently) {
      const auto teams_at_once = static_cast<std::uint64_t>(self.m_exec.concurrency());
      const std::size_t run =
          hypercubes_per_team<LaneOps, Dims>(layout.hypercube_count, teams_at_once);
      const std::size_t runs = (layout.hypercube_count + run - 1) / run;
      const std::size_t teams = std::max<std::size_t>(runs + border_slices(layout), 1);
      if (self.m_tickets.data() == nullptr) {
        // Zeroed on the compressor's instance, ahead of the kernel in its queue.
        self.m_published = decltype(self.m_published)(
            Kokkos::view_alloc(self.m_exec, "ndzip::published"), layout.hypercube_count);
        self.m_tickets =
            decltype(self.m_tickets)(Kokkos::view_alloc(self.m_exec, "ndzip::tickets"));
      }
      // Counted once launched: a launch that throws takes no tickets.
      const std::uint64_t call = self.m_single_pass_calls + 1;
      const block_placement placement{self.m_published.data(), self.m_tickets.data(),
                                      (call - 1) * teams, block_placement::epoch_of_call(call),
                                      teams_at_once};
      const encode_into_stream<T, Dims, ExecSpace, LaneOps> encode{
          layout, reinterpret_cast<const bits_type*>(values), stream, placement, stream_bytes, run};
      kernels::template launch<backend::kernel_role::encode>("ndzip::encode_into_stream",
                                                             self.m_exec, teams, encode);
      self.m_single_pass_calls = call;
    } else {
      if (layout.hypercube_count > 0) encode_blocks(self, values, stream_bytes);
      compact_blocks_into(self, values, stream, stream_bytes);
    }
  }

  // K1 and K2 (core/encoder.hpp): every hypercube into its worst-case scratch block, the block
  // lengths into offset-table entries, the stream size into *stream_bytes.
  static void encode_blocks(compressor_type& self, const T* values,
                            std::uint64_t* stream_bytes = nullptr) {
    const stream_layout<T, Dims> layout(self.m_grid);
    const std::size_t n = layout.hypercube_count;
    if (self.m_blocks.extent(0) == 0) {
      self.m_blocks =
          decltype(self.m_blocks)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::blocks"),
                                  n * profile<T, Dims>::max_block_words);
      self.m_block_ends = decltype(self.m_block_ends)(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::block_ends"), n);
    }
    const encode_hypercubes<T, Dims, ExecSpace, LaneOps> encode{
        layout, reinterpret_cast<const bits_type*>(values), self.m_blocks.data(),
        self.m_block_ends.data()};
    Kokkos::parallel_for("ndzip::encode_hypercubes", kernels::hypercube_policy(self.m_exec, n),
                         encode);
    scan_block_lengths(self.m_exec, layout, self.m_block_ends.data(),
                       stream_bytes ? stream_bytes : self.m_stream_bytes.data());
  }

  // K3: the scratch blocks and the border into the stream.
  static void compact_blocks_into(compressor_type& self, const T* values, std::byte* stream,
                                  std::uint64_t* stream_bytes) {
    const stream_layout<T, Dims> layout(self.m_grid);
    const compact_blocks<T, Dims, ExecSpace, LaneOps> compact{
        layout,
        reinterpret_cast<const bits_type*>(values),
        self.m_blocks.data(),
        self.m_block_ends.data(),
        stream,
        stream_bytes};
    Kokkos::parallel_for("ndzip::compact_blocks",
                         kernels::hypercube_policy(self.m_exec, block_kernel_teams(layout)),
                         compact);
  }

  static void enqueue_decompress(compressor_type& self, const std::byte* stream,
                                 std::size_t stream_size, T* values, decompress_outcome* outcome) {
    detail::check_stream_alignment<bits_type>(stream);
    detail::check_disjoint(values, self.m_grid.size() * sizeof(T), stream, stream_size);
    self.check_stream_size(stream_size);
    const stream_layout<T, Dims> layout(self.m_grid);
    const std::size_t teams = block_kernel_teams(layout);
    std::uint64_t* status = self.m_decode_status.data();
    const outcome_gatherer gatherer{status, status + 1, status + 2, outcome, teams};
    const decode_hypercubes<T, Dims, ExecSpace, LaneOps> decode{
        layout, stream, stream_size, reinterpret_cast<bits_type*>(values), gatherer};
    kernels::template launch<backend::kernel_role::decode>("ndzip::decode_hypercubes", self.m_exec,
                                                           teams, decode);
  }
};

}  // namespace core

template <class T, int Dims, class ExecSpace>
std::size_t compressor<T, Dims, ExecSpace>::compress_raw(const T* values, std::byte* stream,
                                                         std::size_t stream_capacity) {
  if (m_high_ratio) return m_high_ratio->compress_raw(values, stream, stream_capacity);
  return core::codec<T, Dims, ExecSpace, backend::lane_ops_for_t<ExecSpace>>::compress_raw(
      *this, values, stream, stream_capacity);
}

template <class T, int Dims, class ExecSpace>
std::size_t compressor<T, Dims, ExecSpace>::decompress_raw(const std::byte* stream,
                                                           std::size_t stream_size, T* values) {
  if (m_high_ratio) return m_high_ratio->decompress_raw(stream, stream_size, values);
  return core::codec<T, Dims, ExecSpace, backend::lane_ops_for_t<ExecSpace>>::decompress_raw(
      *this, stream, stream_size, values);
}

template <class T, int Dims, class ExecSpace>
void compressor<T, Dims, ExecSpace>::compress_raw_async(const T* values, std::byte* stream,
                                                        std::size_t stream_capacity,
                                                        std::uint64_t* stream_size) {
  if (m_high_ratio)
    return m_high_ratio->compress_raw_async(values, stream, stream_capacity, stream_size);
  core::codec<T, Dims, ExecSpace, backend::lane_ops_for_t<ExecSpace>>::compress_raw_async(
      *this, values, stream, stream_capacity, stream_size);
}

template <class T, int Dims, class ExecSpace>
void compressor<T, Dims, ExecSpace>::decompress_raw_async(const std::byte* stream,
                                                          std::size_t stream_size, T* values,
                                                          decompress_outcome* outcome) {
  if (m_high_ratio)
    return m_high_ratio->decompress_raw_async(stream, stream_size, values, outcome);
  core::codec<T, Dims, ExecSpace, backend::lane_ops_for_t<ExecSpace>>::decompress_raw_async(
      *this, stream, stream_size, values, outcome);
}

}  // namespace ndzip
