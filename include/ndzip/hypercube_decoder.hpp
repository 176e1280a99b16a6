// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::hypercube_decoder: decoding a stream inside your own kernels, one hypercube at a time
// into team scratch, so that a computation over a compressed field needs no decompressed copy.
// Not included by <ndzip/ndzip.hpp>: it compiles the decoder into your translation unit.
// ndzip::compressed_array (<ndzip/compressed_array.hpp>) is built on it.
//
// A stream of the default mode for a grid is its hypercubes (4096 elements each: 4096 in 1-D,
// 64 x 64 in 2-D, 16^3 in 3-D, in C order of their origins) and the border, the elements
// outside every hypercube, stored raw. Every element of the grid is in exactly one of them.
//
// Made on the host, from a stream in the execution space's memory and its grid:
//
//   ndzip::hypercube_decoder<float, 3> decoder(exec, stream, ndzip::extent<3>(nz, ny, nx));
//
// the constructor validates the whole stream once, on `exec`, as ndzip::decompress checks it
// (its length, the offset table, every block's bounds and heads), and throws ndzip::stream_error
// with decompress()'s message if it is invalid, so a stream that fails never reaches a kernel.
// The stream View must then stay alive and unchanged while decoders made from it are used (they
// hold its address, not a copy); a stream changed after validation decodes into unspecified
// values, but no read leaves it. Only the default mode's stream (codec_mode::ndzip) is decoded
// by hypercubes: another mode throws std::invalid_argument naming it.
//
// The decoder is trivially copyable: capture it by value in a Kokkos::TeamPolicy kernel. Its
// teams must have exactly team_size() threads of vector_length() lanes and at least
// team_scratch_bytes() of level-0 team scratch (more if the kernel takes scratch of its own;
// the decoder takes its share with get_shmem, after whatever the kernel took before it).
// policy(exec, league_size) gives such a policy; check_policy(policy) throws
// std::invalid_argument, naming what differs, for one that is not.
//
//   Kokkos::parallel_for(decoder.policy(exec, decoder.hypercube_count()),
//       KOKKOS_LAMBDA(const decltype(decoder)::member_type& member) {
//         const std::size_t h = member.league_rank();
//         const auto cube = decoder.decode(member, h);   // the whole team, then every thread
//         Kokkos::parallel_for(Kokkos::TeamVectorRange(member, cube.size()), [&](int p) {
//           use(cube.index(p), cube[p]);                 // grid coordinates, value
//         });
//       });
//   Kokkos::parallel_for(Kokkos::RangePolicy<ExecSpace>(exec, 0, decoder.border_count()),
//       KOKKOS_LAMBDA(std::size_t i) {
//         use(decoder.border_coordinates(i), decoder.border_value(i));
//       });
//
// decode(member, h) is called by every thread of the team and returns, to all of them, the
// hypercube's 4096 values in team scratch (decoded_hypercube: the value of hypercube-local
// position p, the last axis fastest, and its grid coordinates). Each call takes the team's
// scratch (get_shmem), so a team that decodes several hypercubes takes it once, with
// scratch(member), and passes it to decode(member, scratch, h): each such call replaces the
// values of the one before (it begins with a team barrier). Threads and lanes of the team all
// take part in decoding; any of them may read any value afterwards.
//
// LaneOps: the execution space's own lane operations; tests name others (the host emulation of
// the GPU lane groups, backends/emulated), with which the decoder runs the GPU code paths on
// host execution spaces.

#include <Kokkos_Core.hpp>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "backends/lane_ops.hpp"
#include "core/encoder.hpp"
#include "core/hypercube_decoding.hpp"
#include "ndzip/codec_mode.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/format.hpp"
#include "ndzip/view_checks.hpp"

namespace ndzip {

// The decoded values of one hypercube, in team scratch: valid until the team's next decode on
// the same scratch, or the end of the team's work.
template <class T, int Dims>
class decoded_hypercube {
  using profile_type = profile<T, Dims>;
  using bits_type = typename profile_type::bits_type;

 public:
  using value_type = T;
  using index_type = Kokkos::Array<std::size_t, Dims>;  // grid coordinates, slowest first
  static constexpr int dimensions = Dims;

  KOKKOS_INLINE_FUNCTION decoded_hypercube(const bits_type* bits, const index_type& origin)
      : m_bits(bits), m_origin(origin) {}

  // Its number of values (a function: device code cannot bind a reference to a static member,
  // as Kokkos' ranges take their bounds).
  KOKKOS_INLINE_FUNCTION static constexpr int size() { return profile_type::hypercube_size; }

  // The value at hypercube-local position `p` (0 <= p < size(); C order, the last axis fastest).
  // Read through a copy of its bits, which the decoder wrote as integers.
  KOKKOS_INLINE_FUNCTION T operator[](int p) const {
    T value;
    std::memcpy(&value, m_bits + p, sizeof value);
    return value;
  }

  // The grid coordinates of the hypercube's first element, and of its position `p`.
  KOKKOS_INLINE_FUNCTION const index_type& origin() const { return m_origin; }
  KOKKOS_INLINE_FUNCTION index_type index(int p) const {
    index_type at;
    for (int a = 0; a < Dims; ++a)
      at[a] = m_origin[a] +
              static_cast<std::size_t>(core::hypercube_coordinate<profile_type>(p, a));
    return at;
  }

 private:
  const bits_type* m_bits;
  index_type m_origin;
};

template <class T, int Dims, class ExecSpace = Kokkos::DefaultExecutionSpace,
          class LaneOps = backend::lane_ops_for_t<ExecSpace>>
class hypercube_decoder {
  using kernels = core::kernel_types<T, Dims, ExecSpace, LaneOps>;
  using profile_type = profile<T, Dims>;
  using bits_type = typename profile_type::bits_type;

 public:
  using value_type = T;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  static constexpr int dimensions = Dims;
  // A TeamPolicy with the schedule the decoder is tuned for (dynamic on the host, where a busy
  // core would otherwise hold up the kernel; static on GPUs).
  using policy_type = typename kernels::team_policy;
  using member_type = typename policy_type::member_type;
  // A team's share of scratch: scratch(member), for decode(member, scratch, h).
  using scratch_type = typename kernels::team_scratch;
  using index_type = Kokkos::Array<std::size_t, Dims>;  // grid coordinates, slowest first
  using hypercube_type = decoded_hypercube<T, Dims>;

  // Validates `stream` (a contiguous rank-1 View of bytes accessible from ExecSpace, as
  // decompress() takes it; longer than the stream is accepted) of `grid` in `mode` on `exec`.
  // Throws std::invalid_argument for a mode other than codec_mode::ndzip, a grid the format
  // cannot hold or a misaligned stream, ndzip::stream_error for an invalid stream. Synchronous.
  template <class StreamView>
  hypercube_decoder(const ExecSpace& exec, const StreamView& stream, const extent<Dims>& grid,
                    codec_mode mode = codec_mode::ndzip)
      : hypercube_decoder(exec, stream_data(stream), stream.size(), grid, mode) {}

  // The same on a pointer to `stream_size` bytes in ExecSpace's memory.
  hypercube_decoder(const ExecSpace& exec, const std::byte* stream, std::size_t stream_size,
                    const extent<Dims>& grid, codec_mode mode = codec_mode::ndzip)
      : m_layout(checked_grid(grid, mode)),
        m_table(reinterpret_cast<const std::uint32_t*>(stream)),
        m_blocks(reinterpret_cast<const bits_type*>(stream + m_layout.header_bytes())),
        m_stream_bytes(core::validate_stream<T, Dims, ExecSpace, LaneOps>(exec, stream,
                                                                          stream_size, grid)),
        m_area((m_stream_bytes - m_layout.header_bytes()) / sizeof(T) - m_layout.border_size) {}

  // Host side: what the policy of a kernel that decodes must be.
  static constexpr int team_size() { return LaneOps::team_size(sizeof(bits_type)); }
  static constexpr int vector_length() { return LaneOps::vector_length; }
  static constexpr std::size_t team_scratch_bytes() { return kernels::team_scratch_bytes; }

  // A policy of `league_size` teams, each of team_size() threads of vector_length() lanes with
  // team_scratch_bytes() of level-0 scratch. Throws std::invalid_argument for more teams than
  // Kokkos counts in an int.
  policy_type policy(const ExecSpace& exec, std::size_t league_size) const {
    if (league_size > static_cast<std::size_t>(INT_MAX))
      throw std::invalid_argument("ndzip: hypercube_decoder::policy: " +
                                  std::to_string(league_size) + " teams are more than " +
                                  std::to_string(INT_MAX));
    return kernels::hypercube_policy(exec, league_size);
  }

  // Throws std::invalid_argument, naming what differs, unless `policy` (a TeamPolicy of
  // ExecSpace) has team_size() threads of vector_length() lanes and team_scratch_bytes() of
  // level-0 scratch at least.
  template <class Policy>
  static void check_policy(const Policy& policy) {
    static_assert(std::is_same_v<typename Policy::execution_space, ExecSpace>,
                  "ndzip: the policy runs on another execution space than the decoder's");
    const auto refuse = [](const char* what, std::size_t needed, std::size_t has) {
      throw std::invalid_argument(std::string("ndzip: hypercube_decoder needs a policy with ") +
                                  what + " " + std::to_string(needed) + ", this one has " +
                                  std::to_string(has));
    };
    if (policy.team_size() != team_size()) refuse("team_size()", team_size(), policy.team_size());
    if (policy.impl_vector_length() != vector_length())
      refuse("vector_length()", vector_length(), policy.impl_vector_length());
    if (policy.scratch_size(0) < team_scratch_bytes())
      refuse("level-0 team scratch of at least team_scratch_bytes() =", team_scratch_bytes(),
             policy.scratch_size(0));
  }

  // The bytes the stream takes (the part of the stream View a decompression consumes).
  std::size_t stream_bytes() const { return m_stream_bytes; }

  // Device side (and host).
  KOKKOS_INLINE_FUNCTION const extent<Dims>& grid() const { return m_layout.grid; }
  KOKKOS_INLINE_FUNCTION std::size_t hypercube_count() const { return m_layout.hypercube_count; }

  // The grid coordinates of hypercube h's first element (h < hypercube_count()).
  KOKKOS_INLINE_FUNCTION index_type hypercube_origin(std::size_t h) const {
    std::size_t origin[Dims];
    m_layout.hypercube_origin(h, origin);
    index_type at;
    for (int a = 0; a < Dims; ++a) at[a] = origin[a];
    return at;
  }

  // The team's share of scratch (once per team: each call takes scratch anew).
  KOKKOS_INLINE_FUNCTION static scratch_type scratch(const member_type& member) {
    return kernels::scratch(member);
  }

  // Hypercube h (h < hypercube_count()) decoded by the whole team into `scratch`, replacing
  // what an earlier call on it decoded.
  KOKKOS_INLINE_FUNCTION hypercube_type decode(const member_type& member,
                                               const scratch_type& scratch, std::size_t h) const {
    core::decode_into_scratch<profile_type, LaneOps>(member, scratch, m_table, m_blocks, m_area,
                                                     h);
    return hypercube_type(scratch.cube, hypercube_origin(h));
  }

  // Hypercube h decoded into the team's scratch, taken by this call: once per team.
  KOKKOS_INLINE_FUNCTION hypercube_type decode(const member_type& member, std::size_t h) const {
    return decode(member, scratch(member), h);
  }

  // The border's elements (i < border_count(), in C order of the grid), read from the stream.
  KOKKOS_INLINE_FUNCTION std::size_t border_count() const { return m_layout.border_size; }
  KOKKOS_INLINE_FUNCTION T border_value(std::size_t i) const {
    T value;
    std::memcpy(&value, m_blocks + m_area + i, sizeof value);
    return value;
  }
  // Its offset in the C-order grid, and its grid coordinates.
  KOKKOS_INLINE_FUNCTION std::size_t border_offset(std::size_t i) const {
    return core::border_element(m_layout, i);
  }
  KOKKOS_INLINE_FUNCTION index_type border_coordinates(std::size_t i) const {
    std::size_t offset = border_offset(i);
    index_type at;
    for (int a = Dims - 1; a >= 0; --a) {
      at[a] = offset % m_layout.grid[a];
      offset /= m_layout.grid[a];
    }
    return at;
  }

 private:
  // `grid`, once `mode` is known to be the one this decoder reads.
  static const extent<Dims>& checked_grid(const extent<Dims>& grid, codec_mode mode) {
    if (mode == codec_mode::ndzip) return grid;
    const char* name = codec_mode_name(mode);
    throw std::invalid_argument(
        std::string("ndzip: hypercube_decoder decodes the ndzip mode's stream only, not the ") +
        (name ? name : "unknown") +
        " mode's (its blocks are not decodable one by one); decompress it with ndzip::decompress");
  }

  template <class StreamView>
  static const std::byte* stream_data(const StreamView& stream) {
    check_stream_view<memory_space>(stream);
    return reinterpret_cast<const std::byte*>(stream.data());
  }

  stream_layout<T, Dims> m_layout;
  const std::uint32_t* m_table;  // the offset table
  const bits_type* m_blocks;     // the block area, then the border
  std::size_t m_stream_bytes;
  std::uint64_t m_area;          // the block area's words: the table's validated last entry
};

}  // namespace ndzip
