// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ndzip::batch_compressor: one launch for many grids of one type and rank gives, for every grid,
// the single compressor's stream, size, values and errors (the error naming the grid); calls
// reuse the batch's scratch; a call fences nothing, allocates nothing and copies nothing; host
// backends refuse misplaced items (null, misaligned, overlapping) before anything is written,
// and accept items that share only what the call reads.

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "async_support.hpp"
#include "codec_support.hpp"
#include "ndzip/batch_compressor.hpp"

using namespace ndzip_test;

namespace {

// A batch's buffers: each grid's values in a View of its own, the streams side by side in one
// arena (each at a multiple of 8 bytes, with room for its size bound), and the items pointing
// into them.
template <class T, int D, class Space>
struct batch_buffers {
  using values_view = grid_view<T, D, Kokkos::LayoutRight, Space>;
  std::vector<values_view> values;
  Kokkos::View<unsigned char*, Space> arena;
  std::vector<std::size_t> offsets;
  Kokkos::View<ndzip::batch_item<T>*, Space> items;

  // Streams of room[i] bytes; `streams` (if given) copied to their places.
  batch_buffers(const std::vector<ndzip::extent<D>>& grids, const std::vector<std::size_t>& room,
                const std::vector<std::vector<unsigned char>>& streams = {}) {
    std::size_t total = 0;
    for (std::size_t i = 0; i < grids.size(); ++i) {
      values.push_back(make_view<values_view>("values", grids[i]));
      offsets.push_back(total);
      total += (room[i] + 7) / 8 * 8;
    }
    std::vector<unsigned char> bytes(total, 0xa5);
    for (std::size_t i = 0; i < streams.size(); ++i)
      std::copy(streams[i].begin(), streams[i].end(), bytes.begin() + offsets[i]);
    arena = device_bytes<Space>(bytes);
    items = Kokkos::View<ndzip::batch_item<T>*, Space>("items", grids.size());
    auto host = Kokkos::create_mirror_view(items);
    for (std::size_t i = 0; i < grids.size(); ++i)
      host(i) = {values[i].data(), reinterpret_cast<std::byte*>(arena.data() + offsets[i]),
                 streams.empty() ? 0 : streams[i].size()};
    Kokkos::deep_copy(items, host);
  }

  std::vector<unsigned char> stream(std::size_t i, std::size_t size) const {
    return host_bytes(Kokkos::subview(arena, std::make_pair(offsets[i], offsets[i] + size)), size);
  }
};

template <class T, int D, class Exec>
std::vector<std::size_t> size_bounds(const ndzip::batch_compressor<T, D, Exec>& batch) {
  std::vector<std::size_t> bounds;
  for (std::size_t i = 0; i < batch.size(); ++i) bounds.push_back(batch.size_bound(i));
  return bounds;
}

// An input per grid, of the generator's families in turn.
template <class C, int D>
std::vector<std::vector<typename C::bits_type>> inputs_for(
    const std::vector<ndzip::extent<D>>& grids) {
  const std::vector<std::string> families = {"smooth", "checker", "random", "smooth", "const"};
  std::vector<std::vector<typename C::bits_type>> inputs;
  for (std::size_t i = 0; i < grids.size(); ++i)
    inputs.push_back(
        generate_for<C>(families[i % families.size()], C::is_double ? 24 : 8, grids[i]));
  return inputs;
}

}  // namespace

TEST_CASE_TEMPLATE("batch: streams, sizes and values are those of the single compressor", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  // Several grids with hypercubes (different extents), border only, and empty.
  std::vector<ndzip::extent<D>> grids = async_grids<D>();
  grids.push_back(cross_backend_shapes<D>().back());
  grids.push_back(grids.front());
  const std::vector<std::vector<Bits>> inputs = inputs_for<C>(grids);
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    ndzip::batch_compressor<T, D, Exec> batch(exec, grids);
    REQUIRE(batch.size() == grids.size());
    batch_buffers<T, D, space> buffers(grids, size_bounds(batch));
    // Twice: the second call reuses the scratch the first left behind.
    for (int call = 0; call < 2; ++call) {
      INFO("call " << call);
      for (std::size_t i = 0; i < grids.size(); ++i)
        Kokkos::deep_copy(buffers.values[i], Kokkos::create_mirror_view_and_copy(
                                                 space{}, host_view_of<T, D>(inputs[i], grids[i])));
      // The second call also copies the sizes into a View of their own (the items' stay).
      Kokkos::View<std::uint64_t*, space> sizes("sizes", grids.size());
      Kokkos::deep_copy(sizes, ~std::uint64_t{0});
      if (call == 0)
        batch.compress_async(buffers.items);
      else
        batch.compress_async(buffers.items, sizes);
      exec.fence();
      const auto items = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, buffers.items);
      const auto sizes_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sizes);
      for (std::size_t i = 0; i < grids.size(); ++i) {
        INFO("grid " << i << ": " << ndzip::to_string(grids[i]));
        const auto expected = model_stream<C>(inputs[i], grids[i]);
        REQUIRE(items(i).stream_bytes == expected.size());
        CHECK(sizes_host(i) == (call == 0 ? ~std::uint64_t{0} : expected.size()));
        CHECK(mismatch(buffers.stream(i, expected.size()), expected) == "");
        Kokkos::deep_copy(buffers.values[i], T{});
      }
      // The items the compression wrote, straight into a decompression (over the inputs).
      Kokkos::View<ndzip::decompress_outcome*, space> outcomes("outcomes", grids.size());
      batch.decompress_async(buffers.items, outcomes);
      exec.fence();
      const auto outcomes_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcomes);
      for (std::size_t i = 0; i < grids.size(); ++i) {
        INFO("grid " << i << ": " << ndzip::to_string(grids[i]));
        CHECK(batch.check_outcome(i, outcomes_host(i)) == items(i).stream_bytes);
        CHECK(mismatch(bits_of<Bits>(buffers.values[i]), inputs[i]) == "");
      }
    }
#if KOKKOS_VERSION >= 40000
    // The sizes in host-pinned memory, read on the host after the fence without a copy.
    Kokkos::View<std::uint64_t*, Kokkos::SharedHostPinnedSpace> pinned("pinned sizes",
                                                                       grids.size());
    batch.compress_async(buffers.items, pinned);
    exec.fence();
    for (std::size_t i = 0; i < grids.size(); ++i)
      CHECK(pinned(i) == model_stream<C>(inputs[i], grids[i]).size());
#endif
  });
}

TEST_CASE_TEMPLATE("batch: forged streams give the single compressor's errors, naming the grid", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = async_grids<D>().front();
  const std::vector<ndzip::extent<D>> grids(3, grid);
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto stream = model_stream<C>(input, grid);
  // The single compressor refuses a stream too short for its table on the host; a batch
  // reports it in the grid's outcome.
  auto forgeries = forged_streams(stream, sizeof(T));
  forgeries.emplace_back("shorter than the offset table",
                         std::vector<unsigned char>(stream.begin(), stream.begin() + 4));
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    ndzip::batch_compressor<T, D, Exec> batch(exec, grids);
    ndzip::compressor<T, D, Exec> single(exec, grid);
    for (const auto& [what, bytes] : forgeries) {
      const std::string name = what;
      INFO("forgery: " << name);
      std::string single_message;
      try {
        decompress_with(single, bytes);
      } catch (const ndzip::stream_error& e) {
        single_message = e.what();
      }
      REQUIRE(single_message.rfind("ndzip: ", 0) == 0);
      // The forged stream between two genuine ones.
      batch_buffers<T, D, space> buffers(grids, {stream.size(), stream.size(), stream.size()},
                                         {stream, bytes, stream});
      Kokkos::View<ndzip::decompress_outcome*, space> outcomes("outcomes", grids.size());
      batch.decompress_async(buffers.items, outcomes);
      exec.fence();
      const auto outcomes_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcomes);
      std::string batch_message;
      try {
        batch.check_outcome(1, outcomes_host(1));
      } catch (const ndzip::stream_error& e) {
        batch_message = e.what();
      }
      CHECK(batch_message == "ndzip: array 1: " + single_message.substr(7));
      for (std::size_t i : {0, 2}) {
        CHECK(batch.check_outcome(i, outcomes_host(i)) == stream.size());
        CHECK(mismatch(bits_of<Bits>(buffers.values[i]), input) == "");
      }
    }
    // Views that do not match the batch are refused before anything is queued.
    Kokkos::View<ndzip::batch_item<T>*, space> too_few("items", 2);
    Kokkos::View<ndzip::decompress_outcome*, space> outcomes("outcomes", 3);
    CHECK_THROWS_AS(batch.compress_async(too_few), std::invalid_argument);
    const Kokkos::View<ndzip::batch_item<T>*, space> three("items", 3);
    CHECK_THROWS_AS(batch.compress_async(three, Kokkos::View<std::uint64_t*, space>("sizes", 2)),
                    std::invalid_argument);
    CHECK_THROWS_AS(batch.decompress_async(too_few, outcomes), std::invalid_argument);
    // A batch of no grids takes empty Views and queues nothing.
    ndzip::batch_compressor<T, D, Exec> empty(exec, {});
    CHECK(empty.size() == 0);
    const Kokkos::View<ndzip::batch_item<T>*, space> no_items("none", 0);
    const Kokkos::View<ndzip::decompress_outcome*, space> no_outcomes("none", 0);
    CHECK_NOTHROW(empty.compress_async(no_items));
    CHECK_NOTHROW(empty.decompress_async(no_items, no_outcomes));
  });
}

TEST_CASE_TEMPLATE("batch: calls fence nothing, allocate nothing and copy nothing", C,
                   NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const std::vector<ndzip::extent<D>> grids = async_grids<D>();
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    ndzip::batch_compressor<T, D, Exec> batch(exec, grids);
    batch_buffers<T, D, space> buffers(grids, size_bounds(batch));
    const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grids.front());
    Kokkos::deep_copy(
        buffers.values.front(),
        Kokkos::create_mirror_view_and_copy(space{}, host_view_of<T, D>(input, grids.front())));
    Kokkos::View<ndzip::decompress_outcome*, space> outcomes("outcomes", grids.size());
    // One call of each first: the batch allocates nothing after it is made, but Kokkos' host
    // backends grow their own team scratch at a process's first launch that needs more
    // (ctest runs this case in a process of its own).
    batch.compress_async(buffers.items);
    batch.decompress_async(buffers.items, outcomes);
    exec.fence();
    const bool instance_fences_reported = [&] {
      const tool_counter counter;
      exec.fence();
      return counter.since_start().fences > 0;
    }();
    {
      // Controls: what the counters must see.
      const tool_counter counter;
      const Kokkos::View<int*, space> probe("probe", 1);
      Kokkos::deep_copy(Kokkos::create_mirror(probe), probe);
      CHECK(counter.since_start().allocations >= 1);
      CHECK(counter.since_start().deep_copies > 0);
    }
    Kokkos::View<std::uint64_t*, space> sizes("sizes", grids.size());
    tool_counts counts;
    {
      const tool_counter counter;
      batch.compress_async(buffers.items);
      batch.compress_async(buffers.items, sizes);
      batch.decompress_async(buffers.items, outcomes);
      counts = counter.since_start();
    }
    INFO("reported:" << counts.what);
    if (instance_fences_reported) CHECK(counts.fences == 0);
    CHECK(counts.allocations == 0);
    CHECK(counts.deep_copies == 0);
    exec.fence();
    const auto outcomes_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcomes);
    CHECK(batch.check_outcome(0, outcomes_host(0)) > 0);
    CHECK(mismatch(bits_of<Bits>(buffers.values.front()), input) == "");
  });
}

TEST_CASE_TEMPLATE("batch: corrupted streams reach the single compressor's outcome", C,
                   ndzip_test::f32_2d, ndzip_test::f64_3d, ndzip_test::f32_1d) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  const auto grid = async_grids<D>().front();
  const std::vector<ndzip::extent<D>> grids(3, grid);
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto stream = model_stream<C>(input, grid);
  // Seeded corruptions anywhere in the stream: a byte, a run of bytes, or a cut.
  std::uint64_t state = 0x9e3779b97f4a7c15u;
  const auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  std::vector<std::vector<unsigned char>> corrupted;
  for (int k = 0; k < 40; ++k) {
    auto s = stream;
    const std::size_t at = next() % s.size();
    if (k % 4 == 3)
      s.resize(at);
    else
      for (std::size_t j = at; j < std::min(s.size(), at + 1 + (k % 4) * 3); ++j)
        s[j] = static_cast<unsigned char>(next());
    corrupted.push_back(s);
  }
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    ndzip::batch_compressor<T, D, Exec> batch(exec, grids);
    ndzip::compressor<T, D, Exec> single(exec, grid);
    for (std::size_t k = 0; k < corrupted.size(); ++k) {
      INFO("corruption " << k);
      const auto& bytes = corrupted[k];
      std::string single_message;
      std::vector<Bits> single_values;
      std::size_t single_consumed = 0;
      try {
        single_values = decompress_with(single, bytes, &single_consumed);
      } catch (const ndzip::stream_error& e) {
        single_message = e.what();
      }
      batch_buffers<T, D, space> buffers(
          grids, {stream.size(), std::max<std::size_t>(bytes.size(), 8), stream.size()},
          {stream, bytes, stream});
      Kokkos::View<ndzip::decompress_outcome*, space> outcomes("outcomes", grids.size());
      batch.decompress_async(buffers.items, outcomes);
      exec.fence();
      const auto outcomes_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcomes);
      std::string batch_message;
      std::size_t batch_consumed = 0;
      try {
        batch_consumed = batch.check_outcome(1, outcomes_host(1));
      } catch (const ndzip::stream_error& e) {
        batch_message = e.what();
      }
      if (single_message.empty()) {
        CHECK(batch_message == "");
        CHECK(batch_consumed == single_consumed);
        CHECK(mismatch(bits_of<Bits>(buffers.values[1]), single_values) == "");
      } else {
        CHECK(batch_message == "ndzip: array 1: " + single_message.substr(7));
      }
      for (std::size_t i : {0, 2}) {
        CHECK(batch.check_outcome(i, outcomes_host(i)) == stream.size());
        CHECK(mismatch(bits_of<Bits>(buffers.values[i]), input) == "");
      }
    }
  });
}

namespace {

// The batch's calls as the misuse tests make them, with a sizes and an outcomes View each.
enum class batch_call { compression, decompression };

// Calls `call` on `items` after `edit(items)` and returns the message of the
// std::invalid_argument it throws ("" if none), checking that nothing was written: not the
// streams, the values, the items, the sizes or the outcomes.
template <class T, int D, class Exec, class Space, class Edit>
std::string refusal_of(ndzip::batch_compressor<T, D, Exec>& batch,
                       batch_buffers<T, D, Space>& buffers, batch_call call, Edit&& edit) {
  using Bits = typename ndzip::profile<T, D>::bits_type;
  using item = ndzip::batch_item<T>;
  const auto& items = buffers.items;
  edit(items);
  const std::vector<item> items_before(items.data(), items.data() + items.size());
  const std::vector<unsigned char> arena_before = host_bytes(buffers.arena, buffers.arena.size());
  std::vector<std::vector<Bits>> values_before;
  for (const auto& v : buffers.values) values_before.push_back(bits_of<Bits>(v));
  Kokkos::View<std::uint64_t*, Space> sizes("sizes", items.size());
  Kokkos::View<ndzip::decompress_outcome*, Space> outcomes("outcomes", items.size());

  std::string message;
  try {
    if (call == batch_call::compression)
      batch.compress_async(items, sizes);
    else
      batch.decompress_async(items, outcomes);
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  batch.execution_space_instance().fence();
  CHECK(mismatch(host_bytes(buffers.arena, buffers.arena.size()), arena_before) == "");
  for (std::size_t i = 0; i < buffers.values.size(); ++i) {
    CHECK(mismatch(bits_of<Bits>(buffers.values[i]), values_before[i]) == "");
    CHECK(items(i).values == items_before[i].values);
    CHECK(items(i).stream == items_before[i].stream);
    CHECK(items(i).stream_bytes == items_before[i].stream_bytes);
    CHECK(sizes(i) == 0);
    CHECK(outcomes(i).failure == 0);
  }
  return message;
}

// Every substring of `parts` in `message`.
bool says_all(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& part : parts)
    if (message.find(part) == std::string::npos) return false;
  return true;
}

}  // namespace

TEST_CASE_TEMPLATE("batch: misplaced items are refused on host backends before anything is written",
                   C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  constexpr int D = C::dims;
  const auto grid = async_grids<D>().front();
  const std::vector<ndzip::extent<D>> grids(3, grid);
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto stream = model_stream<C>(input, grid);
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    // Device backends do not read the items on the host (ndzip/batch_compressor.hpp).
    if constexpr (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
      using item = ndzip::batch_item<T>;
      using items_view = Kokkos::View<item*, space>;
      ndzip::batch_compressor<T, D, Exec> batch(exec, grids);
      batch_buffers<T, D, space> buffers(grids, size_bounds(batch), {stream, stream, stream});
      for (const auto& values : buffers.values)
        Kokkos::deep_copy(values, host_view_of<T, D>(input, grid));
      const std::vector<item> genuine(buffers.items.data(), buffers.items.data() + grids.size());
      const auto bytes_of = [](auto* p) { return reinterpret_cast<std::byte*>(p); };
      struct misplacement {
        const char* what;
        batch_call call;
        std::function<void(const items_view&)> edit;
        std::vector<std::string> message;
      };
      const auto compression = batch_call::compression;
      const auto decompression = batch_call::decompression;
      // The crashing ones last, so that the code before the check got as far as it could.
      const std::vector<misplacement> cases = {
          {"two streams in one buffer",
           compression,
           [&](const items_view& items) { items(1).stream = genuine[0].stream; },
           {"batch compression: ", "the stream of item 0 (", "the stream of item 1 (", "overlap"}},
          {"a stream running into the next",
           compression,
           [&](const items_view& items) { items(0).stream = genuine[1].stream - 8; },
           {"the stream of item 0 (", "the stream of item 1 ("}},
          {"a stream on another grid's values",
           compression,
           [&](const items_view& items) { items(1).stream = bytes_of(genuine[2].values); },
           {"the stream of item 1 (", "the values of item 2 ("}},
          {"an unaligned stream",
           compression,
           [&](const items_view& items) { items(1).stream = genuine[1].stream + 1; },
           {"item 1: the stream pointer is not aligned to " + std::to_string(sizeof(T))}},
          {"overlapping values",
           decompression,
           [&](const items_view& items) { items(1).values = genuine[0].values + 1; },
           {"batch decompression: ", "the values of item 0 (", "the values of item 1 ("}},
          {"a stream under another grid's values",
           decompression,
           [&](const items_view& items) { items(2).stream = bytes_of(genuine[1].values); },
           {"the values of item 1 (", "the stream of item 2 ("}},
          {"an unaligned stream",
           decompression,
           [&](const items_view& items) { items(0).stream = genuine[0].stream + 2; },
           {"item 0: the stream pointer is not aligned to " + std::to_string(sizeof(T))}},
          {"no values",
           compression,
           [&](const items_view& items) { items(2).values = nullptr; },
           {"item 2: the values pointer is null"}},
          {"no stream",
           compression,
           [&](const items_view& items) { items(0).stream = nullptr; },
           {"item 0: the stream pointer is null"}},
          {"no values",
           decompression,
           [&](const items_view& items) { items(1).values = nullptr; },
           {"item 1: the values pointer is null"}},
          {"no stream",
           decompression,
           [&](const items_view& items) { items(1).stream = nullptr; },
           {"item 1: the stream pointer is null"}},
          {"a stream on the items",
           compression,
           [&](const items_view& items) { items(2).stream = bytes_of(items.data()); },
           {"the items array (", "the stream of item 2 ("}},
          {"values on the items",
           decompression,
           [&](const items_view& items) { items(0).values = reinterpret_cast<T*>(items.data()); },
           {"the items array (", "the values of item 0 ("}},
      };
      for (const misplacement& m : cases) {
        const std::string what =
            std::string(m.call == compression ? "compression: " : "decompression: ") + m.what;
        INFO(what);
        const std::string message =
            refusal_of(batch, buffers, m.call, [&](const items_view& items) {
              for (std::size_t i = 0; i < genuine.size(); ++i) items(i) = genuine[i];
              m.edit(items);
            });
        INFO("message: " << message);
        CHECK(message.rfind("ndzip: ", 0) == 0);
        CHECK(says_all(message, m.message));
      }
    }
  });
}

TEST_CASE_TEMPLATE("batch: items may share what a call only reads, and touch", C,
                   ndzip_test::f32_2d, ndzip_test::f64_3d, ndzip_test::f32_1d) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  using item = ndzip::batch_item<T>;
  const auto grid = async_grids<D>().front();
  const std::vector<ndzip::extent<D>> grids = {grid, grid, async_grids<D>().back(), grid};
  const auto input = generate_for<C>("smooth", C::is_double ? 24 : 8, grid);
  const auto expected = model_stream<C>(input, grid);
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    using unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    ndzip::batch_compressor<T, D, Exec> batch(exec, grids);
    REQUIRE(batch.size_bound(2) == 0);  // the empty grid: no memory at all, null pointers
    const std::size_t bound = batch.size_bound(0);
    REQUIRE(bound % sizeof(T) == 0);
    // One arena: item 0's stream room, the values right where it ends (touching), and the
    // streams of items 1 and 3. Items 0, 1 and 3 compress the same values.
    const std::size_t words = bound / sizeof(T);
    Kokkos::View<Bits*, space> arena("arena", 3 * words + grid.size());
    std::byte* const base = reinterpret_cast<std::byte*>(arena.data());
    T* const values = reinterpret_cast<T*>(base + bound);
    std::byte* const stream_1 = base + bound + grid.size() * sizeof(T);
    Kokkos::deep_copy(Kokkos::View<T*, space, unmanaged>(values, grid.size()),
                      Kokkos::View<const T*, Kokkos::HostSpace, unmanaged>(
                          reinterpret_cast<const T*>(input.data()), input.size()));
    const auto items_of = [&](const std::vector<item>& list) {
      Kokkos::View<item*, space> items("items", list.size());
      Kokkos::deep_copy(
          items, Kokkos::View<const item*, Kokkos::HostSpace, unmanaged>(list.data(), list.size()));
      return items;
    };
    // (Item 3's stream is written in place: a variable for it drew nvcc's spurious warning 177.)
    const auto compressed = items_of({{values, base, 0},
                                      {values, stream_1, 0},
                                      {nullptr, nullptr, 0},
                                      {values, stream_1 + bound, 0}});
    batch.compress_async(compressed);
    exec.fence();
    const auto written = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, compressed);
    for (std::size_t i : {0, 1, 3}) {
      INFO("item " << i);
      REQUIRE(written(i).stream_bytes == expected.size());
      const Kokkos::View<unsigned char*, space, unmanaged> stream(
          reinterpret_cast<unsigned char*>(written(i).stream), expected.size());
      CHECK(mismatch(host_bytes(stream, expected.size()), expected) == "");
    }
    CHECK(written(2).stream_bytes == 0);

    // Item 0's stream decoded into three grids at once (and nothing into the empty one).
    std::vector<grid_view<T, D, Kokkos::LayoutRight, space>> outputs;
    for (int k = 0; k < 3; ++k)
      outputs.push_back(make_view<grid_view<T, D, Kokkos::LayoutRight, space>>("out", grid));
    const auto decompressed = items_of({{outputs[0].data(), base, expected.size()},
                                        {outputs[1].data(), base, expected.size()},
                                        {nullptr, nullptr, 0},
                                        {outputs[2].data(), base, expected.size()}});
    Kokkos::View<ndzip::decompress_outcome*, space> outcomes("outcomes", grids.size());
    batch.decompress_async(decompressed, outcomes);
    exec.fence();
    const auto outcomes_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcomes);
    for (std::size_t i = 0; i < grids.size(); ++i)
      CHECK(batch.check_outcome(i, outcomes_host(i)) == (i == 2 ? 0 : expected.size()));
    for (const auto& out : outputs) CHECK(mismatch(bits_of<Bits>(out), input) == "");
  });
}

// The high-ratio mode: every grid's stream, size and values are those of a high-ratio
// ndzip::compressor of its own, on every backend, call after call; a damaged stream fails its
// own grid only, with that compressor's message naming the grid; after the first call of each
// kind a call fences, allocates and copies nothing.
TEST_CASE_TEMPLATE("batch: the high-ratio mode gives every grid the high-ratio compressor's stream",
                   C, NDZIP_ALL_CONFIGS) {
  using T = typename C::value_type;
  using Bits = typename C::bits_type;
  constexpr int D = C::dims;
  constexpr auto high_ratio = ndzip::codec_mode::high_ratio;
  // Hypercubes and border, border only, empty; one with a border long enough for border
  // hypercubes of its own; a repeated grid.
  std::vector<ndzip::extent<D>> grids = async_grids<D>();
  if constexpr (D == 1) grids.push_back(ndzip::extent<1>(5 * 4096 + 300));
  if constexpr (D == 2) grids.push_back(ndzip::extent<2>(70, 300));
  if constexpr (D == 3) grids.push_back(ndzip::extent<3>(33, 34, 35));
  grids.push_back(grids.front());
  const std::vector<std::vector<Bits>> inputs = inputs_for<C>(grids);
  for_each_backend([&](const std::string&, auto exec) {
    using Exec = decltype(exec);
    using space = typename Exec::memory_space;
    ndzip::batch_compressor<T, D, Exec> batch(exec, grids, high_ratio);
    CHECK(batch.mode() == high_ratio);
    CHECK(batch.stream_alignment() == ndzip::high_ratio_stream_alignment);
    std::vector<ndzip::compressor<T, D, Exec>> singles;
    std::vector<std::vector<unsigned char>> expected;
    for (std::size_t i = 0; i < grids.size(); ++i) {
      singles.emplace_back(exec, grids[i], high_ratio);
      expected.push_back(compress_with(singles[i], inputs[i]));
      CHECK(batch.size_bound(i) == singles[i].size_bound());
    }
    // Grid 0 is coded, not stored: the comparison covers the coded layout.
    REQUIRE(expected[0][5] == 0);
    batch_buffers<T, D, space> buffers(grids, size_bounds(batch));
    Kokkos::View<std::uint64_t*, space> sizes("sizes", grids.size());
    Kokkos::View<ndzip::decompress_outcome*, space> outcomes("outcomes", grids.size());
    for (int call = 0; call < 2; ++call) {
      INFO("call " << call);
      for (std::size_t i = 0; i < grids.size(); ++i)
        Kokkos::deep_copy(buffers.values[i], Kokkos::create_mirror_view_and_copy(
                                                 space{}, host_view_of<T, D>(inputs[i], grids[i])));
      tool_counts counts;
      {
        const tool_counter counter;
        batch.compress_async(buffers.items, sizes);
        counts = counter.since_start();
      }
      exec.fence();
      const auto items = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, buffers.items);
      const auto sizes_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sizes);
      for (std::size_t i = 0; i < grids.size(); ++i) {
        INFO("grid " << i << ": " << ndzip::to_string(grids[i]));
        REQUIRE(items(i).stream_bytes == expected[i].size());
        CHECK(sizes_host(i) == expected[i].size());
        CHECK(mismatch(buffers.stream(i, expected[i].size()), expected[i]) == "");
        Kokkos::deep_copy(buffers.values[i], T{});
      }
      {
        const tool_counter counter;
        batch.decompress_async(buffers.items, outcomes);
        if (call == 1) counts = counter.since_start();
      }
      exec.fence();
      INFO("reported:" << counts.what);
      CHECK(counts.allocations == 0);
      CHECK(counts.deep_copies == 0);
      const auto outcomes_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, outcomes);
      for (std::size_t i = 0; i < grids.size(); ++i) {
        INFO("grid " << i << ": " << ndzip::to_string(grids[i]));
        CHECK(batch.check_outcome(i, outcomes_host(i)) == expected[i].size());
        CHECK(mismatch(bits_of<Bits>(buffers.values[i]), inputs[i]) == "");
      }
    }

    // Grid 0's stream damaged, between genuine ones: its outcome says what the single
    // compressor throws, the others decode.
    const std::vector<unsigned char>& stream = expected[0];
    std::vector<std::pair<std::string, std::vector<unsigned char>>> damaged = {
        {"shorter than its header", {stream.begin(), stream.begin() + 8}},
        {"cut short by a byte", {stream.begin(), stream.end() - 1}},
        {"another magic", stream},
        {"a byte of its coded area changed", stream}};
    damaged[2].second[1] ^= 0x20;
    damaged[3].second[stream.size() / 2] ^= 0x5a;
    const std::vector<ndzip::extent<D>> three(3, grids[0]);
    ndzip::batch_compressor<T, D, Exec> trio(exec, three, high_ratio);
    for (const auto& damage : damaged) {
      // (Named, not bound: nvcc's C++17 cannot capture structured bindings.)
      const std::string& what = damage.first;
      const std::vector<unsigned char>& bytes = damage.second;
      INFO("damage: " << what);
      std::string single_message = "decoded";
      std::vector<Bits> single_values;
      try {
        single_values = decompress_with(singles[0], bytes);
      } catch (const ndzip::stream_error& e) {
        single_message = e.what();
      }
      batch_buffers<T, D, space> damaged_buffers(
          three, {stream.size(), bytes.size(), stream.size()}, {stream, bytes, stream});
      Kokkos::View<ndzip::decompress_outcome*, space> trio_outcomes("outcomes", three.size());
      trio.decompress_async(damaged_buffers.items, trio_outcomes);
      exec.fence();
      const auto outcomes_host =
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, trio_outcomes);
      std::string batch_message = "decoded";
      try {
        trio.check_outcome(1, outcomes_host(1));
      } catch (const ndzip::stream_error& e) {
        batch_message = e.what();
      }
      if (single_message == "decoded") {
        CHECK(batch_message == "decoded");
        CHECK(mismatch(bits_of<Bits>(damaged_buffers.values[1]), single_values) == "");
      } else if (bytes.size() < ndzip::high_ratio_smallest_stream_bytes<T>(grids[0])) {
        // The single compressor refuses it on the host from its length alone, as in the default
        // mode; the batch's kernels find its header short.
        CHECK(single_message.find("8 bytes is shorter than the smallest stream of a") !=
              std::string::npos);
        CHECK(batch_message ==
              "ndzip: array 1: the high-ratio stream holds 8 bytes, fewer than its 16-byte "
              "header");
      } else {
        CHECK(batch_message == "ndzip: array 1: " + single_message.substr(7));
      }
      if (what != "a byte of its coded area changed") CHECK(batch_message != "decoded");
      for (std::size_t i : {0, 2}) {
        CHECK(trio.check_outcome(i, outcomes_host(i)) == stream.size());
        CHECK(mismatch(bits_of<Bits>(damaged_buffers.values[i]), inputs[0]) == "");
      }
    }

    if constexpr (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
      // An empty stream, null with no bytes (which the item checks allow): its outcome says so,
      // and no kernel forms a pointer from it (UBSan caught the stored form's copy doing that).
      batch_buffers<T, D, space> empty_stream(three, {stream.size(), 0, stream.size()},
                                              {stream, {}, stream});
      empty_stream.items(1).stream = nullptr;
      Kokkos::View<ndzip::decompress_outcome*, space> empty_outcomes("outcomes", three.size());
      trio.decompress_async(empty_stream.items, empty_outcomes);
      exec.fence();
      std::string message;
      try {
        trio.check_outcome(1, empty_outcomes(1));
      } catch (const ndzip::stream_error& e) {
        message = e.what();
      }
      CHECK(message ==
            "ndzip: array 1: the high-ratio stream holds 0 bytes, fewer than its "
            "16-byte header");
      for (std::size_t i : {0, 2})
        CHECK(mismatch(bits_of<Bits>(empty_stream.values[i]), inputs[0]) == "");
    }
    if constexpr (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
      // Host backends refuse a stream that is not aligned to 8 bytes before queuing anything.
      buffers.items(1).stream += 4;
      std::string message;
      try {
        batch.compress_async(buffers.items);
      } catch (const std::invalid_argument& e) {
        message = e.what();
      }
      CHECK(message.find("item 1: the stream pointer is not aligned to 8 bytes") !=
            std::string::npos);
    }

    // A batch of no grids takes empty Views and queues nothing.
    ndzip::batch_compressor<T, D, Exec> empty(exec, {}, high_ratio);
    const Kokkos::View<ndzip::batch_item<T>*, space> no_items("none", 0);
    const Kokkos::View<ndzip::decompress_outcome*, space> no_outcomes("none", 0);
    CHECK_NOTHROW(empty.compress_async(no_items));
    CHECK_NOTHROW(empty.decompress_async(no_items, no_outcomes));
    using batch_type = ndzip::batch_compressor<T, D, Exec>;
    CHECK_THROWS_AS(batch_type(exec, grids, ndzip::codec_mode{7}), std::invalid_argument);
  });
}
