// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "reference_model.hpp"

#include <stdexcept>

namespace ndzip_test {

model_layout model_layout_of(bool is_double, int dims, const std::array<std::size_t, 3>& extents) {
  model_layout l;
  l.word_bytes = is_double ? 8 : 4;
  l.side = dims == 1 ? 4096 : dims == 2 ? 64 : 16;
  std::size_t elements = 1;
  l.hypercubes = 1;
  for (int a = 0; a < dims; ++a) {
    elements *= extents[a];
    l.hypercubes *= extents[a] / l.side;
  }
  l.header_bytes = (4 * l.hypercubes + l.word_bytes - 1) / l.word_bytes * l.word_bytes;
  l.border_elements = elements - l.hypercubes * 4096;
  l.size_bound = l.header_bytes + l.hypercubes * 512 * (8 * l.word_bytes + 1) +
                 l.border_elements * l.word_bytes;
  return l;
}

template <class Bits>
std::vector<unsigned char> model_compress(const std::vector<Bits>& values, int dims,
                                          const std::array<std::size_t, 3>& extents) {
  constexpr int w = sizeof(Bits) * 8;
  constexpr std::size_t u = sizeof(Bits);
  const model_layout layout = model_layout_of(u == 8, dims, extents);
  const std::size_t s = layout.side;

  std::size_t n_axis[3] = {1, 1, 1}, cubes[3] = {1, 1, 1};
  for (int a = 0; a < dims; ++a) {
    n_axis[a] = extents[a];
    cubes[a] = extents[a] / s;
  }
  if (values.size() != n_axis[0] * n_axis[1] * n_axis[2])
    throw std::invalid_argument("model_compress: value count differs from the extents");
  // Strides of the whole grid and of one hypercube, for the axes in use (others have extent 1).
  std::size_t grid_stride[3], local_stride[3], local_side[3];
  {
    std::size_t g = 1, l = 1;
    for (int a = 2; a >= 0; --a) {
      local_side[a] = a < dims ? s : 1;
      grid_stride[a] = g;
      local_stride[a] = l;
      g *= n_axis[a];
      l *= local_side[a];
    }
  }

  std::vector<std::uint32_t> table;
  std::vector<Bits> area;
  std::vector<Bits> cube(4096);
  for (std::size_t h = 0; h < layout.hypercubes; ++h) {
    std::size_t origin[3] = {0, 0, 0}, rest = h;
    for (int a = dims - 1; a >= 0; --a) {
      origin[a] = rest % cubes[a] * s;
      rest /= cubes[a];
    }
    // Gather in local row-major order and rotate left by one.
    for (std::size_t l = 0; l < 4096; ++l) {
      std::size_t index = 0;
      for (int a = 0; a < 3; ++a)
        index += (origin[a] + l / local_stride[a] % local_side[a]) * grid_stride[a];
      const Bits v = values[index];
      cube[l] = static_cast<Bits>((v << 1) | (v >> (w - 1)));
    }
    // Backward difference along each axis; walking down keeps the predecessors unchanged.
    for (int a = 0; a < dims; ++a)
      for (std::size_t l = 4096; l-- > 0;)
        if (l / local_stride[a] % local_side[a] != 0) cube[l] -= cube[l - local_stride[a]];
    // Fold negative residuals.
    for (auto& r : cube)
      if (r >> (w - 1)) r ^= static_cast<Bits>(~Bits{0} >> 1);
    // Heads first, then the non-zero bit-plane columns of each chunk (MSB plane first).
    const std::size_t chunks = 4096 / w;
    const std::size_t block_start = area.size();
    area.resize(block_start + chunks);
    for (std::size_t c = 0; c < chunks; ++c) {
      Bits head = 0;
      for (int j = 0; j < w; ++j) head |= cube[c * w + j];
      area[block_start + c] = head;
      for (int b = w - 1; b >= 0; --b) {
        if (!((head >> b) & 1)) continue;
        Bits column = 0;
        for (int j = 0; j < w; ++j)
          column |= static_cast<Bits>((cube[c * w + j] >> b) & 1) << (w - 1 - j);
        area.push_back(column);
      }
    }
    table.push_back(static_cast<std::uint32_t>(area.size()));
  }

  std::vector<unsigned char> out(layout.header_bytes, 0);
  for (std::size_t i = 0; i < table.size(); ++i)
    for (int b = 0; b < 4; ++b) out[4 * i + b] = static_cast<unsigned char>(table[i] >> (8 * b));
  auto put = [&](Bits v) {
    for (std::size_t b = 0; b < u; ++b) out.push_back(static_cast<unsigned char>(v >> (8 * b)));
  };
  for (Bits v : area) put(v);
  // Border: every element outside the hypercube region, in C order.
  for (std::size_t k = 0; k < values.size(); ++k) {
    bool border = false;
    for (int a = 0; a < dims; ++a)
      border = border || (k / grid_stride[a] % n_axis[a] >= cubes[a] * s);
    if (border) put(values[k]);
  }
  return out;
}

template std::vector<unsigned char> model_compress(const std::vector<std::uint32_t>&, int,
                                                   const std::array<std::size_t, 3>&);
template std::vector<unsigned char> model_compress(const std::vector<std::uint64_t>&, int,
                                                   const std::array<std::size_t, 3>&);

}  // namespace ndzip_test
