// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The run-time layer (ndzip/dynamic.hpp): dynamic_compressor over the library's own
// instantiations of ndzip::compressor, the region decode of a frame behind a run-time shape,
// and the bounds and checks of a run-time shape.

#include "ndzip/dynamic.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/stream_status.hpp"
#include "ndzip/backends.hpp"
#include "ndzip/compressor.hpp"
#include "ndzip/detail/disjoint.hpp"
#include "ndzip/error.hpp"
#include "ndzip/format.hpp"
#include "ndzip/frame.hpp"
#include "ndzip/frame_region.hpp"
#include "ndzip/stream_size.hpp"

namespace ndzip {

void check_grid_representable(const array_shape& shape) {
  visit_shape(shape, [](auto tag, const auto& grid) {
    check_grid_representable<typename decltype(tag)::type>(grid);
  });
}

std::size_t compressed_size_bound(const array_shape& shape, codec_mode mode) {
  return visit_shape(shape, [&](auto tag, const auto& grid) {
    return compressed_size_bound<typename decltype(tag)::type>(grid, mode);
  });
}

void check_stream_size(const array_shape& shape, std::size_t stream_bytes, codec_mode mode) {
  visit_shape(shape, [&](auto tag, const auto& grid) {
    using T = typename decltype(tag)::type;
    check_grid_representable<T>(grid);
    core::check_stream_size<T>(grid, stream_bytes, mode);
  });
}

// The typed side: a compressor, and where host buffers are staged for a backend that cannot
// read them, or that needs them aligned.
struct dynamic_compressor::typed_codec {
  virtual ~typed_codec() = default;
  virtual bool reads_host_memory() const = 0;
  virtual std::size_t size_bound() const = 0;
  virtual std::size_t compress(const void* values, buffer_location values_at, void* stream,
                               std::size_t capacity, buffer_location stream_at,
                               const input_done& done) = 0;
  virtual std::size_t decompress(const void* stream, std::size_t stream_bytes,
                                 buffer_location stream_at, void* values,
                                 buffer_location values_at, const input_done& done) = 0;
};

namespace {

template <class T, int Dims, class ExecSpace>
class typed_compressor final : public dynamic_compressor::typed_codec {
  using memory_space = typename ExecSpace::memory_space;
  using input_done = dynamic_compressor::input_done;
  using bytes_view = Kokkos::View<std::byte*, memory_space>;
  template <class Byte>
  using host_bytes = Kokkos::View<Byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  static constexpr bool host_readable =
      Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

 public:
  typed_compressor(const ExecSpace& exec, const extent<Dims>& grid, codec_mode mode)
      : m_exec(exec), m_codec(exec, grid, mode), m_value_bytes(grid.size() * sizeof(T)) {}

  bool reads_host_memory() const override { return host_readable; }
  std::size_t size_bound() const override { return m_codec.size_bound(); }

  std::size_t compress(const void* values, buffer_location values_at, void* stream,
                       std::size_t capacity, buffer_location stream_at,
                       const input_done& done) override {
    const std::lock_guard<std::mutex> lock(m_calls);
    if (values_at == stream_at)
      detail::check_disjoint(values, m_value_bytes, stream, capacity);
    const T* codec_values = static_cast<const T*>(values);
    const bool values_staged = staged(values_at, values, alignof(T));
    if (values_staged) {
      copy_in(m_values, values, m_value_bytes, values_at);
      codec_values = reinterpret_cast<const T*>(m_values.data());
      if (done) done();
    }
    // Written where it lies if the backend can, else into staging and copied once its size is
    // known (nothing reaches the caller's buffer if it is too small).
    if (!staged(stream_at, stream, m_codec.alignment())) {
      const std::size_t size =
          m_codec.compress_raw(codec_values, static_cast<std::byte*>(stream), capacity);
      m_exec.fence();
      if (done && !values_staged) done();
      return size;
    }
    reserve(m_stream, m_codec.size_bound());
    const std::size_t size = m_codec.compress_raw(codec_values, m_stream.data(), m_stream.size());
    m_exec.fence();
    if (done && !values_staged) done();
    if (size > capacity)
      throw capacity_error("ndzip: the stream needs " + std::to_string(size) +
                           " bytes but the output holds only " + std::to_string(capacity) +
                           " (size_bound is " + std::to_string(m_codec.size_bound()) + ")");
    copy_out(stream, m_stream, size, stream_at);
    return size;
  }

  std::size_t decompress(const void* stream, std::size_t stream_bytes, buffer_location stream_at,
                         void* values, buffer_location values_at,
                         const input_done& done) override {
    const std::lock_guard<std::mutex> lock(m_calls);
    if (values_at == stream_at)
      detail::check_disjoint(values, m_value_bytes, stream, stream_bytes);
    const std::byte* codec_stream = static_cast<const std::byte*>(stream);
    const bool stream_staged = staged(stream_at, stream, m_codec.alignment());
    if (stream_staged) {
      copy_in(m_stream, stream, stream_bytes, stream_at);
      codec_stream = m_stream.data();
      if (done) done();
    }
    std::size_t consumed = 0;
    if (!staged(values_at, values, alignof(T))) {
      consumed = m_codec.decompress_raw(codec_stream, stream_bytes, static_cast<T*>(values));
    } else {
      reserve(m_values, m_value_bytes);
      consumed = m_codec.decompress_raw(codec_stream, stream_bytes,
                                        reinterpret_cast<T*>(m_values.data()));
      copy_out(values, m_values, m_value_bytes, values_at);
    }
    if (done && !stream_staged) done();
    return consumed;
  }

 private:
  // Whether a buffer goes through staging: host memory the backend cannot read, or that is not
  // aligned as the codec needs. A misaligned buffer in the backend's memory is the caller's bug.
  bool staged(buffer_location at, const void* data, std::size_t alignment) const {
    const bool aligned = reinterpret_cast<std::uintptr_t>(data) % alignment == 0;
    if (at == buffer_location::host && !host_readable) return true;
    if (!aligned && at == buffer_location::backend && !host_readable)
      throw std::invalid_argument("ndzip: a buffer in the backend's memory at an address not "
                                  "aligned to " +
                                  std::to_string(alignment) + " bytes");
    return !aligned;
  }

  // On the compressor's instance: its device, where that is not the default one (a stream of
  // another GPU).
  void reserve(bytes_view& view, std::size_t bytes) const {
    // Rounded up to whole words: the codec reads and writes words.
    if (view.size() < bytes)
      view = bytes_view(
          Kokkos::view_alloc(m_exec, Kokkos::WithoutInitializing, "ndzip::dynamic_staging"),
          (bytes + 7) / 8 * 8);
  }

  void copy_in(bytes_view& to, const void* from, std::size_t bytes, buffer_location at) {
    reserve(to, bytes);
    const auto target = Kokkos::subview(to, std::make_pair(std::size_t{0}, bytes));
    if (at == buffer_location::host)
      Kokkos::deep_copy(m_exec, target,
                        host_bytes<const std::byte>(static_cast<const std::byte*>(from), bytes));
    else
      Kokkos::deep_copy(
          m_exec, target,
          Kokkos::View<const std::byte*, memory_space, Kokkos::MemoryUnmanaged>(
              static_cast<const std::byte*>(from), bytes));
    m_exec.fence();
  }

  void copy_out(void* to, const bytes_view& from, std::size_t bytes, buffer_location at) {
    const auto source = Kokkos::subview(from, std::make_pair(std::size_t{0}, bytes));
    if (at == buffer_location::host)
      Kokkos::deep_copy(m_exec, host_bytes<std::byte>(static_cast<std::byte*>(to), bytes), source);
    else
      Kokkos::deep_copy(m_exec,
                        Kokkos::View<std::byte*, memory_space, Kokkos::MemoryUnmanaged>(
                            static_cast<std::byte*>(to), bytes),
                        source);
    m_exec.fence();
  }

  ExecSpace m_exec;
  compressor<T, Dims, ExecSpace> m_codec;
  std::size_t m_value_bytes;
  std::mutex m_calls;  // the staging buffers are the object's
  bytes_view m_values, m_stream;
};

// The instance a compressor made without a stream runs on. Kokkos 4 runs one call at a time on
// a Serial instance, so compressors sharing the default one would wait on each other across
// threads: each gets its own. The other backends' default instances (a GPU's stream, the OpenMP
// pool) are shared.
template <class ExecSpace>
ExecSpace instance_of_own() {
#if defined(KOKKOS_ENABLE_SERIAL) && KOKKOS_VERSION >= 40000
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Serial>)
    return Kokkos::Serial(Kokkos::NewInstance{});
#endif
  return ExecSpace{};
}

// f(the backend's instance on `stream`); std::invalid_argument for a backend without streams.
template <class F>
void with_stream_instance(std::string_view backend, native_stream stream, F&& f) {
#ifdef KOKKOS_ENABLE_CUDA
  if (backend == "cuda") return f(Kokkos::Cuda(reinterpret_cast<cudaStream_t>(stream.handle)));
#endif
#ifdef KOKKOS_ENABLE_HIP
  if (backend == "hip")
    return f(detail::hip_space(reinterpret_cast<hipStream_t>(stream.handle)));
#endif
  static_cast<void>(stream);  // a build without GPU backends
  static_cast<void>(f);
  with_backend(backend, [&](const auto&) {
    throw std::invalid_argument("ndzip: the '" + std::string(backend) +
                                "' backend runs on no native stream (only 'cuda' and 'hip' do)");
  });
}

}  // namespace

// The typed codecs of one array, one for each rank it is coded in (index rank - 1), each made
// by `make` the first time that rank is asked for. Guarded: calls on distinct
// threads may ask at once (each typed codec serialises its own calls).
struct dynamic_compressor::codecs {
  using codec_factory = std::function<std::unique_ptr<typed_codec>(const array_shape&)>;

  explicit codecs(codec_factory make_codec) : make(std::move(make_codec)) {}

  typed_codec& of(const array_shape& shape, int coded_rank) {
    const std::lock_guard<std::mutex> lock(guard);
    std::unique_ptr<typed_codec>& slot = by_rank[coded_rank - 1];
    if (!slot) slot = make(folded_shape(shape, coded_rank));
    return *slot;
  }

  codec_factory make;
  std::mutex guard;
  std::unique_ptr<typed_codec> by_rank[array_shape::max_rank];
};

namespace {

// A maker of typed codecs for shapes of the backend, each on the instance that
// make_instance(backend, f) hands to f.
template <class MakeInstance>
dynamic_compressor::codecs::codec_factory codec_maker(std::string backend, codec_mode mode,
                                                        MakeInstance make_instance) {
  return [backend = std::move(backend), mode, make_instance](const array_shape& shape) {
    std::unique_ptr<dynamic_compressor::typed_codec> made;
    visit_shape(shape, [&](auto tag, const auto& grid) {
      using T = typename decltype(tag)::type;
      constexpr int Dims = std::decay_t<decltype(grid)>::dimensions;
      make_instance(backend, [&](const auto& exec) {
        using exec_type = std::decay_t<decltype(exec)>;
        made = std::make_unique<typed_compressor<T, Dims, exec_type>>(exec, grid, mode);
      });
    });
    return made;
  };
}

}  // namespace

dynamic_compressor::dynamic_compressor(std::string_view backend, const array_shape& shape,
                                       codec_mode mode, folding frame_folding)
    : m_backend(backend),
      m_shape(shape),
      m_mode(mode),
      m_frame_shape(coded_shape(shape, frame_folding)),
      m_codecs(std::make_unique<codecs>(codec_maker(m_backend, mode, [](std::string_view name, const auto& f) {
            with_backend(name, [&](const auto& exec) {
              f(instance_of_own<std::decay_t<decltype(exec)>>());
            });
          }))) {
  m_codecs->of(m_shape, m_shape.rank());  // made now: the backend and shape checked here
}

dynamic_compressor::dynamic_compressor(std::string_view backend, const array_shape& shape,
                                       codec_mode mode, native_stream stream,
                                       folding frame_folding)
    : m_backend(backend),
      m_shape(shape),
      m_mode(mode),
      m_frame_shape(coded_shape(shape, frame_folding)),
      m_codecs(std::make_unique<codecs>(codec_maker(m_backend, mode, [stream](std::string_view name, const auto& f) {
            with_stream_instance(name, stream, f);
          }))) {
  m_codecs->of(m_shape, m_shape.rank());
}

dynamic_compressor::~dynamic_compressor() = default;
dynamic_compressor::dynamic_compressor(dynamic_compressor&&) noexcept = default;
dynamic_compressor& dynamic_compressor::operator=(dynamic_compressor&&) noexcept = default;

dynamic_compressor::typed_codec& dynamic_compressor::codec(int coded_rank) {
  // The array's own codec, made by the constructor and never replaced, needs no lock: every
  // bare-stream call takes this path.
  if (coded_rank == m_shape.rank()) return *m_codecs->by_rank[coded_rank - 1];
  return m_codecs->of(m_shape, coded_rank);
}

bool dynamic_compressor::backend_reads_host_memory() const {
  return m_codecs->by_rank[m_shape.rank() - 1]->reads_host_memory();
}

std::size_t dynamic_compressor::size_bound() const {
  return m_codecs->by_rank[m_shape.rank() - 1]->size_bound();
}

std::size_t dynamic_compressor::frame_size_bound() const {
  return frame_header_bytes + compressed_size_bound(m_frame_shape, m_mode);
}

std::size_t dynamic_compressor::compress(const void* values, void* stream, std::size_t capacity,
                                         buffer_location where, const input_done& done) {
  return codec(m_shape.rank()).compress(values, where, stream, capacity, where, done);
}

std::size_t dynamic_compressor::decompress(const void* stream, std::size_t stream_bytes,
                                           void* values, buffer_location where,
                                           const input_done& done) {
  return codec(m_shape.rank()).decompress(stream, stream_bytes, where, values, where, done);
}

std::size_t dynamic_compressor::compress_frame(const void* values, void* frame,
                                               std::size_t capacity, buffer_location where,
                                               const input_done& done) {
  detail::check_frame_output(m_shape.element_count(), "a " + m_shape.to_string() + " array",
                             capacity);
  if (where == buffer_location::host || backend_reads_host_memory())
    detail::check_disjoint(values, m_shape.byte_size(), frame, capacity, "frame buffer");
  auto* const out = static_cast<std::byte*>(frame);
  std::byte* const stream = out + frame_header_bytes;
  const std::size_t stream_bytes = codec(m_frame_shape.rank()).compress(
      values, where, stream, capacity - frame_header_bytes, buffer_location::host, done);
  const auto header = encode_frame_header(m_shape.type(), m_shape.rank(), m_shape.extents(),
                                          stream, stream_bytes, m_mode, m_frame_shape.rank());
  std::copy(header.begin(), header.end(), out);
  return frame_header_bytes + stream_bytes;
}

void dynamic_compressor::decompress_frame(const void* frame, std::size_t frame_bytes, void* values,
                                          buffer_location where) {
  const auto* const data = static_cast<const std::byte*>(frame);
  verify_frame_checksum(data, frame_bytes);
  const frame_info info = inspect_frame(data, frame_bytes);
  detail::check_frame_holds(info, m_shape.type(), m_shape.rank(), m_shape.extents(),
                            "the compressor's array");
  if (info.mode != m_mode)
    throw frame_error(std::string("ndzip: the frame holds a stream of the ") +
                      codec_mode_name(info.mode) + " mode, but the compressor is for the " +
                      codec_mode_name(m_mode) + " mode");
  if (where == buffer_location::host || backend_reads_host_memory())
    detail::check_disjoint(values, m_shape.byte_size(), frame, frame_bytes, "frame buffer");
  const std::size_t consumed = codec(info.coded_dimensions)
                                   .decompress(data + frame_header_bytes,
                                               static_cast<std::size_t>(info.stream_bytes),
                                               buffer_location::host, values, where, {});
  detail::check_frame_stream_consumed(info, consumed);
}

namespace {

template <class T, int Dims>
using c_order_data =
    std::conditional_t<Dims == 1, T*, std::conditional_t<Dims == 2, T**, T***>>;

template <class T, int Dims, class Space, class... Traits>
Kokkos::View<c_order_data<T, Dims>, Kokkos::LayoutRight, Space, Traits...> box_view(
    T* data, const extent<Dims>& count) {
  using view = Kokkos::View<c_order_data<T, Dims>, Kokkos::LayoutRight, Space, Traits...>;
  return view(data, count[0], Dims > 1 ? count[1] : KOKKOS_INVALID_INDEX,
              Dims > 2 ? count[2] : KOKKOS_INVALID_INDEX);
}

// The box of `count` at `start` of the frame into `values` (at `where`) on `exec`: in place
// where the instance can write them and they are aligned, else through staging (as
// typed_compressor::decompress).
template <class T, int Dims, class ExecSpace>
void decode_region_on(const ExecSpace& exec, const std::byte* frame, std::size_t frame_bytes,
                      const std::array<std::size_t, Dims>& start, const extent<Dims>& count,
                      void* values, buffer_location where) {
  using memory_space = typename ExecSpace::memory_space;
  constexpr bool host_readable =
      Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
  const Kokkos::View<const std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> frame_view(
      frame, frame_bytes);
  const bool aligned = reinterpret_cast<std::uintptr_t>(values) % alignof(T) == 0;
  if (!aligned && where == buffer_location::backend && !host_readable)
    throw std::invalid_argument("ndzip: a buffer in the backend's memory at an address not "
                                "aligned to " + std::to_string(alignof(T)) + " bytes");
  if (aligned && (where == buffer_location::backend || host_readable)) {
    decompress_frame_region(exec, frame_view, start,
                            box_view<T, Dims, memory_space, Kokkos::MemoryUnmanaged>(
                                static_cast<T*>(values), count));
    return;
  }
  const Kokkos::View<c_order_data<T, Dims>, Kokkos::LayoutRight, memory_space> staging(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "ndzip::dynamic_staging"), count[0],
      Dims > 1 ? count[1] : KOKKOS_INVALID_INDEX, Dims > 2 ? count[2] : KOKKOS_INVALID_INDEX);
  decompress_frame_region(exec, frame_view, start, staging);
  const std::size_t bytes = count.size() * sizeof(T);
  const Kokkos::View<const std::byte*, memory_space, Kokkos::MemoryUnmanaged> source(
      reinterpret_cast<const std::byte*>(staging.data()), bytes);
  auto* const to = static_cast<std::byte*>(values);
  if (where == buffer_location::host)
    Kokkos::deep_copy(exec, Kokkos::View<std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                to, bytes), source);
  else
    Kokkos::deep_copy(exec, Kokkos::View<std::byte*, memory_space, Kokkos::MemoryUnmanaged>(
                                to, bytes), source);
  exec.fence();
}

// decompress_frame_region on the instance that with_instance(f) hands to f.
template <class WithInstance>
void decode_region(const WithInstance& with_instance, const void* frame, std::size_t frame_bytes,
                   const array_shape& box, const std::array<std::uint64_t, 3>& start,
                   void* values, buffer_location where) {
  const auto* const data = static_cast<const std::byte*>(frame);
  // The element type and rank named before the frame is read further.
  const bool chunked =
      frame_bytes > 4 && std::to_integer<std::uint8_t>(data[4]) == frame_version_chunked;
  element_type type = element_type::float32;
  int dimensions = 0;
  if (chunked) {
    const chunked_frame_info info = read_chunked_header(data, frame_bytes);
    type = info.type;
    dimensions = info.dimensions;
  } else {
    const frame_info info = read_frame_header(data, frame_bytes);
    type = info.type;
    dimensions = info.dimensions;
  }
  if (type != box.type() || dimensions != box.rank())
    throw frame_error("ndzip: the frame holds a " + std::to_string(dimensions) + "-D " +
                      element_type_name(type) + " array, but the region asked for is a " +
                      std::to_string(box.rank()) + "-D " + element_type_name(box.type()) +
                      " box");
  visit_shape(box, [&](auto tag, const auto& count) {
    using T = typename decltype(tag)::type;
    constexpr int Dims = std::decay_t<decltype(count)>::dimensions;
    std::array<std::size_t, Dims> first{};
    for (int a = 0; a < Dims; ++a) {
      if (start[a] > std::numeric_limits<std::size_t>::max())
        throw std::invalid_argument("ndzip: a region starting past the address space");
      first[a] = static_cast<std::size_t>(start[a]);
    }
    with_instance([&](const auto& exec) {
      using exec_type = std::decay_t<decltype(exec)>;
      if (where == buffer_location::host ||
          Kokkos::SpaceAccessibility<exec_type, Kokkos::HostSpace>::accessible)
        detail::check_disjoint(values, box.byte_size(), frame, frame_bytes,
                               "frame buffer");
      decode_region_on<T, Dims>(exec, data, frame_bytes, first, count, values, where);
    });
  });
}

}  // namespace

void decompress_frame_region(std::string_view backend, const void* frame, std::size_t frame_bytes,
                             const array_shape& box, const std::array<std::uint64_t, 3>& start,
                             void* values, buffer_location where) {
  const auto on_backend = [&](const auto& f) {
    with_backend(backend, [&](const auto& exec) {
      f(instance_of_own<std::decay_t<decltype(exec)>>());
    });
  };
  decode_region(on_backend, frame, frame_bytes, box, start, values, where);
}

void decompress_frame_region(std::string_view backend, native_stream stream, const void* frame,
                             std::size_t frame_bytes, const array_shape& box,
                             const std::array<std::uint64_t, 3>& start, void* values,
                             buffer_location where) {
  const auto on_stream = [&](const auto& f) { with_stream_instance(backend, stream, f); };
  decode_region(on_stream, frame, frame_bytes, box, start, values, where);
}

}  // namespace ndzip
