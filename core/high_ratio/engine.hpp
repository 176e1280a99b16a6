// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The high-ratio mode's engine (core/engine.hpp): the high-ratio stream's encoder and decoder
// (docs/FORMAT.md, "The high-ratio stream") for a list of grids: one for a compressor in that mode,
// many for a batch_compressor. Every step is one kernel for all grids, queued on the instance, so
// that both directions run without waiting for the host (the synchronous calls are the asynchronous
// ones, a fence and a read of the result); the grids' plans and the call's items are in the
// execution space's memory (core/high_ratio/grids.hpp).
// Compression: the grids' ndzip streams and their borders' 1-D ndzip streams are made by two batch
// engines of the default mode (core/ndzip_engine.hpp); a kernel writes every block's gray form into
// a slot of its own and counts its bytes per grid and code table, a team per table builds the
// codes, a kernel sizes every code stream, a scan places the blocks, a thread per grid decides its
// layout (coded, or the ndzip stream stored), and kernels write the headers, the blocks and the
// borders' tails (core/high_ratio/encode_kernels.hpp, code_kernels.hpp, stream_kernels.hpp).
// Decompression: a thread per grid reads its header, a team per table checks the code tables and
// fills the decoder's, a kernel decodes every code stream into the gray blocks (on the host a
// thread per block, on a device a thread per stream), one turns them back into ndzip blocks, a scan
// places those into the ndzip streams, and the two batch engines decode them (the border streams
// into the main streams' borders); a thread per grid gathers what every step found into its outcome
// (core/high_ratio/decode_kernels.hpp).

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

#include "backends/lane_ops.hpp"
#include "core/call_guard.hpp"
#include "core/high_ratio/block_coding.hpp"
#include "core/high_ratio/code_kernels.hpp"
#include "core/high_ratio/decode_kernels.hpp"
#include "core/high_ratio/encode_kernels.hpp"
#include "core/high_ratio/grids.hpp"
#include "core/high_ratio/huffman.hpp"
#include "core/high_ratio/stream_kernels.hpp"
#include "core/stream_status.hpp"
#include "core/engine.hpp"
#include "core/ndzip_engine.hpp"
#include "ndzip/error.hpp"
#include "ndzip/stream_size.hpp"

namespace ndzip::core::high_ratio {

// The kernels' schedule: a device's (a thread per chunk, per code stream) or a host thread's (a
// thread per block); both write and read the same stream.
template <class ExecSpace>
inline constexpr bool device_schedule =
    !Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

template <class T, int Dims, class ExecSpace, bool DeviceSchedule = device_schedule<ExecSpace>,
          class LaneOps = void>
struct engine final : public core::engine<T, Dims, ExecSpace> {
  using base = core::engine<T, Dims, ExecSpace>;
  using base::m_exec;
  using base::m_grids;
  // The lane groups of the device schedule's gray steps: the execution space's, or emulated
  // ones (backends/emulated) where a test runs that schedule on the host; void on the host's.
  using lane_ops = std::conditional_t<
      !DeviceSchedule, void,
      std::conditional_t<std::is_void_v<LaneOps>, backend::lane_ops_for_t<ExecSpace>, LaneOps>>;
  static_assert(!DeviceSchedule || !std::is_void_v<LaneOps> || device_schedule<ExecSpace>,
                "the device schedule on a host space runs with emulated lane groups");
  using bits_type = typename profile<T, Dims>::bits_type;
  using memory_space = typename ExecSpace::memory_space;
  using plan_type = grid_plan<T, Dims>;
  using item_type = batch_item<T>;
  static constexpr int chunks = profile<T, Dims>::chunks_per_hypercube;
  static constexpr int slot_words = profile<T, Dims>::max_block_words;
  static constexpr int tables = table_count<bits_type>;
  static constexpr std::size_t word = sizeof(T);
  using bytes_view = Kokkos::View<std::byte*, memory_space>;
  template <class V>
  using view = Kokkos::View<V*, memory_space>;
  using per_grid = Kokkos::RangePolicy<ExecSpace>;

  std::vector<plan_type> host_plans;  // their pointers into the scratch below
  std::size_t blocks = 0;             // of all grids
  std::size_t most_main_room = 0, most_border = 0, most_tail_bytes = 0;
  // The grids' ndzip streams, and their borders' (grids with a border only).
  ndzip_engine<T, Dims, ExecSpace> main_codec;
  std::optional<ndzip_engine<T, 1, ExecSpace>> border_codec;
  bytes_view main_scratch, border_scratch;
  view<bits_type> border_values;
  view<plan_type> plans;
  view<std::uint32_t> block_grid;
  view<pipeline_state> states;
  view<item_type> main_items, border_items, own_item;
  view<decompress_outcome> main_outcomes, border_outcomes;
  // Every block's gray form, and (decoding) its ndzip form, a worst-case block apart.
  view<bits_type> gray_slots, slots;
  view<std::uint64_t> words, sizes, ends, stream_bytes;
  // Every block's units' bits per code stream, kept from sizing the blocks for writing them: on
  // devices for double only (H100, same call: double 256^3 compression 95.9 -> 99.6 GB/s,
  // double 2^27 137.9 -> 146.0; float fields 3-4 % slower: the kept bits are a quarter of a
  // float block's bytes, a sixteenth of a double one's). Empty otherwise: the writer counts
  // them again.
  static constexpr bool keep_unit_bits = DeviceSchedule && sizeof(T) == 8;
  view<packed_stream_bits> unit_bits;
  view<stream_state> stream_states;
  // Per grid and code table.
  view<std::uint64_t> counts;
  view<std::uint32_t> encoder;
  bytes_view serialized;
  view<std::uint64_t> serialized_sizes;
  view<std::uint16_t> decoder;
  typename Kokkos::View<pipeline_state, memory_space>::HostMirror host_state;
  // Where the synchronous decompression has its outcome written.
  view<decompress_outcome> outcome;
  typename view<decompress_outcome>::HostMirror host_outcome;

  // For one grid, and for a batch.
  engine(const ExecSpace& e, const extent<Dims>& grid)
      : engine(e, std::vector<extent<Dims>>{grid}, false) {}
  engine(const ExecSpace& e, const std::vector<extent<Dims>>& g) : engine(e, g, true) {}

 private:
  engine(const ExecSpace& e, const std::vector<extent<Dims>>& g, bool batch)
      : base(e, g, codec_mode::high_ratio, batch), main_codec(e, g) {
    std::vector<extent<1>> borders;
    std::size_t main_bytes = 0, border_bytes = 0, border_elements = 0;
    for (const extent<Dims>& grid : m_grids) {
      plan_type plan;
      plan.layout = stream_layout<T, Dims>(grid);
      plan.first_block = blocks;
      plan.main_blocks = plan.layout.hypercube_count;
      plan.border = plan.layout.border_size;
      plan.border_blocks = plan.border / 4096;
      plan.tail_bytes = plan.border % 4096 * word;
      plan.border_header = (4 * plan.border_blocks + word - 1) / word * word;
      plan.bound = high_ratio_size_bound<T>(grid);
      plan.main_room = padded_to_8(compressed_size_bound<T>(grid));
      plan.border_item = plan.border > 0 ? static_cast<std::int64_t>(borders.size()) : -1;
      plan.border_room = 0;
      if (plan.border > 0) {
        borders.push_back(extent<1>{plan.border});
        plan.border_room = padded_to_8(compressed_size_bound<T>(borders.back()));
      }
      // Pointers into the scratch once it exists.
      plan.main = nullptr;
      plan.border_stream = nullptr;
      plan.border_values = nullptr;
      main_bytes += plan.main_room;
      border_bytes += plan.border_room;
      border_elements += plan.border;
      blocks += plan.blocks();
      most_main_room = std::max<std::size_t>(most_main_room, plan.main_room);
      most_border = std::max<std::size_t>(most_border, plan.border);
      most_tail_bytes = std::max<std::size_t>(most_tail_bytes, plan.tail_bytes);
      host_plans.push_back(plan);
    }
    if (!borders.empty()) border_codec.emplace(e, borders);
    // After the compressors, which take the library's lock themselves.
    const call_guard<ExecSpace> guard(nullptr);
    using Kokkos::view_alloc;
    using Kokkos::WithoutInitializing;
    const std::size_t count = m_grids.size();
    main_scratch =
        bytes_view(view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::main"), main_bytes);
    border_scratch = bytes_view(
        view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::border"), border_bytes);
    border_values = decltype(border_values)(
        view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::border_values"),
        border_elements);
    std::size_t main_at = 0, border_at = 0, values_at = 0;
    std::vector<std::uint32_t> host_block_grid(blocks);
    for (std::size_t k = 0; k < count; ++k) {
      plan_type& plan = host_plans[k];
      plan.main = main_scratch.data() + main_at;
      main_at += plan.main_room;
      if (plan.border > 0) {
        plan.border_stream = border_scratch.data() + border_at;
        plan.border_values = border_values.data() + values_at;
        border_at += plan.border_room;
        values_at += plan.border;
      }
      for (std::uint64_t b = 0; b < plan.blocks(); ++b)
        host_block_grid[plan.first_block + b] = static_cast<std::uint32_t>(k);
    }
    plans =
        decltype(plans)(view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::plans"), count);
    block_grid = decltype(block_grid)(
        view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::block_grid"), blocks);
    Kokkos::deep_copy(
        m_exec, plans,
        Kokkos::View<const plan_type*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
            host_plans.data(), count));
    Kokkos::deep_copy(
        m_exec, block_grid,
        Kokkos::View<const std::uint32_t*, Kokkos::HostSpace,
                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>(host_block_grid.data(), blocks));
    states = decltype(states)(view_alloc(m_exec, "ndzip::high_ratio::states"), count);
    main_items = decltype(main_items)(view_alloc(m_exec, "ndzip::high_ratio::main_items"), count);
    border_items = decltype(border_items)(view_alloc(m_exec, "ndzip::high_ratio::border_items"),
                                          borders.size());
    own_item = decltype(own_item)(view_alloc(m_exec, "ndzip::high_ratio::own_item"), 1);
    main_outcomes =
        decltype(main_outcomes)(view_alloc(m_exec, "ndzip::high_ratio::main_outcomes"), count);
    border_outcomes = decltype(border_outcomes)(
        view_alloc(m_exec, "ndzip::high_ratio::border_outcomes"), borders.size());
    gray_slots = decltype(gray_slots)(
        view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::gray_slots"),
        blocks * slot_words);
    words = decltype(words)(view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::words"),
                            blocks);
    stream_bytes = decltype(stream_bytes)(
        view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::stream_bytes"),
        blocks * streams_per_block);
    sizes = decltype(sizes)(view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::sizes"),
                            blocks);
    if constexpr (keep_unit_bits)
      unit_bits = decltype(unit_bits)(
          view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::unit_bits"),
          blocks * 2 * chunks);
    ends =
        decltype(ends)(view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::ends"), blocks);
    counts = decltype(counts)(view_alloc(m_exec, "ndzip::high_ratio::counts"),
                              count * tables * alphabet);
    encoder = decltype(encoder)(view_alloc(m_exec, "ndzip::high_ratio::encoder"),
                                count * tables * alphabet);
    serialized = bytes_view(view_alloc(m_exec, "ndzip::high_ratio::serialized"),
                            count * tables * serialized_code_bytes);
    serialized_sizes = decltype(serialized_sizes)(
        view_alloc(m_exec, "ndzip::high_ratio::serialized_sizes"), count * tables);
    host_state = Kokkos::create_mirror_view(Kokkos::subview(states, 0));
    outcome = decltype(outcome)(view_alloc(m_exec, "ndzip::high_ratio::outcome"), 1);
    host_outcome = Kokkos::create_mirror_view(outcome);
    // The host copies of the plans and the block grids must outlive the queued copies.
    m_exec.fence();
  }

  // The steps below are public: nvcc refuses an extended lambda in a private member function.
  // Callers use the interface's calls (core/engine.hpp), which check before a step runs.
 public:

  // What every kernel of a call sees.
  pipeline<T, Dims> pipeline_for(item_type* items, std::uint64_t* result_sizes,
                                 decompress_outcome* outcomes, bool capacity_in_items) const {
    return {plans.data(),
            m_grids.size(),
            block_grid.data(),
            states.data(),
            main_items.data(),
            border_items.data(),
            main_outcomes.data(),
            border_outcomes.data(),
            items,
            result_sizes,
            outcomes,
            capacity_in_items};
  }

  // One grid's call: its item into own_item, on the instance.
  item_type* stage(const T* values, const std::byte* stream, std::size_t bytes) {
    const call_guard<ExecSpace> guard(nullptr);
    const auto item = own_item;
    auto* const v = const_cast<T*>(values);
    auto* const s = const_cast<std::byte*>(stream);
    const std::uint64_t n = bytes;
    Kokkos::parallel_for(
        "ndzip::high_ratio::stage", per_grid(m_exec, 0, 1), KOKKOS_LAMBDA(int) {
          item(0) = item_type{v, s, n};
        });
    return own_item.data();
  }

  // One grid's compression; its size goes to *result. Nothing is written where the stream
  // needs more than `capacity` bytes (coding does_not_fit in the state).
  void run_compress_async(const T* values, std::byte* stream, std::size_t capacity,
                          std::uint64_t* result) override {
    enqueue_compress(stage(values, stream, capacity), result, true);
  }

  std::size_t run_compress(const T* values, std::byte* stream, std::size_t capacity) override {
    enqueue_compress(stage(values, stream, capacity), nullptr, true);
    const pipeline_state done = read_state();
    if (done.coding == stream_coding::does_not_fit)
      throw capacity_error("ndzip: the high-ratio stream needs " + std::to_string(done.total) +
                           " bytes but the output holds only " + std::to_string(capacity));
    return done.total;
  }

  void run_compress_batch(item_type* items, std::uint64_t* result_sizes) override {
    enqueue_compress(items, result_sizes, false);
  }
  void run_decompress_batch(const item_type* items, decompress_outcome* outcomes) override {
    // Decompression only reads the items.
    enqueue_decompress(const_cast<item_type*>(items), outcomes);
  }

  // Queues the compression of every grid: items (one per grid, in the execution space's
  // memory) give the values and where the streams go (with room for their bound, or where
  // capacity_in_items for stream_bytes); each stream's size goes into its item's stream_bytes
  // and, if not null, into result_sizes.
  void enqueue_compress(item_type* items, std::uint64_t* result_sizes, bool capacity_in_items) {
    const pipeline<T, Dims> p = pipeline_for(items, result_sizes, nullptr, capacity_in_items);
    const std::size_t count = m_grids.size();
    {
      const call_guard<ExecSpace> guard(nullptr);
      Kokkos::parallel_for(
          "ndzip::high_ratio::prepare", per_grid(m_exec, 0, count), KOKKOS_LAMBDA(std::size_t g) {
            const plan_type& plan = p.grids[g];
            p.main_items[g] = item_type{p.items[g].values, plan.main, 0};
            if (plan.border_item >= 0)
              p.border_items[plan.border_item] =
                  item_type{reinterpret_cast<T*>(plan.border_values), plan.border_stream, 0};
          });
    }
    main_codec.compress_batch(main_items.data(), nullptr);
    if (border_codec) {
      {
        const call_guard<ExecSpace> guard(nullptr);
        // The border's elements end the main stream.
        launch_copies<bits_type>(
            "ndzip::high_ratio::gather_border", m_exec, count, most_border,
            KOKKOS_LAMBDA(std::size_t g, const bits_type*& f, bits_type*& t, std::uint64_t& n) {
              const plan_type& plan = p.grids[g];
              n = plan.border;
              if (n == 0) return false;
              f = reinterpret_cast<const bits_type*>(plan.main + p.main_items[g].stream_bytes) - n;
              t = plan.border_values;
              return true;
            });
      }
      border_codec->compress_batch(border_items.data(), nullptr);
    }
    const call_guard<ExecSpace> guard(nullptr);
    if (blocks > 0) {
      using grayer = gray_and_count<T, Dims, bits_type, chunks, slot_words, ExecSpace, lane_ops>;
      Kokkos::parallel_for("ndzip::high_ratio::gray_and_count", grayer::make_policy(m_exec, blocks),
                           grayer{p, gray_slots.data(), words.data(), counts.data()});
    }
    Kokkos::parallel_for(
        "ndzip::high_ratio::build_codes",
        build_codes<ExecSpace>::make_policy(m_exec, static_cast<int>(count * tables)),
        build_codes<ExecSpace>{counts.data(), encoder.data(), serialized.data(),
                               serialized_sizes.data()});
    if (blocks > 0) {
      using sizer = size_block_streams<bits_type, chunks, slot_words, ExecSpace>;
      Kokkos::parallel_for("ndzip::high_ratio::size_block_streams",
                           sizer::make_policy(m_exec, blocks),
                           sizer{gray_slots.data(), words.data(), encoder.data(), block_grid.data(),
                                 stream_bytes.data(), sizes.data(), unit_bits.data()});
      scan_block_ends(m_exec, sizes.data(), ends.data(), blocks);
    }
    Kokkos::parallel_for("ndzip::high_ratio::plan_stream", per_grid(m_exec, 0, count),
                         plan_stream<T, Dims>{p, serialized_sizes.data(), ends.data(), tables});
    Kokkos::parallel_for(
        "ndzip::high_ratio::write_header",
        per_grid(m_exec, 0, count * write_header<T, Dims>::header_bytes_at_most(tables)),
        write_header<T, Dims>{p, serialized.data(), serialized_sizes.data(), tables});
    if (blocks > 0) {
      if constexpr (DeviceSchedule) {
        using writer = write_block_streams<T, Dims, bits_type, chunks, slot_words, ExecSpace>;
        Kokkos::parallel_for("ndzip::high_ratio::write_block_streams",
                             writer::make_policy(m_exec, blocks),
                             writer{p, gray_slots.data(), encoder.data(), stream_bytes.data(),
                                    ends.data(), unit_bits.data()});
      } else {
        Kokkos::parallel_for(
            "ndzip::high_ratio::write_blocks", per_grid(m_exec, 0, blocks),
            write_blocks<T, Dims, bits_type, chunks, slot_words>{
                p, gray_slots.data(), encoder.data(), stream_bytes.data(), ends.data()});
      }
    }
    // The stored form: the ndzip stream behind the header.
    launch_copies<bits_type>(
        "ndzip::high_ratio::store", m_exec, count, most_main_room / word,
        KOKKOS_LAMBDA(std::size_t g, const bits_type*& f, bits_type*& t, std::uint64_t& n) {
          const pipeline_state& state = p.states[g];
          if (state.coding != stream_coding::stored) return false;
          f = reinterpret_cast<const bits_type*>(p.grids[g].main);
          t = reinterpret_cast<bits_type*>(p.items[g].stream + high_ratio_header_bytes);
          n = state.main_bytes / sizeof(bits_type);
          return true;
        });
    // The border stream's own border elements, raw, after the coded area.
    launch_copies<std::byte>(
        "ndzip::high_ratio::write_tail", m_exec, count, most_tail_bytes,
        KOKKOS_LAMBDA(std::size_t g, const std::byte*& f, std::byte*& t, std::uint64_t& n) {
          const pipeline_state& state = p.states[g];
          const plan_type& plan = p.grids[g];
          n = plan.tail_bytes;
          if (n == 0 || state.coding != stream_coding::coded) return false;
          f = plan.border_stream + state.border_bytes - n;
          t = p.items[g].stream + state.header_bytes + 8 * plan.blocks() + state.area;
          return true;
        });
  }

  pipeline_state read_state() {
    const call_guard<ExecSpace> guard(nullptr);
    Kokkos::deep_copy(m_exec, host_state, Kokkos::subview(states, 0));
    m_exec.fence();
    return host_state();
  }

  // One grid's decompression; what it finds goes to *result.
  void run_decompress_async(const std::byte* stream, std::size_t size, T* values,
                            decompress_outcome* result) override {
    enqueue_decompress(stage(values, stream, size), result);
  }

  std::size_t run_decompress(const std::byte* stream, std::size_t size, T* values) override {
    enqueue_decompress(stage(values, stream, size), outcome.data());
    {
      const call_guard<ExecSpace> guard(nullptr);
      Kokkos::deep_copy(m_exec, host_outcome, outcome);
      m_exec.fence();
    }
    return this->check_outcome(host_outcome(0), 0);
  }

  // Queues the decompression of every grid: items give each stream, its bytes and where its
  // values go; what each decompression found goes to outcomes.
  void enqueue_decompress(item_type* items, decompress_outcome* outcomes) {
    const pipeline<T, Dims> p = pipeline_for(items, nullptr, outcomes, false);
    const std::size_t count = m_grids.size();
    {
      const call_guard<ExecSpace> guard(nullptr);
      if (blocks > 0 && slots.extent(0) == 0) {
        // The decoder's own scratch: the ndzip blocks, the code tables and (on a device) the
        // streams' states.
        using Kokkos::view_alloc;
        using Kokkos::WithoutInitializing;
        slots = decltype(slots)(view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::slots"),
                                blocks * slot_words);
        decoder =
            decltype(decoder)(view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::decoder"),
                              count * tables * decoder_table_size);
        if constexpr (DeviceSchedule)
          stream_states = decltype(stream_states)(
              view_alloc(m_exec, WithoutInitializing, "ndzip::high_ratio::stream_states"),
              blocks * streams_per_block);
      } else if (decoder.extent(0) == 0) {
        decoder = decltype(decoder)(
            Kokkos::view_alloc(m_exec, Kokkos::WithoutInitializing, "ndzip::high_ratio::decoder"),
            count * tables * decoder_table_size);
      }
      Kokkos::parallel_for("ndzip::high_ratio::read_header", per_grid(m_exec, 0, count),
                           read_header<T, Dims>{p, tables});
      Kokkos::parallel_for("ndzip::high_ratio::read_codes",
                           read_codes<T, Dims, ExecSpace>::make_policy(m_exec, count, tables),
                           read_codes<T, Dims, ExecSpace>{p, tables, decoder.data()});
      if (blocks > 0) {
        const decoder_inputs<T, Dims, bits_type, slot_words> in{p, decoder.data(),
                                                                gray_slots.data()};
        if constexpr (!DeviceSchedule) {
          Kokkos::parallel_for("ndzip::high_ratio::decode_blocks", per_grid(m_exec, 0, blocks),
                               decode_blocks<T, Dims, bits_type, chunks, slot_words>{in});
        } else {
          // A device needs more threads than blocks: one per code stream, in two steps.
          const per_grid per_stream(m_exec, 0, blocks * streams_per_block);
          decode_streams<T, Dims, bits_type, chunks, slot_words> decode{in, stream_states.data(),
                                                                        false};
          Kokkos::parallel_for("ndzip::high_ratio::decode_heads", per_stream, decode);
          decode.columns = true;
          Kokkos::parallel_for("ndzip::high_ratio::decode_columns", per_stream, decode);
        }
        using ungrayer = ungray_blocks<T, Dims, bits_type, chunks, slot_words, ExecSpace, lane_ops>;
        Kokkos::parallel_for("ndzip::high_ratio::ungray_blocks",
                             ungrayer::make_policy(m_exec, blocks),
                             ungrayer{p, gray_slots.data(), slots.data(), sizes.data()});
        place_blocks<T, Dims, bits_type, slot_words>(m_exec, p, slots.data(), sizes.data(),
                                                     ends.data(), blocks);
      }
      // A stored stream: its ndzip stream, as far as the main stream's scratch holds it.
      launch_copies<bits_type>(
          "ndzip::high_ratio::unstore", m_exec, count, most_main_room / word,
          KOKKOS_LAMBDA(std::size_t g, const bits_type*& f, bits_type*& t, std::uint64_t& n) {
            const pipeline_state& state = p.states[g];
            const plan_type& plan = p.grids[g];
            if (state.header_failure != no_failure || state.coding != stream_coding::stored)
              return false;
            f = reinterpret_cast<const bits_type*>(p.items[g].stream + high_ratio_header_bytes);
            t = reinterpret_cast<bits_type*>(plan.main);
            const std::uint64_t given = p.items[g].stream_bytes - high_ratio_header_bytes;
            n = (given < plan.main_room ? given : plan.main_room) / sizeof(bits_type);
            return true;
          });
      // What the two ndzip decoders read and write: the main streams into the caller's values,
      // the border streams into the border elements.
      Kokkos::parallel_for(
          "ndzip::high_ratio::prepare", per_grid(m_exec, 0, count), KOKKOS_LAMBDA(std::size_t g) {
            const plan_type& plan = p.grids[g];
            p.main_items[g] = item_type{p.items[g].values, plan.main, plan.main_room};
            if (plan.border_item >= 0)
              p.border_items[plan.border_item] = item_type{reinterpret_cast<T*>(plan.border_values),
                                                           plan.border_stream, plan.border_room};
          });
    }
    if (border_codec) {
      {
        const call_guard<ExecSpace> guard(nullptr);
        launch_copies<std::byte>(
            "ndzip::high_ratio::read_tail", m_exec, count, most_tail_bytes,
            KOKKOS_LAMBDA(std::size_t g, const std::byte*& f, std::byte*& t, std::uint64_t& n) {
              const pipeline_state& state = p.states[g];
              const plan_type& plan = p.grids[g];
              n = plan.tail_bytes;
              if (n == 0 || !blocks_decoded(state)) return false;
              f = p.items[g].stream + state.total - n;
              t = plan.border_stream + plan.border_header + state.border_words * word;
              return true;
            });
      }
      border_codec->decompress_batch(border_items.data(), border_outcomes.data());
      {
        const call_guard<ExecSpace> guard(nullptr);
        launch_copies<bits_type>(
            "ndzip::high_ratio::place_border", m_exec, count, most_border,
            KOKKOS_LAMBDA(std::size_t g, const bits_type*& f, bits_type*& t, std::uint64_t& n) {
              const pipeline_state& state = p.states[g];
              const plan_type& plan = p.grids[g];
              n = plan.border;
              if (n == 0 || !blocks_decoded(state)) return false;
              f = plan.border_values;
              t = reinterpret_cast<bits_type*>(plan.main +
                                               plan.layout.stream_bytes(state.main_words)) -
                  n;
              return true;
            });
      }
    }
    main_codec.decompress_batch(main_items.data(), main_outcomes.data());
    const call_guard<ExecSpace> guard(nullptr);
    Kokkos::parallel_for("ndzip::high_ratio::finish_outcome", per_grid(m_exec, 0, count),
                         finish_outcome<T, Dims>{p});
  }

  // What the outcome of grid g's decompression says.
  std::string describe_failure(const decompress_outcome& o, std::size_t g) const override {
    const plan_type& plan = host_plans[g];
    const std::uint64_t kind = o.failure & 0xffu;
    const std::uint64_t index = o.failure >> 8;
    if (kind >= outcome_header) return describe_header(o, index);
    if (kind >= outcome_block) return describe_block(index, kind - outcome_block, plan.blocks());
    if (kind >= outcome_border) {
      decompress_outcome inner = o;
      inner.failure = index << 8 | (kind - outcome_border);
      return "ndzip: high-ratio stream, its border's ndzip stream: " +
             describe_stream_failure(inner, profile<T, 1>::chunks_per_hypercube,
                                     profile<T, 1>::max_block_words,
                                     "border of " + std::to_string(plan.border) + " elements");
    }
    return describe_stream_failure(o, chunks, slot_words, to_string(m_grids[g]));
  }

  std::string describe_header(const decompress_outcome& o, std::uint64_t key) const {
    const auto value = static_cast<unsigned>((key >> 8) & 0xffu);
    const std::string size = std::to_string(o.given_bytes);
    switch (static_cast<header_failure>(key >> 16)) {
      case header_failure::misaligned:
        return "ndzip: the high-ratio stream does not start at a multiple of 8 bytes";
      case header_failure::no_header:
        return "ndzip: the high-ratio stream holds " + size + " bytes, fewer than its " +
               std::to_string(high_ratio_header_bytes) + "-byte header";
      case header_failure::magic:
        return "ndzip: not a high-ratio stream (its first bytes are not \"NDZH\")";
      case header_failure::version:
        return "ndzip: high-ratio stream version " + std::to_string(value) +
               " (this library reads version 1)";
      case header_failure::reserved:
        return "ndzip: high-ratio stream with non-zero reserved bytes";
      case header_failure::stored_area:
        return "ndzip: stored high-ratio stream with a coded-area length";
      case header_failure::coding:
        return "ndzip: high-ratio stream with unknown coding " + std::to_string(value);
      case header_failure::code_table:
        return "ndzip: high-ratio stream, code table " + std::to_string(value) + ": " +
               high_ratio::describe(static_cast<code_failure>(key & 0xffu));
      case header_failure::truncated:
        return "ndzip: the high-ratio stream is truncated: " + size +
               " bytes, but its tables, coded area and border need " +
               std::to_string(o.stream_bytes);
      case header_failure::padding:
        return "ndzip: high-ratio stream with non-zero padding after its tables";
      case header_failure::area_without_blocks:
        return "ndzip: high-ratio stream with a coded area but no blocks";
      case header_failure::stored_truncated:
        return "ndzip: the stored high-ratio stream is truncated: " + size +
               " bytes, but its ndzip stream needs " + std::to_string(o.stream_bytes);
    }
    return "ndzip: high-ratio stream with an unknown header failure";
  }

  static std::string describe_block(std::uint64_t block, std::uint64_t why, std::uint64_t blocks) {
    const char* what = "";
    switch (static_cast<block_failure>(why)) {
      case block_failure::table:
        what =
            "its block-table entry lies before its start or past the coded area (or, for the "
            "last block, short of its end), or its stream lengths exceed it";
        break;
      case block_failure::code:
        what = "its bits hold no valid code, or a code runs past its end";
        break;
      case block_failure::leftover:
        what = "bytes or non-zero padding follow its last code";
        break;
      case block_failure::stored_size:
        what = "its stored length is not what its heads announce";
        break;
    }
    return "ndzip: high-ratio stream, block " + std::to_string(block) + " of " +
           std::to_string(blocks) + ": " + what;
  }
};

}  // namespace ndzip::core::high_ratio
