// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The definitions follow ../shared/vectors/README.md ("How the inputs were generated"). The smooth
// field must be evaluated in binary64 in exactly the stated order, so this file is compiled
// without floating-point contraction (see CMakeLists.txt).

#include "vector_generator.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace ndzip_test {

std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t k) {
  std::uint64_t z = seed + (k + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {

const char* const known_families[] = {"smooth", "checker", "const",    "zeros",   "negzeros",
                                      "random", "nan",     "denormal", "specials"};

bool has_noise(const std::string& family) { return family == "smooth" || family == "checker"; }

std::size_t parse_number(const std::string& text, const std::string& name) {
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument("vector name '" + name + "': bad number '" + text + "'");
  return static_cast<std::size_t>(std::stoull(text));
}

// The smooth field g at grid index idx (binary64, operation order as specified).
double smooth_field(const vector_spec& spec, const std::size_t (&idx)[3]) {
  double q = 0.0;
  double r2 = 0.0;
  for (int j = 0; j < spec.dims; ++j) {
    const double u = static_cast<double>(idx[j]) / static_cast<double>(spec.extents[j]);
    q = q + static_cast<double>(j + 1) * u;
    const double d = u - 0.3;
    r2 = r2 + d * d;
  }
  const double a = 3.0 * q;
  const double b = (2.0 * q) * q;
  const double c = 1.0 / (0.05 + r2);
  return ((a - b) + c) - 4.0;
}

template <class Bits>
std::vector<Bits> generate(const vector_spec& spec) {
  constexpr bool is_double = std::is_same_v<Bits, std::uint64_t>;
  using Float = std::conditional_t<is_double, double, float>;
  if (spec.is_double != is_double)
    throw std::invalid_argument("vector " + spec.name() + ": wrong element width requested");
  constexpr int w = sizeof(Bits) * 8;
  constexpr int m = is_double ? 52 : 23;
  constexpr Bits sign = Bits{1} << (w - 1);
  constexpr Bits mant = (Bits{1} << m) - 1;
  constexpr Bits exp = ~(sign | mant);

  auto bits_of = [](Float f) {
    Bits b;
    std::memcpy(&b, &f, sizeof b);
    return b;
  };
  auto field_bits = [&](double g) { return bits_of(static_cast<Float>(g)); };

  const std::string& family = spec.family;
  const std::uint64_t noise_mask =
      spec.noise_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << spec.noise_bits) - 1;
  const Bits const_bits = bits_of(static_cast<Float>(-1234.5678));

  std::vector<Bits> out(spec.size());
  std::size_t idx[3] = {0, 0, 0};
  for (std::size_t k = 0; k < out.size(); ++k) {
    // Grid index of element k (row-major, last axis fastest).
    std::size_t rest = k;
    for (int j = spec.dims - 1; j >= 0; --j) {
      idx[j] = rest % spec.extents[j];
      rest /= spec.extents[j];
    }
    Bits v = 0;
    if (family == "smooth" || family == "checker") {
      v = field_bits(smooth_field(spec, idx)) ^
          static_cast<Bits>(splitmix64(vector_seed, k) & noise_mask);
      if (family == "checker" && (idx[0] + idx[1] + idx[2]) % 2 == 1) v ^= sign;
    } else if (family == "const") {
      v = const_bits;
    } else if (family == "zeros") {
      v = 0;
    } else if (family == "negzeros") {
      v = sign;
    } else if (family == "random") {
      v = static_cast<Bits>(splitmix64(vector_seed + 3, k));
    } else if (family == "nan") {
      const std::uint64_t p = splitmix64(vector_seed + 2, k);
      Bits mantissa = static_cast<Bits>(p) & mant;
      if (mantissa == 0) mantissa = 1;
      v = ((p >> 63) ? sign : Bits{0}) | exp | mantissa;
    } else if (family == "denormal") {
      const double g = smooth_field(spec, idx);
      const double scaled = std::floor(std::fabs(g) * std::ldexp(1.0, m - 7));
      v = static_cast<Bits>(static_cast<std::uint64_t>(scaled)) & mant;
      if (g < 0) v |= sign;
    } else if (family == "specials") {
      const unsigned sel = static_cast<unsigned>(splitmix64(vector_seed + 1, k) % 16);
      const std::uint64_t p = splitmix64(vector_seed + 2, k);
      const Bits s = (p >> 63) ? sign : Bits{0};
      const Bits pm = static_cast<Bits>(p) & mant;
      const Bits quiet = Bits{1} << (m - 1);
      switch (sel) {
        case 0:
          v = 0;
          break;
        case 1:
          v = sign;
          break;
        case 2:
          v = exp;
          break;
        case 3:
          v = sign | exp;
          break;
        case 4:
          v = s | exp | pm | quiet;
          break;
        case 5:
          v = s | exp | (pm & (quiet - 1)) | 1;
          break;
        case 6:
          v = 1;
          break;
        case 7:
          v = sign | mant;
          break;
        case 8:
          v = s | pm;
          break;
        case 9:
          v = exp - 1;
          break;
        case 10:
          v = sign | (Bits{1} << m);
          break;
        default:
          v = field_bits(smooth_field(spec, idx));
          break;
      }
    } else {
      throw std::invalid_argument("unknown vector family '" + family + "'");
    }
    out[k] = v;
  }
  return out;
}

}  // namespace

std::string vector_spec::name() const {
  std::string n = family;
  if (has_noise(family)) n += "-b" + std::to_string(noise_bits);
  n += is_double ? "_f64_" : "_f32_";
  n += std::to_string(dims) + "d_";
  for (int j = 0; j < dims; ++j) {
    if (j) n += 'x';  // appended piece by piece: see ndzip::to_string
    n += std::to_string(extents[j]);
  }
  return n;
}

vector_spec parse_vector_name(const std::string& name) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("vector name '" + name + "': " + why);
  };
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t pos = name.find('_', start);
    parts.push_back(name.substr(start, pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  if (parts.size() != 4) fail("expected FAMILY_TYPE_Dd_EXTENTS");

  vector_spec spec;
  const std::string& family_part = parts[0];
  const std::size_t dash = family_part.find("-b");
  spec.family = family_part.substr(0, dash);
  bool known = false;
  for (const char* f : known_families) known = known || spec.family == f;
  if (!known) fail("unknown family '" + spec.family + "'");
  if (has_noise(spec.family)) {
    if (dash == std::string::npos) fail("family '" + spec.family + "' needs -bB");
    const std::size_t b = parse_number(family_part.substr(dash + 2), name);
    if (b > 64) fail("too many noise bits");
    spec.noise_bits = static_cast<int>(b);
  } else if (dash != std::string::npos) {
    fail("family '" + spec.family + "' takes no -bB");
  }

  if (parts[1] == "f32")
    spec.is_double = false;
  else if (parts[1] == "f64")
    spec.is_double = true;
  else
    fail("type must be f32 or f64");
  if (has_noise(spec.family) && spec.noise_bits > static_cast<int>(spec.word_bytes() * 8))
    fail("more noise bits than the word has");

  if (parts[2].size() != 2 || parts[2][1] != 'd' || parts[2][0] < '1' || parts[2][0] > '3')
    fail("dimensionality must be 1d, 2d or 3d");
  spec.dims = parts[2][0] - '0';

  std::vector<std::size_t> extents;
  start = 0;
  for (;;) {
    const std::size_t pos = parts[3].find('x', start);
    extents.push_back(parse_number(parts[3].substr(start, pos - start), name));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  if (static_cast<int>(extents.size()) != spec.dims) fail("extent count differs from Dd");
  for (int j = 0; j < spec.dims; ++j) spec.extents[j] = extents[j];
  return spec;
}

std::vector<std::uint32_t> generate_bits32(const vector_spec& spec) {
  return generate<std::uint32_t>(spec);
}

std::vector<std::uint64_t> generate_bits64(const vector_spec& spec) {
  return generate<std::uint64_t>(spec);
}

std::vector<unsigned char> generate_bytes(const vector_spec& spec) {
  std::vector<unsigned char> bytes;
  auto append = [&](const auto& words) {
    const std::size_t u = sizeof(words[0]);
    bytes.resize(words.size() * u);
    for (std::size_t i = 0; i < words.size(); ++i)
      for (std::size_t b = 0; b < u; ++b)
        bytes[i * u + b] = static_cast<unsigned char>(words[i] >> (8 * b));
  };
  if (spec.is_double)
    append(generate_bits64(spec));
  else
    append(generate_bits32(spec));
  return bytes;
}

}  // namespace ndzip_test
