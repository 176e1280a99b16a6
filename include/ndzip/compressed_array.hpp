// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// ndzip::compressed_array: a field held as its validated stream in the execution space's memory,
// read by kernels that decode it a hypercube at a time in team scratch
// (ndzip/hypercube_decoder.hpp), so that statistics, histograms or pointwise transforms of a
// compressed field need no decompressed copy of it. Not included by <ndzip/ndzip.hpp>: it
// compiles the decoder into your translation unit.
//
//   using array = ndzip::compressed_array<float, 3>;
//   const array field(exec, values);  // compresses a View (or: array(exec, stream, grid))
//   double sum = 0;
//   field.reduce(exec, KOKKOS_LAMBDA(const array::index_type&, float v, double& partial) {
//     partial += v;
//   }, Kokkos::Sum<double>(sum));
//
// Every call takes the functor as Kokkos takes a KOKKOS_LAMBDA (copied to the device) and runs
// one kernel on `exec`, visiting each element of the grid exactly once (for_each_hypercube: each
// hypercube once), in no particular order:
//   for_each_element(exec, f)    f(index, value) for every element of the grid, where index is
//                                its grid coordinates (a Kokkos::Array<std::size_t, Dims>,
//                                slowest first)
//   reduce(exec, f, reducer)     f(index, value, partial) for every element, as the functor of
//                                Kokkos::parallel_reduce with a reducer: Kokkos::Sum, Min, Max,
//                                MinMax, ... or one of your own with their interface
//                                (value_type, init, join, a constructor from value_type&)
//   for_each_hypercube(exec, f)  f(member, h, cube) by the whole team of hypercube h
//                                (a decoded_hypercube: cube[p], cube.index(p)), for work that
//                                wants a hypercube's values together; the border is not visited
//   for_each_border(exec, f)     f(index, value) for every border element, the elements outside
//                                the hypercubes (for_each_hypercube's complement)
// As with Kokkos: the for_each calls queue their kernel on `exec` and return; reduce into a
// scalar returns once the result is there. The element-wise calls decode each hypercube in one
// team and pass its values from team scratch; their functor runs on the team's threads and
// lanes (Kokkos::TeamVectorRange). A custom decoding kernel uses decoder() directly.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <string>
#include <utility>

#include "core/compressed_array_kernels.hpp"
#include "ndzip/codec_mode.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/extent.hpp"
#include "ndzip/hypercube_decoder.hpp"
#include "ndzip/view_checks.hpp"

namespace ndzip {

template <class T, int Dims, class ExecSpace = Kokkos::DefaultExecutionSpace,
          class LaneOps = backend::lane_ops_for_t<ExecSpace>>
class compressed_array {
 public:
  using decoder_type = hypercube_decoder<T, Dims, ExecSpace, LaneOps>;
  using value_type = T;
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  using index_type = typename decoder_type::index_type;
  using member_type = typename decoder_type::member_type;
  using hypercube_type = typename decoder_type::hypercube_type;
  using stream_view = Kokkos::View<const std::byte*, memory_space>;
  static constexpr int dimensions = Dims;

  // Compresses `values` (a contiguous View of this type and rank accessible from ExecSpace, as
  // ndzip::compress takes it) on `exec`, into a View of the stream's length. Synchronous.
  template <class ValuesView>
  compressed_array(const ExecSpace& exec, const ValuesView& values)
      : compressed_array(exec, compressed_stream(exec, values), grid_of(values)) {}

  // Holds `stream` (a View of its bytes, kept, not copied) of `grid` in `mode`, validated on
  // `exec`: throws what hypercube_decoder's constructor throws (ndzip::stream_error for an
  // invalid stream; std::invalid_argument for a mode other than codec_mode::ndzip).
  compressed_array(const ExecSpace& exec, const stream_view& stream, const extent<Dims>& grid,
                   codec_mode mode = codec_mode::ndzip)
      : m_stream(stream), m_decoder(exec, stream, grid, mode) {}

  const extent<Dims>& grid() const { return m_decoder.grid(); }
  // The stream View as held, and the bytes of it the stream takes.
  const stream_view& stream() const { return m_stream; }
  std::size_t stream_bytes() const { return m_decoder.stream_bytes(); }
  const decoder_type& decoder() const { return m_decoder; }

  template <class Functor>
  void for_each_element(const ExecSpace& exec, const Functor& f) const {
    Kokkos::parallel_for("ndzip::compressed_array::for_each_element",
                         m_decoder.policy(exec, core::element_teams(m_decoder)),
                         core::visit_elements<decoder_type, Functor>{m_decoder, f});
  }

  template <class Functor, class Reducer>
  void reduce(const ExecSpace& exec, const Functor& f, const Reducer& reducer) const {
    Kokkos::parallel_reduce("ndzip::compressed_array::reduce",
                            m_decoder.policy(exec, core::element_teams(m_decoder)),
                            core::reduce_elements<decoder_type, LaneOps, Functor, Reducer>{
                                m_decoder, f, reducer},
                            reducer);
  }

  template <class Functor>
  void for_each_hypercube(const ExecSpace& exec, const Functor& f) const {
    Kokkos::parallel_for("ndzip::compressed_array::for_each_hypercube",
                         m_decoder.policy(exec, m_decoder.hypercube_count()),
                         core::visit_hypercubes<decoder_type, Functor>{m_decoder, f});
  }

  template <class Functor>
  void for_each_border(const ExecSpace& exec, const Functor& f) const {
    Kokkos::parallel_for("ndzip::compressed_array::for_each_border",
                         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::size_t>>(
                             exec, 0, m_decoder.border_count()),
                         core::visit_border<decoder_type, Functor>{m_decoder, f});
  }

 private:
  // The stream of `values`, in a View of its own length.
  template <class ValuesView>
  static stream_view compressed_stream(const ExecSpace& exec, const ValuesView& values) {
    compressor<T, Dims, ExecSpace> codec(exec, grid_of(values));
    const Kokkos::View<std::byte*, memory_space> bound(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "ndzip::compressed_array::bound"),
        codec.size_bound());
    const std::size_t bytes = codec.compress(values, bound);
    const Kokkos::View<std::byte*, memory_space> stream(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "ndzip::compressed_array::stream"),
        bytes);
    Kokkos::deep_copy(exec, stream, Kokkos::subview(bound, std::make_pair(std::size_t{0}, bytes)));
    exec.fence();  // before `bound` is released
    return stream;
  }

  stream_view m_stream;
  decoder_type m_decoder;
};

}  // namespace ndzip
