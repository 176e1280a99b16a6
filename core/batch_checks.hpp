// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The host's check of a batch's items before a call on a host backend
// (ndzip/batch_compressor.hpp): every pointer to memory set and aligned, then no range that the
// call writes sharing a byte with another range it reads or writes. The ranges are sorted by start
// and swept once: O(n log n) for n items at worst, where comparing every pair would take O(n^2).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "ndzip/batch_compressor.hpp"
#include "ndzip/codec_mode.hpp"
#include "ndzip/stream_size.hpp"

namespace ndzip::core {

// A byte range that a batch call reads or writes.
struct batch_range {
  enum class kind : std::uint8_t { values, stream, items, results };
  std::uintptr_t begin;
  std::uintptr_t end;
  std::size_t item;  // the item of a values or stream range
  kind of;
  bool written;  // by the call; otherwise only read
};

enum class batch_call { compression, decompression };

inline std::string name_of(batch_call call) {
  return call == batch_call::compression ? "batch compression" : "batch decompression";
}

// Throws unless `pointer`, where the call reads or writes `bytes` bytes, is set (where there
// is something to address) and aligned to `alignment`, as the kernels access it.
inline void check_item_pointer(batch_call call, std::size_t item, const char* what,
                               const void* pointer, std::uint64_t bytes, std::size_t alignment) {
  const bool null = pointer == nullptr && bytes > 0;
  if (!null && reinterpret_cast<std::uintptr_t>(pointer) % alignment == 0) return;
  const std::string where = "ndzip: " + name_of(call) + ": item " + std::to_string(item) +
                            ": the " + what + " pointer is ";
  if (null)
    throw std::invalid_argument(where + "null, but the call accesses " + std::to_string(bytes) +
                                " bytes there");
  throw std::invalid_argument(where + "not aligned to " + std::to_string(alignment) + " bytes");
}

// [begin, begin + bytes), the end saturated: a length beyond the address space (a forged
// stream_bytes) still covers everything after its start.
inline batch_range range_at(const void* begin, std::uint64_t bytes, std::size_t item,
                            batch_range::kind of, bool written) {
  const auto start = reinterpret_cast<std::uintptr_t>(begin);
  const std::uintptr_t room = std::numeric_limits<std::uintptr_t>::max() - start;
  const std::uintptr_t end =
      bytes > room ? std::numeric_limits<std::uintptr_t>::max() : start + bytes;
  return {start, end, item, of, written};
}

// "the stream of item 3 (1234 bytes)", "the items array (72 bytes)".
inline std::string describe(const batch_range& range, batch_call call) {
  const std::string bytes = " (" + std::to_string(range.end - range.begin) + " bytes)";
  switch (range.of) {
    case batch_range::kind::values:
      return "the values of item " + std::to_string(range.item) + bytes;
    case batch_range::kind::stream:
      return "the stream of item " + std::to_string(range.item) + bytes;
    case batch_range::kind::items:
      return "the items array" + bytes;
    case batch_range::kind::results:
      break;
  }
  return (call == batch_call::compression ? "the sizes array" : "the outcomes array") + bytes;
}

// The order in which the ranges are swept: by start, then the rest, so that the same pair is
// named whatever order the items came in.
inline bool starts_before(const batch_range& a, const batch_range& b) {
  return std::tie(a.begin, a.end, a.item, a.of) < std::tie(b.begin, b.end, b.item, b.of);
}

// Throws, naming the first pair found, if a written range shares a byte with any other range.
// In order of start, a range overlaps an earlier one exactly when it starts before the
// furthest end among them: one pass keeps the range reaching furthest (what a written range
// must stay clear of) and the written range reaching furthest (what a range that is only read
// must stay clear of; ranges that are only read may overlap). The ranges come in runs, split
// at `runs` (values, streams, the arrays); each is sorted unless it already is (items in
// address order) and the pass merges them: O(n) for sorted runs, O(n log n) at worst.
inline void check_ranges_disjoint(batch_call call, std::vector<batch_range>& ranges,
                                  const std::array<std::size_t, 4>& runs) {
  std::array<std::size_t, 3> next{};
  for (std::size_t r = 0; r < next.size(); ++r) {
    const auto first = ranges.begin() + runs[r], last = ranges.begin() + runs[r + 1];
    if (!std::is_sorted(first, last, starts_before)) std::sort(first, last, starts_before);
    next[r] = runs[r];
  }
  const batch_range* furthest = nullptr;
  const batch_range* furthest_written = nullptr;
  for (;;) {
    std::size_t run = next.size();  // the run whose next range starts first
    for (std::size_t r = 0; r < next.size(); ++r)
      if (next[r] < runs[r + 1] &&
          (run == next.size() || starts_before(ranges[next[r]], ranges[next[run]])))
        run = r;
    if (run == next.size()) return;
    const batch_range& range = ranges[next[run]++];
    const batch_range* const earlier = range.written ? furthest : furthest_written;
    if (earlier != nullptr && earlier->end > range.begin)
      throw std::invalid_argument("ndzip: " + name_of(call) + ": " + describe(*earlier, call) +
                                  " and " + describe(range, call) +
                                  " overlap in memory; what a batch call writes (streams when "
                                  "compressing, values when decompressing, sizes, outcomes) "
                                  "must be disjoint from everything else it reads or writes");
    if (furthest == nullptr || range.end > furthest->end) furthest = &range;
    if (range.written && (furthest_written == nullptr || range.end > furthest_written->end))
      furthest_written = &range;
  }
}

// The check of the `grids.size()` items at `items` (host memory) for `call` in `mode`, with
// `results` (`result_bytes` at the sizes, possibly null, or the outcomes) that the call writes.
// `ranges` is scratch with room for 2 * grids.size() + 2 ranges. Compression reads the values
// and writes [stream, stream + the mode's size bound) and the items (stream_bytes);
// decompression reads [stream, stream + stream_bytes) and the items and writes the values.
// Values pointers are checked first, then stream pointers (aligned as the mode's streams must
// be), then the ranges.
template <class T, int Dims>
void check_items_on_host(batch_call call, codec_mode mode, const std::vector<extent<Dims>>& grids,
                         const batch_item<T>* items, const void* results, std::size_t result_bytes,
                         std::vector<batch_range>& ranges) {
  const bool compression = call == batch_call::compression;
  const std::size_t stream_alignment = stream_alignment_of<T>(mode);
  ranges.clear();
  for (std::size_t i = 0; i < grids.size(); ++i) {
    const std::uint64_t bytes = grids[i].size() * sizeof(T);
    check_item_pointer(call, i, "values", items[i].values, bytes, sizeof(T));
    if (bytes > 0)
      ranges.push_back(
          range_at(items[i].values, bytes, i, batch_range::kind::values, !compression));
  }
  const std::size_t values_end = ranges.size();
  for (std::size_t i = 0; i < grids.size(); ++i) {
    const std::uint64_t bytes =
        compression ? compressed_size_bound<T>(grids[i], mode) : items[i].stream_bytes;
    check_item_pointer(call, i, "stream", items[i].stream, bytes, stream_alignment);
    if (bytes > 0)
      ranges.push_back(range_at(items[i].stream, bytes, i, batch_range::kind::stream, compression));
  }
  const std::size_t streams_end = ranges.size();
  ranges.push_back(range_at(items, grids.size() * sizeof(batch_item<T>), 0,
                            batch_range::kind::items, compression));
  if (results != nullptr)
    ranges.push_back(range_at(results, result_bytes, 0, batch_range::kind::results, true));
  check_ranges_disjoint(call, ranges, {0, values_end, streams_end, ranges.size()});
}

}  // namespace ndzip::core
