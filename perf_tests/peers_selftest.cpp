// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip-peers-selftest: round-trips generated float and double 1-, 2- and 3-D arrays through every
// peer codec this build has (available_peers) and checks that the result is bit-identical.
// Data: a smooth field, random bits (NaNs, infinities, subnormals included) and zeros; shapes
// include extents that are multiples of nothing (primes). Codecs that model dimensions must do
// better with the true extents than with them reversed. Peers whose decoder is bounded by the
// stream size (zstd, LZ4, Blosc) must also reject a truncated stream. Prints one line per peer,
// then "N passed, N failed"; exits non-zero on any failure.

#include "peers.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using ndzip::perf::peer_codec;
using ndzip::perf::peer_input;

struct shape {
  std::vector<std::size_t> extents;  // slowest first

  std::size_t count() const {
    std::size_t n = 1;
    for (auto e : extents) n *= e;
    return n;
  }
  std::string str() const {
    std::string s;
    for (auto e : extents) s += (s.empty() ? "" : "x") + std::to_string(e);
    return s;
  }
};

enum class pattern { smooth, random_bits, zeros };

const char* pattern_name(pattern p) {
  switch (p) {
    case pattern::smooth: return "smooth";
    case pattern::random_bits: return "random-bits";
    default: return "zeros";
  }
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <typename T>
std::vector<T> generate(const shape& s, pattern p, std::uint64_t seed) {
  std::vector<T> v(s.count());
  if (p == pattern::random_bits) {
    std::uint64_t state = seed;
    for (auto& x : v) {
      const std::uint64_t bits = splitmix64(state);
      std::memcpy(&x, &bits, sizeof(T));
    }
  } else if (p == pattern::smooth) {
    // Coordinates of each element, fastest last, padded to 3-D.
    std::size_t ext[3] = {1, 1, 1};
    const std::size_t rank = s.extents.size();
    for (std::size_t d = 0; d < rank; ++d) ext[3 - rank + d] = s.extents[d];
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double x = static_cast<double>(i % ext[2]);
      const double y = static_cast<double>(i / ext[2] % ext[1]);
      const double z = static_cast<double>(i / (ext[2] * ext[1]));
      v[i] = static_cast<T>(100.0 * std::sin(0.05 * x + 0.3) * std::cos(0.07 * y) + 0.5 * z +
                            1e-3 * x * y);
    }
  }
  return v;
}

struct counters {
  int passed = 0;
  int failed = 0;
};

void report_failure(counters& c, const std::string& what) {
  ++c.failed;
  std::printf("  FAIL %s\n", what.c_str());
}

template <typename T>
void round_trip(const peer_codec& peer, const shape& s, pattern p, counters& c, double& in_bytes,
                double& out_bytes) {
  const auto data = generate<T>(s, p, 0x5eed0000u + s.count() * 7 + static_cast<unsigned>(p));
  const peer_input in{data.data(), data.size() * sizeof(T), sizeof(T) == sizeof(double), s.extents};
  const std::string what =
      peer.name() + " " + (in.is_double ? "double " : "float ") + s.str() + " " + pattern_name(p);
  try {
    std::vector<std::byte> stream;
    peer.compress(in, stream);
    if (stream.empty()) return report_failure(c, what + ": empty stream");
    std::vector<std::byte> out(in.bytes, std::byte{0xa5});
    peer.decompress(in, stream, out.data());
    if (std::memcmp(out.data(), data.data(), in.bytes) != 0) {
      return report_failure(c, what + ": round trip is not bit-exact");
    }
    in_bytes += static_cast<double>(in.bytes);
    out_bytes += static_cast<double>(stream.size());
    ++c.passed;
  } catch (const std::exception& e) {
    report_failure(c, what + ": " + e.what());
  }
}

// A decoder that knows the stream size must notice that the stream was cut short.
void truncated_is_rejected(const peer_codec& peer, counters& c) {
  const shape s{{4099}};
  const auto data = generate<float>(s, pattern::smooth, 1);
  const peer_input in{data.data(), data.size() * sizeof(float), false, s.extents};
  const std::string what = peer.name() + " truncated stream";
  try {
    std::vector<std::byte> stream;
    peer.compress(in, stream);
    stream.resize(stream.size() / 2);
    std::vector<std::byte> out(in.bytes);
    try {
      peer.decompress(in, stream, out.data());
    } catch (const std::runtime_error&) {
      ++c.passed;
      return;
    }
    report_failure(c, what + ": accepted");
  } catch (const std::exception& e) {
    report_failure(c, what + ": " + e.what());
  }
}

// Data random along the fastest axis and smooth along the others compresses better for a codec
// that models dimensions when it sees the true extents than when it sees them reversed; for a byte
// codec the two are the same. Catches extents passed to a library in the wrong order.
template <typename T>
void extents_order_matters(const peer_codec& peer, const shape& s, counters& c) {
  std::vector<T> data(s.count());
  const std::size_t fastest = s.extents.back();
  std::uint64_t state = 42;
  std::vector<double> row(fastest);
  for (auto& r : row) r = static_cast<double>(splitmix64(state) >> 11) * 0x1p-53 * 1000.0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<T>(row[i % fastest] + 1e-3 * static_cast<double>(i / fastest));
  }
  const std::string what = peer.name() + " " + (sizeof(T) == sizeof(double) ? "double " : "float ") +
                           s.str() + " extents order";
  try {
    std::size_t sizes[2] = {};
    for (int reversed = 0; reversed < 2; ++reversed) {
      peer_input in{data.data(), data.size() * sizeof(T), sizeof(T) == sizeof(double), s.extents};
      if (reversed) in.extents.assign(s.extents.rbegin(), s.extents.rend());
      std::vector<std::byte> stream;
      peer.compress(in, stream);
      std::vector<T> out(data.size());
      peer.decompress(in, stream, out.data());
      if (std::memcmp(out.data(), data.data(), in.bytes) != 0) {
        return report_failure(c, what + ": round trip is not bit-exact");
      }
      sizes[reversed] = stream.size();
    }
    if (sizes[0] > sizes[1]) {
      return report_failure(c, what + ": " + std::to_string(sizes[0]) + " bytes with the true extents, " +
                                   std::to_string(sizes[1]) + " with them reversed");
    }
    ++c.passed;
  } catch (const std::exception& e) {
    report_failure(c, what + ": " + e.what());
  }
}

bool has_bounded_decoder(const std::string& name) {
  return name.rfind("zstd", 0) == 0 || name.rfind("lz4", 0) == 0 || name.rfind("blosc", 0) == 0;
}

}  // namespace

int main() {
  std::vector<std::string> skipped;
  const auto peers = ndzip::perf::available_peers(skipped);
  for (const auto& line : skipped) std::printf("skipped: %s\n", line.c_str());
  if (peers.empty()) std::printf("no peers in this build\n");

  const std::vector<shape> shapes{{{1}},        {{4099}},       {{65536}},     {{67, 131}},
                                  {{256, 256}}, {{13, 17, 19}}, {{32, 32, 32}}};
  const pattern patterns[] = {pattern::smooth, pattern::random_bits, pattern::zeros};

  counters total;
  for (const auto& peer : peers) {
    counters c;
    double in_bytes[3] = {}, out_bytes[3] = {};  // per pattern
    for (const auto& s : shapes) {
      for (auto p : patterns) {
        const auto k = static_cast<std::size_t>(p);
        round_trip<float>(*peer, s, p, c, in_bytes[k], out_bytes[k]);
        round_trip<double>(*peer, s, p, c, in_bytes[k], out_bytes[k]);
      }
    }
    for (const auto& s : {shape{{64, 2048}}, shape{{16, 16, 1024}}}) {
      extents_order_matters<float>(*peer, s, c);
      extents_order_matters<double>(*peer, s, c);
    }
    if (has_bounded_decoder(peer->name())) truncated_is_rejected(*peer, c);
    std::printf("%-22s %3d passed, %d failed; ratio smooth %.3f, random-bits %.3f, zeros %.4f\n",
                peer->name().c_str(), c.passed, c.failed, out_bytes[0] / in_bytes[0],
                out_bytes[1] / in_bytes[1], out_bytes[2] / in_bytes[2]);
    total.passed += c.passed;
    total.failed += c.failed;
  }
  std::printf("%d passed, %d failed\n", total.passed, total.failed);
  return total.failed == 0 ? 0 : 1;
}
