// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "chunked_codec.hpp"

#include <Kokkos_Core.hpp>
#include <ndzip/backends.hpp>
#include <ndzip/chunked_frame_stream.hpp>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace ndzip_cli {

namespace {

template <class T, int Dims>
using c_order_data = std::conditional_t<Dims == 1, T*, std::conditional_t<Dims == 2, T**, T***>>;

// A C-order View of `grid` over memory at `data` that it does not own.
template <class T, int Dims, class Space>
Kokkos::View<c_order_data<T, Dims>, Kokkos::LayoutRight, Space, Kokkos::MemoryUnmanaged> view_at(
    T* data, const ndzip::extent<Dims>& grid) {
  return Kokkos::View<c_order_data<T, Dims>, Kokkos::LayoutRight, Space,
                      Kokkos::MemoryUnmanaged>(data, grid[0],
                                               Dims > 1 ? grid[1] : KOKKOS_INVALID_INDEX,
                                               Dims > 2 ? grid[2] : KOKKOS_INVALID_INDEX);
}

std::size_t bytes_of(const ndzip::chunked_frame_info& info, std::uint64_t s) {
  const auto extents = info.slab_extents(s);
  return ndzip::array_shape(info.type, info.dimensions, extents.data()).byte_size();
}

// A slab's values in the backend's memory, where the backend cannot read host memory: one
// buffer of the largest slab, allocated at the first slab.
template <class T, class ExecSpace>
class device_slab {
 public:
  static constexpr bool needed =
      !Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
  T* get(const ExecSpace& exec, std::size_t elements) {
    if (m_values.size() < elements)
      m_values = Kokkos::View<T*, typename ExecSpace::memory_space>(
          Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "ndzip::cli_slab"), elements);
    return m_values.data();
  }

 private:
  Kokkos::View<T*, typename ExecSpace::memory_space> m_values;
};

}  // namespace

struct slab_encoder::impl {
  virtual ~impl() = default;
  virtual const ndzip::chunked_frame_info& info() const = 0;
  virtual byte_span header() const = 0;
  virtual byte_span encode(byte_span values) = 0;
  virtual std::vector<std::byte> finish() = 0;
};

struct slab_decoder::impl {
  virtual ~impl() = default;
  virtual const ndzip::chunked_frame_info& info() const = 0;
  virtual std::uint64_t next_slab() const = 0;
  virtual ndzip::slab_info read_head(byte_span head) const = 0;
  virtual void decode(byte_span record, std::byte* values) = 0;
  virtual std::size_t end_bytes() const = 0;
  virtual void finish(byte_span end) = 0;
};

namespace {

template <class T, int Dims, class ExecSpace>
class typed_encoder final : public slab_encoder::impl {
 public:
  typed_encoder(const ExecSpace& exec, const ndzip::extent<Dims>& grid, std::uint64_t rows,
                ndzip::codec_mode mode, ndzip::folding folding)
      : m_exec(exec), m_writer(exec, grid, rows, mode, folding) {}

  const ndzip::chunked_frame_info& info() const override { return m_writer.info(); }
  byte_span header() const override {
    return byte_span(m_writer.header().data(), m_writer.header().size());
  }
  byte_span encode(byte_span values) override {
    const ndzip::extent<Dims> grid = m_writer.slab_grid(m_writer.next_slab());
    if (values.size != grid.size() * sizeof(T))
      throw std::logic_error("ndzip_cli: slab_encoder: the values are not one slab's");
    const T* host = reinterpret_cast<const T*>(values.data);
    typename ndzip::chunked_frame_writer<T, Dims, ExecSpace>::record_view record;
    if constexpr (device_slab<T, ExecSpace>::needed) {
      T* device = m_device.get(m_exec, grid.size());
      const auto slab = view_at<T, Dims, typename ExecSpace::memory_space>(device, grid);
      Kokkos::deep_copy(m_exec, slab, view_at<const T, Dims, Kokkos::HostSpace>(host, grid));
      record = m_writer.encode_slab(slab);
    } else {
      record = m_writer.encode_slab(view_at<const T, Dims, Kokkos::HostSpace>(host, grid));
    }
    return byte_span(record.data(), record.size());
  }

  std::vector<std::byte> finish() override { return m_writer.finish(); }

 private:
  ExecSpace m_exec;
  ndzip::chunked_frame_writer<T, Dims, ExecSpace> m_writer;
  device_slab<T, ExecSpace> m_device;
};

template <class T, int Dims, class ExecSpace>
class typed_decoder final : public slab_decoder::impl {
 public:
  typed_decoder(const ExecSpace& exec, byte_span header)
      : m_exec(exec), m_reader(exec, header.data, header.size) {}

  const ndzip::chunked_frame_info& info() const override { return m_reader.info(); }
  std::uint64_t next_slab() const override { return m_reader.next_slab(); }
  ndzip::slab_info read_head(byte_span head) const override {
    return m_reader.read_slab_head(head.data, head.size);
  }

  void decode(byte_span record, std::byte* values) override {
    const ndzip::extent<Dims> grid = m_reader.slab_grid(m_reader.next_slab());
    T* host = reinterpret_cast<T*>(values);
    const Kokkos::View<const std::byte*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> bytes(
        record.data, record.size);
    if constexpr (device_slab<T, ExecSpace>::needed) {
      T* device = m_device.get(m_exec, grid.size());
      const auto slab = view_at<T, Dims, typename ExecSpace::memory_space>(device, grid);
      m_reader.decode_slab(bytes, slab);
      Kokkos::deep_copy(m_exec, view_at<T, Dims, Kokkos::HostSpace>(host, grid), slab);
      m_exec.fence();
    } else {
      m_reader.decode_slab(bytes, view_at<T, Dims, Kokkos::HostSpace>(host, grid));
    }
  }

  std::size_t end_bytes() const override { return m_reader.end_bytes(); }
  void finish(byte_span end) override { m_reader.finish(end.data, end.size); }

 private:
  ExecSpace m_exec;
  ndzip::chunked_frame_reader<T, Dims, ExecSpace> m_reader;
  device_slab<T, ExecSpace> m_device;
};

}  // namespace

slab_encoder::slab_encoder(const std::string& backend, const ndzip::array_shape& shape,
                           std::uint64_t slab_rows, ndzip::codec_mode mode,
                           ndzip::folding folding) {
  ndzip::with_backend(backend, [&](auto exec) {
    ndzip::visit_shape(shape, [&](auto tag, const auto& grid) {
      using T = typename decltype(tag)::type;
      constexpr int Dims = std::decay_t<decltype(grid)>::dimensions;
      m_impl = std::make_unique<typed_encoder<T, Dims, decltype(exec)>>(exec, grid, slab_rows,
                                                                        mode, folding);
    });
  });
}

slab_encoder::~slab_encoder() = default;
const ndzip::chunked_frame_info& slab_encoder::info() const { return m_impl->info(); }
byte_span slab_encoder::header() const { return m_impl->header(); }
std::size_t slab_encoder::slab_bytes(std::uint64_t s) const { return bytes_of(info(), s); }
byte_span slab_encoder::encode(byte_span values) { return m_impl->encode(values); }
std::vector<std::byte> slab_encoder::finish() { return m_impl->finish(); }

slab_decoder::slab_decoder(const std::string& backend, byte_span header) {
  const ndzip::chunked_frame_info info = ndzip::read_chunked_header(header.data, header.size);
  const ndzip::array_shape shape(info.type, info.dimensions, info.extents.data());
  ndzip::with_backend(backend, [&](auto exec) {
    ndzip::visit_shape(shape, [&](auto tag, const auto& grid) {
      using T = typename decltype(tag)::type;
      constexpr int Dims = std::decay_t<decltype(grid)>::dimensions;
      m_impl = std::make_unique<typed_decoder<T, Dims, decltype(exec)>>(exec, header);
    });
  });
}

slab_decoder::~slab_decoder() = default;
const ndzip::chunked_frame_info& slab_decoder::info() const { return m_impl->info(); }
std::uint64_t slab_decoder::next_slab() const { return m_impl->next_slab(); }
std::size_t slab_decoder::slab_bytes(std::uint64_t s) const { return bytes_of(info(), s); }
ndzip::slab_info slab_decoder::read_head(byte_span head) const { return m_impl->read_head(head); }
void slab_decoder::decode(byte_span record, std::byte* values) { m_impl->decode(record, values); }
std::size_t slab_decoder::end_bytes() const { return m_impl->end_bytes(); }
void slab_decoder::finish(byte_span end) { m_impl->finish(end); }

}  // namespace ndzip_cli
