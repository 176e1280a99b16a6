#pragma once
// Definitions of ndzip::compressor's members and the host side of the codec (core::codec): the
// sequence of kernel launches, size checks and error reporting. Included by the explicit
// instantiation units, and by tests that run the kernels with emulated lane groups.

#include <cstdint>
#include <stdexcept>
#include <string>

#include <Kokkos_Core.hpp>

#include "backends/lane_ops.hpp"
#include "core/border.hpp"
#include "core/call_guard.hpp"
#include "core/decoder.hpp"
#include "core/encoder.hpp"
#include "core/stream_status.hpp"
#include "ndzip/compressor.hpp"

namespace ndzip {

namespace detail {

template <class Bits>
void check_stream_alignment(const void* stream) {
  if (reinterpret_cast<std::uintptr_t>(stream) % sizeof(Bits) != 0)
    throw std::invalid_argument("ndzip: the stream buffer must be aligned to " +
                                std::to_string(sizeof(Bits)) + " bytes");
}

// Compressing into memory that holds the values, or decoding into memory that holds the
// stream, would let kernels overwrite what other teams still read: refused on the host,
// from the addresses alone, before any kernel runs.
inline void check_disjoint(const void* values, std::size_t values_bytes, const void* stream,
                           std::size_t stream_bytes) {
  const auto v = reinterpret_cast<std::uintptr_t>(values);
  const auto s = reinterpret_cast<std::uintptr_t>(stream);
  if (values_bytes > 0 && stream_bytes > 0 && v < s + stream_bytes && s < v + values_bytes)
    throw std::invalid_argument(
        "ndzip: the stream buffer (" + std::to_string(stream_bytes) + " bytes) and the values (" +
        std::to_string(values_bytes) + " bytes) overlap in memory; compress and decompress need "
        "disjoint buffers");
}

}  // namespace detail

template <class T, int Dims, class ExecSpace>
compressor<T, Dims, ExecSpace>::compressor(const ExecSpace& exec, const extent<Dims>& grid)
    : m_exec(exec), m_grid(grid) {
  check_grid_representable<T>(grid);
  const core::call_guard<ExecSpace> guard(nullptr);
  m_status = decltype(m_status)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::status"));
  m_status_host = Kokkos::create_mirror_view(m_status);
  m_offsets = decltype(m_offsets)(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::offsets"),
                                  stream_layout<T, Dims>(grid).hypercube_count);
}

template <class T, int Dims, class ExecSpace>
void compressor<T, Dims, ExecSpace>::check_stream_size(std::size_t stream_size) const {
  const std::size_t smallest = stream_layout<T, Dims>(m_grid).smallest_stream_bytes();
  if (stream_size < smallest)
    throw stream_error("ndzip: invalid stream: " + std::to_string(stream_size) +
                       " bytes is shorter than the smallest stream of a " +
                       to_string(m_grid) + " grid (" + std::to_string(smallest) +
                       " bytes); truncated, or decoded with the wrong extents or type");
}

template <class T, int Dims, class ExecSpace>
void compressor<T, Dims, ExecSpace>::read_status() {
  Kokkos::deep_copy(m_exec, m_status_host, m_status);
  m_exec.fence();
}

namespace core {

// What ndzip::compressor's compress_raw and decompress_raw do, with the kernels over LaneOps:
// the space's own lane-ops in the library, an emulation of GPU lane groups in tests.
template <class T, int Dims, class ExecSpace, class LaneOps>
struct codec {
  using compressor_type = compressor<T, Dims, ExecSpace>;
  using bits_type = typename compressor_type::bits_type;
  static std::size_t compress_raw(compressor_type& self, const T* values, std::byte* stream,
                                  std::size_t stream_capacity);
  static std::size_t decompress_raw(compressor_type& self, const std::byte* stream,
                                    std::size_t stream_size, T* values);
};

template <class T, int Dims, class ExecSpace, class LaneOps>
std::size_t codec<T, Dims, ExecSpace, LaneOps>::compress_raw(compressor_type& self,
                                                            const T* values, std::byte* stream,
                                                            std::size_t stream_capacity) {
  using kernels = kernel_types<T, Dims, ExecSpace, LaneOps>;
  const stream_layout<T, Dims> layout(self.m_grid);
  detail::check_stream_alignment<bits_type>(stream);
  detail::check_disjoint(values, self.m_grid.size() * sizeof(T), stream, stream_capacity);
  const call_guard<ExecSpace> guard(self.m_calls.get());
  const auto* grid_bits = reinterpret_cast<const bits_type*>(values);
  const std::size_t n = layout.hypercube_count;

  const std::size_t teams = n + border_slices(layout);
  if constexpr (LaneOps::teams_progress_independently) {
    if (stream_capacity >= self.size_bound()) {
      if (teams == 0) return layout.stream_bytes(0);
      if (self.m_tickets.data() == nullptr) {
        // Zeroed on the compressor's instance, ahead of the kernel in its queue.
        self.m_published =
            decltype(self.m_published)(Kokkos::view_alloc(self.m_exec, "ndzip::published"), n);
        self.m_tickets =
            decltype(self.m_tickets)(Kokkos::view_alloc(self.m_exec, "ndzip::tickets"));
      }
      // Counted once launched: a launch that throws takes no tickets.
      const std::uint64_t call = self.m_single_pass_calls + 1;
      const block_placement placement{self.m_published.data(), self.m_tickets.data(),
                                      (call - 1) * teams, block_placement::epoch_of_call(call)};
      const encode_into_stream<T, Dims, ExecSpace, LaneOps> encode{
          layout, grid_bits, stream, placement, self.m_status.data() + 1};
      using encode_policy =
          typename kernels::template bounded_policy<backend::kernel_role::encode>;
      Kokkos::parallel_for("ndzip::encode_into_stream",
                           kernels::template hypercube_policy<encode_policy>(self.m_exec, teams),
                           encode);
      self.m_single_pass_calls = call;
      std::uint64_t block_area_words = 0;
      if (n > 0) {
        self.read_status();
        block_area_words = self.m_status_host(1);
      }
      return layout.stream_bytes(block_area_words);
    }
  }

  std::uint64_t block_area_words = 0;
  if (n > 0) {
    if (self.m_blocks.extent(0) == 0) {
      self.m_blocks = decltype(self.m_blocks)(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::blocks"),
          n * profile<T, Dims>::max_block_words);
      self.m_block_ends = decltype(self.m_block_ends)(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "ndzip::block_ends"), n);
    }
    const encode_hypercubes<T, Dims, ExecSpace, LaneOps> encode{
        layout, grid_bits, self.m_blocks.data(), self.m_block_ends.data()};
    Kokkos::parallel_for("ndzip::encode_hypercubes", kernels::hypercube_policy(self.m_exec, n),
                         encode);
    reset_stream_status(self.m_exec, self.m_status.data());
    scan_block_lengths(self.m_exec, self.m_block_ends.data(), n, self.m_status.data() + 1);
    self.read_status();
    block_area_words = self.m_status_host(1);
  }
  const std::size_t size = layout.stream_bytes(block_area_words);
  if (size > stream_capacity)
    throw capacity_error("ndzip: the stream needs " + std::to_string(size) +
                         " bytes but the output holds only " + std::to_string(stream_capacity) +
                         " (compressed_size_bound is " + std::to_string(self.size_bound()) + ")");
  if (teams > 0) {
    const compact_blocks<T, Dims, ExecSpace, LaneOps> compact{
        layout, grid_bits, self.m_blocks.data(), self.m_block_ends.data(), stream};
    Kokkos::parallel_for("ndzip::compact_blocks", kernels::hypercube_policy(self.m_exec, teams),
                         compact);
  }
  return size;
}

template <class T, int Dims, class ExecSpace, class LaneOps>
std::size_t codec<T, Dims, ExecSpace, LaneOps>::decompress_raw(compressor_type& self,
                                                              const std::byte* stream,
                                                              std::size_t stream_size, T* values) {
  using profile_type = profile<T, Dims>;
  using kernels = kernel_types<T, Dims, ExecSpace, LaneOps>;
  const stream_layout<T, Dims> layout(self.m_grid);
  detail::check_stream_alignment<bits_type>(stream);
  detail::check_disjoint(values, self.m_grid.size() * sizeof(T), stream, stream_size);
  self.check_stream_size(stream_size);
  const call_guard<ExecSpace> guard(self.m_calls.get());
  const std::size_t n = layout.hypercube_count;
  auto* grid_bits = reinterpret_cast<bits_type*>(values);
  const auto& status = self.m_status_host;

  std::uint64_t block_area_words = 0;
  if (n > 0) {
    reset_stream_status(self.m_exec, self.m_status.data());
    copy_offset_table(self.m_exec, n, stream, self.m_offsets.data());
    validate_offset_table(self.m_exec, layout, self.m_offsets.data(), self.m_status.data());
    self.read_status();
    if (status(0) != no_stream_failure)
      throw stream_error(describe_stream_failure(status(0), profile_type::chunks_per_hypercube,
                                                 profile_type::max_block_words));
    block_area_words = status(1);
  }
  const std::size_t size = layout.stream_bytes(block_area_words);
  if (stream_size < size)
    throw stream_error("ndzip: invalid stream: its offset table needs " + std::to_string(size) +
                       " bytes but only " + std::to_string(stream_size) +
                       " are given (truncated?)");
  const std::size_t teams = n + border_slices(layout);
  if (teams > 0) {
    const decode_hypercubes<T, Dims, ExecSpace, LaneOps> decode{
        layout, stream, self.m_offsets.data(), grid_bits, self.m_status.data()};
    using decode_policy = typename kernels::template bounded_policy<backend::kernel_role::decode>;
    Kokkos::parallel_for("ndzip::decode_hypercubes",
                         kernels::template hypercube_policy<decode_policy>(self.m_exec, teams),
                         decode);
  }
  self.read_status();
  if (n > 0 && status(0) != no_stream_failure)
    throw stream_error(describe_stream_failure(status(0), profile_type::chunks_per_hypercube,
                                               profile_type::max_block_words));
  return size;
}

}  // namespace core

template <class T, int Dims, class ExecSpace>
std::size_t compressor<T, Dims, ExecSpace>::compress_raw(const T* values, std::byte* stream,
                                                        std::size_t stream_capacity) {
  return core::codec<T, Dims, ExecSpace, backend::lane_ops_for_t<ExecSpace>>::compress_raw(
      *this, values, stream, stream_capacity);
}

template <class T, int Dims, class ExecSpace>
std::size_t compressor<T, Dims, ExecSpace>::decompress_raw(const std::byte* stream,
                                                          std::size_t stream_size, T* values) {
  return core::codec<T, Dims, ExecSpace, backend::lane_ops_for_t<ExecSpace>>::decompress_raw(
      *this, stream, stream_size, values);
}

}  // namespace ndzip
