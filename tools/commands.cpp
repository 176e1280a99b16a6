// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <ndzip/chunked_frame_format.hpp>
#include <ndzip/dynamic.hpp>
#include <ndzip/error.hpp>
#include <ndzip/frame_format.hpp>

#include "chunked_codec.hpp"
#include "codec.hpp"
#include "decode.hpp"
#include "file_io.hpp"
#include "framing.hpp"
#include "inputs.hpp"
#include "npy_format.hpp"
#include "progress.hpp"
#include "region.hpp"
#include "shape_check.hpp"

namespace ndzip_cli {

namespace {

constexpr std::string_view suffix = ".ndz";
constexpr std::string_view npy_suffix = ".npy";

// "1 file", "2 files".
std::string file_count(int n) { return std::to_string(n) + (n == 1 ? " file" : " files"); }

// How a file is named in summaries and on the progress bar.
std::string display_name(const std::string& path, bool output) {
  if (path == "-") return output ? "stdout" : "stdin";
  return path;
}

void print_error(const std::string& what) {
  std::fprintf(stderr, "ndzip: error: %s\n", what.c_str());
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What is shared by the operands of one command line.
class run_context {
 public:
  explicit run_context(const options& opts) : m_opts(opts) {}

  const options& opts() const { return m_opts; }

  // Kokkos, initialized at the first input that needs it (once per process).
  void start_backend() {
    if (!m_session) m_session.emplace(m_opts.threads, m_opts.verbosity == 0);
  }

  bool show_progress() const {
    return m_opts.progress && m_opts.verbosity >= 1 && ::isatty(STDERR_FILENO);
  }
  // The one-line summary after each input: by default, except in the IN OUT form.
  bool summarize() const {
    return m_opts.verbosity >= 2 || (m_opts.verbosity == 1 && !m_opts.in_out);
  }

  // The output of `in`: -o, -c, IN OUT, or a name derived from the input's.
  std::string output_of(const std::string& in) const {
    if (m_opts.in_out) return m_opts.files[1];
    if (m_opts.output) return *m_opts.output;
    if (m_opts.to_stdout || in == "-") return "-";
    if (m_opts.op == operation::compress) {
      if (ends_with(in, suffix) && !m_opts.force)
        throw std::runtime_error(input_name(in) +
                                 " already ends in .ndz (to decompress it, use ndzip -d; to "
                                 "compress it anyway, -f, or -o to name the output)");
      return in + std::string(suffix);
    }
    const std::string name = ends_with(in, suffix) ? in.substr(0, in.size() - suffix.size()) : "";
    if (name.empty() || name.back() == '/')
      throw std::runtime_error(input_name(in) +
                               (name.empty() && !ends_with(in, suffix)
                                    ? " does not end in .ndz"
                                    : " has no name before .ndz") +
                               ", so it names no output (use -o OUT or -c)");
    return name;
  }

  std::uint64_t in_total = 0, out_total = 0;
  int done = 0;    // inputs described or written
  int failed = 0;  // inputs reported as errors
  bool border_noted = false;  // the note of note_border, given once a run

 private:
  const options& m_opts;
  std::optional<backend_session> m_session;
};

// Counts an input compressed from `in_bytes` into `out_bytes` at `out`, with its summary line
// where summaries are on.
void report_compressed(run_context& ctx, const std::string& in, const std::string& out,
                       std::uint64_t in_bytes, std::uint64_t out_bytes) {
  ctx.in_total += in_bytes;
  ctx.out_total += out_bytes;
  ++ctx.done;
  if (ctx.summarize())
    std::fprintf(stderr, "%s : %.2f%% (%s => %s, %s)\n", display_name(in, false).c_str(),
                 100.0 * static_cast<double>(out_bytes) / static_cast<double>(in_bytes),
                 human_bytes(in_bytes).c_str(), human_bytes(out_bytes).c_str(),
                 display_name(out, true).c_str());
}

// Counts an input decompressed likewise; `what` says what was written (the array's shape, or a
// region of it).
void report_decompressed(run_context& ctx, const std::string& in, const std::string& out,
                         std::uint64_t in_bytes, std::uint64_t out_bytes,
                         const std::string& what) {
  ctx.in_total += in_bytes;
  ctx.out_total += out_bytes;
  ++ctx.done;
  if (ctx.summarize())
    std::fprintf(stderr, "%s : %s => %s (%s, %s)\n", display_name(in, false).c_str(),
                 human_bytes(in_bytes).c_str(), human_bytes(out_bytes).c_str(), what.c_str(),
                 display_name(out, true).c_str());
}

// Where the stream of the coded grid (folded where that helps) stores most values raw (outside
// whole hypercubes), says so once a run, with a shape that would compress: arrays that small
// are what a user who splits a field into files or chunks gets.
void note_border(run_context& ctx, const std::string& in, const array_desc& array,
                 progress_bar& bar) {
  const ndzip::array_shape coded = array.coded_shape();
  const std::uint64_t raw = ndzip::elements_stored_raw(coded, array.mode);
  const std::size_t all = coded.element_count();
  if (ctx.opts().verbosity == 0 || ctx.border_noted || 2 * raw <= all) return;
  ctx.border_noted = true;
  bar.erase();
  const ndzip::array_shape folded = ndzip::coded_shape(array.shape, ndzip::folding::automatic);
  // A --raw stream is never folded: there, a frame is what folds.
  const std::string advice =
      folded != coded && 2 * ndzip::elements_stored_raw(folded, array.mode) <= all
          ? (ctx.opts().raw ? "a frame (no --raw) codes it folded, as "
                            : "--folding automatic (the default) codes it as ") +
                folded.extents_string()
          : "arrays of " + ndzip::suggested_chunk_shape(array.shape).extents_string() +
                " values or more compress";
  std::fprintf(stderr,
               "ndzip: note: %s: %.0f%% of the %s array lies outside whole hypercubes (4096 "
               "values) and is stored raw; %s (said once)\n",
               input_name(in).c_str(), 100.0 * static_cast<double>(raw) / static_cast<double>(all),
               array.shape.to_string().c_str(), advice.c_str());
}

// Runs f(), naming the input in the message of a library error about it:
// "'x.ndz': chunked frame, slab 3: checksum mismatch ...".
template <class F>
decltype(auto) naming(const std::string& name, F&& f) {
  try {
    return f();
  } catch (const ndzip::error& e) {
    throw std::runtime_error(name + ": " + codec_message(e));
  }
}

// Called in a handler of a failure while `sink` was written: where bytes of it went out already
// (standard output, a device or FIFO), the message says that they are incomplete; a file
// output is removed, so the failure is rethrown as it is.
[[noreturn]] void rethrow_with_output(const output_stream& sink, const std::string& in) {
  if (!sink.passes_on() || sink.written() == 0) throw;
  const std::string lost = "; the " + std::to_string(sink.written()) + " bytes written to " +
                           sink.name() + " before are incomplete";
  try {
    throw;
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(input_name(in) + ": out of memory" + lost);
  } catch (const std::exception& e) {
    throw std::runtime_error(codec_message(e) + lost);
  }
}

// The header of the chunked frame whose first bytes are `head` (its version byte says 4). Where
// it is not one, the message also says what a reader of versions 1 to 3 makes of it, since a
// damaged frame of those versions may well have a 4 there.
ndzip::chunked_frame_info chunked_header_of(const std::string& name, byte_span head) {
  try {
    return ndzip::read_chunked_header(head.data, head.size);
  } catch (const ndzip::frame_error& e) {
    std::string older = "?";
    try {
      ndzip::read_frame_header(head.data, head.size);
    } catch (const ndzip::frame_error& f) {
      older = codec_message(f);
    }
    const std::string prefix = "not a valid ndzip frame: ";
    if (older.rfind(prefix, 0) == 0) older = older.substr(prefix.size());
    const std::string chunked_prefix = "not a valid chunked ndzip frame: ";
    std::string reason = codec_message(e);
    if (reason.rfind(chunked_prefix, 0) == 0) reason = reason.substr(chunked_prefix.size());
    throw std::runtime_error(name + ": not a valid chunked ndzip frame (version 4): " + reason +
                             "; as a frame of versions 1 to 3: " + older);
  }
}

// Whether compress writes `array` as a chunked frame: --chunked always or --slab-rows, or (auto)
// an array that the default slab size cuts into more than one slab. Never with --raw.
bool writes_chunked(const options& opts, const array_desc& array) {
  if (opts.raw || opts.chunked == chunking::never) return false;
  if (opts.chunked == chunking::always || opts.slab_rows) return true;
  try {
    return ndzip::default_slab_rows(array.shape.type(), array.shape.rank(), array.shape.extents(),
                                    array.mode) < array.shape.extent(0);
  } catch (const std::exception&) {
    return false;  // not even one row is a stream: the codec refuses it by name
  }
}

// "64 slabs of 16 rows" / "1 slab of 10 rows" / "3 slabs of 64 rows (the last 2)".
std::string slabs_text(const ndzip::chunked_frame_info& info) {
  std::string text = std::to_string(info.slab_count) + (info.slab_count == 1 ? " slab" : " slabs") +
                     " of " + std::to_string(info.slab_rows) +
                     (info.slab_rows == 1 ? " row" : " rows");
  const std::uint64_t last = info.slab_extents(info.slab_count - 1)[0];
  if (last != info.slab_rows) text += " (the last " + std::to_string(last) + ")";
  return text;
}

// Compresses the values of `array` from `values` into a chunked frame written to `out` as each
// slab is compressed: one slab's values and one slab's record are held at a time (and, for the
// shape check, the first values).
void compress_chunked(run_context& ctx, const std::string& in, const std::string& out,
                      value_source& values, bool npy, progress_bar& bar,
                      std::chrono::steady_clock::time_point start) {
  const options& opts = ctx.opts();
  const array_desc& array = values.array();
  if (opts.slab_rows && *opts.slab_rows > array.shape.extent(0))
    throw std::runtime_error("--slab-rows " + std::to_string(*opts.slab_rows) + ": " +
                             input_name(in) + " holds a " + array.shape.to_string() +
                             " array, whose slowest dimension has " +
                             std::to_string(array.shape.extent(0)) + " rows");
  ctx.start_backend();
  slab_encoder encoder(opts.backend, array.shape, opts.slab_rows.value_or(0), array.mode,
                       opts.folding);
  const ndzip::chunked_frame_info& info = encoder.info();
  if (!npy && (opts.strict || opts.verbosity >= 1)) {
    const std::size_t sample = std::min(shape_check_bytes(), array.shape.byte_size());
    if (const auto doubt = doubt_shape(opts.backend, array, values.first(sample))) {
      const std::string what = input_name(in) + ": " + describe(*doubt) + "; are -t and -n right?";
      if (opts.strict) throw std::runtime_error(what + " (--strict: not compressed)");
      bar.erase();
      std::fprintf(stderr, "ndzip: warning: %s (--strict makes this an error)\n", what.c_str());
    }
  }
  // The slabs, not the array, are the grids coded.
  const array_desc first_slab = coded_for_frame(
      array_desc(array.shape.with_extent(0, info.slab_extents(0)[0]), array.mode), opts.folding);
  note_border(ctx, in, first_slab, bar);

  double codec_seconds = 0;
  output_stream sink(out, opts.force);
  try {
    sink.write(encoder.header());
    for (std::uint64_t s = 0; s < info.slab_count; ++s) {
      const byte_span slab = values.next(encoder.slab_bytes(s));
      const auto codec_start = std::chrono::steady_clock::now();
      const byte_span record = encoder.encode(slab);
      codec_seconds += seconds_since(codec_start);
      sink.write(record);
    }
    values.check_end();
    const std::vector<std::byte> end = encoder.finish();
    sink.write(byte_span(end.data(), end.size()));
  } catch (...) {
    rethrow_with_output(sink, in);
  }
  const std::uint64_t out_bytes = sink.written();
  const output_kept kept = sink.commit();
  if (opts.remove_input) remove_input(in, out, kept);
  bar.erase();

  const std::size_t in_bytes = array.shape.byte_size();
  report_compressed(ctx, in, out, in_bytes, out_bytes);
  if (opts.verbosity >= 2)
    std::fprintf(stderr,
                 "  %s on %s, a chunked frame of %s: compressed in %.3f s (%.2f GB/s), %.3f s "
                 "in all\n",
                 array.shape.to_string().c_str(), opts.backend.c_str(), slabs_text(info).c_str(),
                 codec_seconds, static_cast<double>(in_bytes) / codec_seconds / 1e9,
                 seconds_since(start));
}

void compress_one(run_context& ctx, const std::string& in) {
  const options& opts = ctx.opts();
  const std::string out = ctx.output_of(in);
  check_distinct_files(in, out);
  check_output_target(out, opts.force);
  if (opts.remove_input) check_input_removable(in, out);
  const auto start = std::chrono::steady_clock::now();
  progress_bar bar(ctx.show_progress(), display_name(in, false));
  const auto advance = [&bar](std::size_t n) { bar.advance(n); };

  bar.step("reading", regular_file_size(in));
  array_source source = open_array_to_compress(in, opts.request(), advance);
  if (source.array && writes_chunked(opts, *source.array)) {
    // Read, compressed and written a slab at a time.
    const std::size_t total = source.array->shape.byte_size();
    const bool npy = source.npy;
    const bool sample = !npy && (opts.strict || opts.verbosity >= 1);
    bar.step("compressing " + human_bytes(total), total);
    value_source values(std::move(source), sample ? shape_check_bytes() : 0, advance);
    return compress_chunked(ctx, in, out, values, npy, bar, start);
  }
  array_file input = read_array_values(std::move(source), advance);
  if (writes_chunked(opts, input.array)) {  // a pipe without -n, read whole: its length is N0
    bar.step("compressing " + human_bytes(input.values.size()), std::nullopt);
    const bool npy = input.npy;
    value_source values(std::move(input));
    return compress_chunked(ctx, in, out, values, npy, bar, start);
  }
  const array_desc array = opts.raw ? input.array : coded_for_frame(input.array, opts.folding);
  byte_buffer values = std::move(input.values);
  ctx.start_backend();

  // A .npy header describes its own array: the shape check, which asks whether -t and -n are
  // right, has nothing to doubt there.
  if (!input.npy && (opts.strict || opts.verbosity >= 1)) {
    bar.step("checking the shape", std::nullopt);
    if (const auto doubt = doubt_shape(opts.backend, array, values)) {
      const std::string what = input_name(in) + ": " + describe(*doubt) + "; are -t and -n right?";
      if (opts.strict) throw std::runtime_error(what + " (--strict: not compressed)");
      bar.erase();
      std::fprintf(stderr, "ndzip: warning: %s (--strict makes this an error)\n", what.c_str());
    }
  }

  const std::size_t in_bytes = values.size();
  bar.step("compressing " + human_bytes(in_bytes), std::nullopt);
  const auto codec_start = std::chrono::steady_clock::now();
  // A GPU backend releases the input once it has its copy; the host ones need it to the end.
  const byte_buffer stream = compress_array(opts.backend, array, values, &values);
  const double codec_seconds = seconds_since(codec_start);
  values = byte_buffer();  // the output's memory may reuse the input's
  note_border(ctx, in, array, bar);

  const auto header = encode_frame_header(array, stream);
  std::vector<byte_span> pieces{stream};
  if (!opts.raw) pieces.insert(pieces.begin(), byte_span(header.data(), header.size()));
  const std::size_t out_bytes = stream.size() + (opts.raw ? 0 : header.size());
  bar.step("writing", out_bytes);
  const output_kept kept = write_output(out, pieces, opts.force, advance);
  if (opts.remove_input) remove_input(in, out, kept);
  bar.erase();

  report_compressed(ctx, in, out, in_bytes, out_bytes);
  if (opts.verbosity >= 2)
    std::fprintf(stderr, "  %s on %s: compressed in %.3f s (%.2f GB/s), %.3f s in all\n",
                 array.shape.to_string().c_str(), opts.backend.c_str(), codec_seconds,
                 static_cast<double>(in_bytes) / codec_seconds / 1e9, seconds_since(start));
}

// Decompresses the chunked frame that `file` holds (`head`: its first bytes, read already) to
// `out` a slab at a time: each slab's head, then its stream (as long as the head says, which
// its checks bound), its checksum verified before it is decoded, its values written; then the
// index and trailer checked against the slabs, and nothing may follow.
void decompress_chunked(run_context& ctx, const std::string& in, const std::string& out,
                        input_file& file, byte_buffer head, progress_bar& bar,
                        std::chrono::steady_clock::time_point start) {
  const options& opts = ctx.opts();
  const std::string name = input_name(in);
  file.read_up_to(head, ndzip::chunked_header_bytes);
  const ndzip::chunked_frame_info info = chunked_header_of(name, head);
  const array_desc array(ndzip::array_shape(info.type, info.dimensions, info.extents.data()),
                         opts.mode.value_or(ndzip::codec_mode::ndzip));
  check_request_matches({opts.type, opts.extents, std::nullopt}, name, array);
  ctx.start_backend();
  std::optional<slab_decoder> decoder;
  naming(name, [&] { decoder.emplace(opts.backend, byte_span(head.data(), head.size())); });

  const std::vector<std::byte> npy_header = opts.npy_output || ends_with(out, npy_suffix)
                                                ? npy::encode_header(array.shape)
                                                : std::vector<std::byte>();
  const std::size_t array_bytes = array.shape.byte_size();
  bar.step("decompressing " + human_bytes(array_bytes), array_bytes);
  const auto advance = [&bar](std::size_t n) { bar.advance(n); };
  file.advise_sequential();
  double codec_seconds = 0;
  std::uint64_t in_bytes = head.size();
  output_stream sink(out, opts.force);
  try {
    sink.write(byte_span(npy_header.data(), npy_header.size()));
    byte_buffer record;
    byte_buffer values;  // one slab's, allocated once a slab's record is all there
    for (std::uint64_t s = 0; s < info.slab_count; ++s) {
      record.clear();
      file.read_up_to(record, ndzip::slab_head_bytes);
      const ndzip::slab_info slab = naming(name, [&] { return decoder->read_head(record); });
      if (opts.mode && slab.mode != *opts.mode)
        throw std::runtime_error(std::string("--mode ") + ndzip::codec_mode_name(*opts.mode) +
                                 " does not match " + name + ", whose slab " + std::to_string(s) +
                                 " is coded in the " + ndzip::codec_mode_name(slab.mode) +
                                 " mode");
      // No more than the head announces, a length its slab's stream can have.
      file.read_up_to(record, static_cast<std::size_t>(slab.record_bytes()));
      in_bytes += record.size();
      // A record cut short is refused before the slab's values are allocated: a header that
      // announces huge slabs costs no more than the bytes that are there (the stream, whose
      // length is at least the shortest stream of its slab's grid).
      if (record.size() < slab.record_bytes())
        naming(name, [&] { ndzip::verify_slab(slab, record.data(), record.size()); });
      if (values.size() < decoder->slab_bytes(s)) values.resize(decoder->slab_bytes(s));
      const auto codec_start = std::chrono::steady_clock::now();
      naming(name, [&] { decoder->decode(record, values.data()); });
      codec_seconds += seconds_since(codec_start);
      sink.write(byte_span(values.data(), decoder->slab_bytes(s)), advance);
    }
    byte_buffer end;
    file.read_up_to(end, decoder->end_bytes());
    in_bytes += end.size();
    naming(name, [&] { decoder->finish(end); });
    byte_buffer extra;
    file.read_up_to(extra, 1);
    if (!extra.empty())
      throw std::runtime_error(name + ": not a valid chunked ndzip frame: trailing data after "
                               "its trailer");
  } catch (...) {
    rethrow_with_output(sink, in);
  }
  const std::uint64_t out_bytes = sink.written();
  const output_kept kept = sink.commit();
  if (opts.remove_input) remove_input(in, out, kept);
  bar.erase();

  report_decompressed(ctx, in, out, in_bytes, out_bytes, array.shape.to_string());
  if (opts.verbosity >= 2)
    std::fprintf(stderr,
                 "  on %s, a chunked frame of %s: decompressed in %.3f s (%.2f GB/s), %.3f s in "
                 "all\n",
                 opts.backend.c_str(), slabs_text(info).c_str(), codec_seconds,
                 static_cast<double>(array_bytes) / codec_seconds / 1e9, seconds_since(start));
}

// The whole chunked frame on an input that is not a regular file (`bytes`: its first bytes,
// read already), read in order and bounded as decompress_chunked reads it: the header, each
// slab's head and then the record it announces (a length its slab's grid can have), the index
// and trailer, and one byte more to see that nothing follows. The slabs' checksums and the
// index are checked where the frame is decoded.
byte_buffer read_chunked_whole(input_file& file, const std::string& name, byte_buffer bytes,
                               const progress_fn& progress) {
  file.read_up_to(bytes, ndzip::chunked_header_bytes);
  const ndzip::chunked_frame_info info = chunked_header_of(name, bytes);
  for (std::uint64_t s = 0; s < info.slab_count; ++s) {
    const std::size_t at = bytes.size();
    file.read_up_to(bytes, at + ndzip::slab_head_bytes, progress);
    const ndzip::slab_info slab = naming(
        name, [&] { return ndzip::read_slab_head(info, s, bytes.data() + at, bytes.size() - at); });
    file.read_up_to(bytes, at + static_cast<std::size_t>(slab.record_bytes()), progress);
    if (bytes.size() - at < slab.record_bytes())  // the message of a truncated record
      naming(name, [&] { ndzip::verify_slab(slab, bytes.data() + at, bytes.size() - at); });
  }
  const std::size_t end = bytes.size();
  const std::size_t end_bytes =
      static_cast<std::size_t>(8 * info.slab_count + ndzip::chunked_trailer_bytes);
  file.read_up_to(bytes, end + end_bytes + 1, progress);
  if (bytes.size() > end + end_bytes)
    throw std::runtime_error(name + ": not a valid chunked ndzip frame: trailing data after its "
                             "trailer");
  return bytes;
}

// -d --region: the box of the array that the frame `in` holds, decoded from what it touches
// alone (in a chunked frame, the slabs its rows lie in, each checked by its checksum; a frame of
// versions 1 to 3 is checked whole by its checksum) and written in C order, as raw values or a
// .npy file of the box's shape. A regular file is mapped read-only, so that only the pages that
// are decoded (and the header, index and slab heads) are read from it; any other input is read
// whole first, with the bounds of -d. The output is created only once the box is decoded.
void decompress_region_one(run_context& ctx, const std::string& in) {
  const options& opts = ctx.opts();
  const std::string out = ctx.output_of(in);
  const std::string name = input_name(in);
  check_distinct_files(in, out);
  check_output_target(out, opts.force);
  const auto start = std::chrono::steady_clock::now();
  progress_bar bar(ctx.show_progress(), display_name(in, false));
  const auto advance = [&bar](std::size_t n) { bar.advance(n); };

  input_file file(in);
  std::unique_ptr<mapped_bytes> mapped;
  byte_buffer whole;
  byte_span frame;
  if (file.regular_size().value_or(0) > 0) {
    mapped = file.map();
    mapped->advise_random();  // until the header says how the frame is read
    frame = mapped->bytes();
  } else {
    bar.step("reading", std::nullopt);
    byte_buffer head;
    file.read_up_to(head, ndzip::frame_header_bytes);
    whole = is_chunked_frame(head) ? read_chunked_whole(file, name, std::move(head), advance)
                                   : read_frame(file, std::move(head), advance).bytes;
    frame = whole;
  }

  // The array, from the header alone; -t, -n and --mode must match it, as for -d.
  array_desc array;
  std::optional<ndzip::chunked_frame_info> chunked;
  if (is_chunked_frame(frame)) {
    chunked = chunked_header_of(name, frame);
    array = array_desc(ndzip::array_shape(chunked->type, chunked->dimensions,
                                          chunked->extents.data()),
                       ndzip::codec_mode::ndzip);
    check_request_matches({opts.type, opts.extents, std::nullopt}, name, array);
  } else {
    const ndzip::frame_info header = naming(name, [&] { return read_frame_header(frame); });
    naming(name, [&] { ndzip::check_frame_size(header, frame.size); });
    array = frame_array(header);
    check_request_matches(opts.request(), name, array);
  }
  const region_box box = resolve_region(opts.region, opts.region_text.value_or(""), array.shape,
                                        name);
  // The slabs the box's rows lie in.
  const std::uint64_t first_slab = chunked ? box.start[0] / chunked->slab_rows : 0;
  const std::uint64_t last_slab =
      chunked ? (box.start[0] + box.shape.extent(0) - 1) / chunked->slab_rows : 0;
  if (chunked && (opts.mode || mapped)) {
    // The index and the slab heads (on a mapped file, a page each: read-ahead off), then the
    // records of the slabs the box touches read ahead, and nothing else.
    const ndzip::chunked_frame_layout layout =
        naming(name, [&] { return ndzip::inspect_chunked_frame(frame.data, frame.size); });
    for (std::uint64_t s = first_slab; s <= last_slab && opts.mode; ++s)
      if (layout.slabs[s].mode != *opts.mode)
        throw std::runtime_error(std::string("--mode ") + ndzip::codec_mode_name(*opts.mode) +
                                 " does not match " + name + ", whose slab " + std::to_string(s) +
                                 " is coded in the " +
                                 ndzip::codec_mode_name(layout.slabs[s].mode) + " mode");
    if (mapped)
      mapped->will_need(layout.offsets[first_slab], layout.offsets[last_slab] +
                                                        layout.slabs[last_slab].record_bytes() -
                                                        layout.offsets[first_slab]);
  } else if (mapped) {
    mapped->advise_sequential();  // the checksum covers the whole stream
  }

  ctx.start_backend();
  bar.step("decompressing " + human_bytes(box.shape.byte_size()), std::nullopt);
  const auto codec_start = std::chrono::steady_clock::now();
  byte_buffer values(box.shape.byte_size());  // uninitialised
  try {
    ndzip::decompress_frame_region(opts.backend, frame.data, frame.size, box.shape, box.start,
                                   values.data());
  } catch (const ndzip::error& e) {
    throw std::runtime_error(name + ": " + codec_message(e));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error("cannot decompress " + name + ": " + codec_message(e));
  }
  const double codec_seconds = seconds_since(codec_start);
  const std::size_t in_bytes = frame.size;
  whole = byte_buffer();
  mapped.reset();

  const std::vector<std::byte> npy_header = opts.npy_output || ends_with(out, npy_suffix)
                                                ? npy::encode_header(box.shape)
                                                : std::vector<std::byte>();
  const std::size_t out_bytes = npy_header.size() + values.size();
  bar.step("writing", out_bytes);
  write_output(out, {byte_span(npy_header.data(), npy_header.size()), values}, opts.force,
               advance);
  bar.erase();

  report_decompressed(ctx, in, out, in_bytes, out_bytes,
                      box_text(box) + " of the " + array.shape.to_string() + " array");
  if (opts.verbosity >= 2) {
    const std::string read =
        chunked ? (first_slab == last_slab
                       ? "slab " + std::to_string(first_slab)
                       : "slabs " + std::to_string(first_slab) + "-" + std::to_string(last_slab)) +
                      " of " + slabs_text(*chunked) + " decoded"
                : "the whole frame checked, the box decoded";
    std::fprintf(stderr, "  a %s box on %s, %s: in %.3f s, %.3f s in all\n",
                 box.shape.extents_string().c_str(), opts.backend.c_str(), read.c_str(),
                 codec_seconds, seconds_since(start));
  }
}

void decompress_one(run_context& ctx, const std::string& in) {
  const options& opts = ctx.opts();
  if (opts.region_text) return decompress_region_one(ctx, in);
  const std::string out = ctx.output_of(in);
  const std::string name = input_name(in);
  check_distinct_files(in, out);
  check_output_target(out, opts.force);
  if (opts.remove_input) check_input_removable(in, out);
  const auto start = std::chrono::steady_clock::now();
  progress_bar bar(ctx.show_progress(), display_name(in, false));
  const auto advance = [&bar](std::size_t n) { bar.advance(n); };

  bar.step("reading", regular_file_size(in));
  byte_buffer input;
  array_desc array;
  byte_span stream;
  if (opts.raw) {
    array = opts.array();
    input = read_raw_stream(in, array, advance);
    stream = input;
  } else {
    input_file file(in);
    byte_buffer head;
    file.read_up_to(head, ndzip::frame_header_bytes);
    if (is_chunked_frame(head))
      return decompress_chunked(ctx, in, out, file, std::move(head), bar, start);
    input = read_frame(file, std::move(head), advance).bytes;
    array = frame_array(open_frame(name, input));
    stream = frame_stream(input);
    check_request_matches(opts.request(), name, array);
  }
  ctx.start_backend();

  bar.step("decompressing " + human_bytes(array.shape.byte_size()), std::nullopt);
  const auto codec_start = std::chrono::steady_clock::now();
  const std::size_t in_bytes = input.size();
  const byte_buffer values = decode_stream(opts.backend, name, array, stream, opts.raw, &input);
  const double codec_seconds = seconds_since(codec_start);
  input = byte_buffer();

  // --npy, or an output named *.npy: NumPy's header first, so that numpy.load reads the file.
  const std::vector<std::byte> npy_header = opts.npy_output || ends_with(out, npy_suffix)
                                                ? npy::encode_header(array.shape)
                                                : std::vector<std::byte>();
  const std::size_t out_bytes = npy_header.size() + values.size();
  bar.step("writing", out_bytes);
  const output_kept kept = write_output(
      out, {byte_span(npy_header.data(), npy_header.size()), values}, opts.force, advance);
  if (opts.remove_input) remove_input(in, out, kept);
  bar.erase();

  report_decompressed(ctx, in, out, in_bytes, out_bytes, array.shape.to_string());
  if (opts.verbosity >= 2)
    std::fprintf(stderr, "  on %s: decompressed in %.3f s (%.2f GB/s), %.3f s in all\n",
                 opts.backend.c_str(), codec_seconds,
                 static_cast<double>(values.size()) / codec_seconds / 1e9, seconds_since(start));
}

// What -l and info found in a frame, checked as -d checks it.
struct frame_verdict {
  enum class kind { sound, bad_frame, bad_stream } result = kind::sound;
  std::string error;  // what -d would report, unless sound
};

// Checks `frame` as -d does: header and checksum, then its stream decoded. A header edited and
// resealed (a float stream relabelled double, say) passes the checksum, but not the decode.
frame_verdict check_frame(run_context& ctx, const std::string& path, const frame_file& frame) {
  const std::string name = input_name(path);
  try {
    open_frame(name, frame.bytes);
  } catch (const std::runtime_error& e) {
    return {frame_verdict::kind::bad_frame, e.what()};
  }
  ctx.start_backend();
  try {
    decode_stream(ctx.opts().backend, name, frame_array(frame.header), frame_stream(frame.bytes),
                  false);
  } catch (const std::runtime_error& e) {
    return {frame_verdict::kind::bad_stream, e.what()};
  }
  return {};
}

// info's "decoding:" line.
const char* decoding_outcome(frame_verdict::kind result) {
  switch (result) {
    case frame_verdict::kind::sound:
      return "ok (the stream decodes to the whole array)";
    case frame_verdict::kind::bad_frame:
      return "not tried (the frame is damaged)";
    case frame_verdict::kind::bad_stream:
      break;
  }
  return "FAILED";
}

double ratio_of(std::size_t bytes, std::size_t array_bytes) {
  return static_cast<double>(bytes) / static_cast<double>(array_bytes);
}

// `info FILE` / `-l -v`: every field, then whether the frame is sound.
void describe_frame(const std::string& path, const frame_file& frame, const frame_verdict& verdict,
                    bool first) {
  const byte_buffer& file = frame.bytes;
  const ndzip::frame_info& header = frame.header;
  const byte_span stream = frame_stream(file);
  const array_desc array = frame_array(header);
  const std::size_t array_bytes = array.shape.byte_size();
  const std::uint64_t actual = ndzip::frame_checksum(file.data(), file.size());

  if (!first) std::printf("\n");
  std::printf("file:        %s\n", path == "-" ? "-" : path.c_str());
  std::printf("format:      ndzip-kokkos frame, version %d\n", frame_version_of(file));
  std::printf("mode:        %s\n", ndzip::codec_mode_name(header.mode));
  std::printf("type:        %s\n", ndzip::element_type_name(array.shape.type()));
  std::printf("dimensions:  %d\n", array.shape.rank());
  std::printf("extents:     %s (slowest first)\n", array.shape.extents_string().c_str());
  if (array.folded_rank)
    std::printf("coded as:    %s (folded: the slowest dimensions merged)\n",
                array.coded_shape().extents_string().c_str());
  std::printf("elements:    %zu\n", array.shape.element_count());
  std::printf("array:       %zu bytes\n", array_bytes);
  std::printf("stream:      %zu bytes\n", stream.size);
  std::printf("file size:   %zu bytes\n", file.size());
  if (actual == header.checksum)
    std::printf("checksum:    ok (XXH3-64 %s)\n", checksum_string(actual).c_str());
  else
    std::printf("checksum:    MISMATCH (stored %s, file hashes to %s)\n",
                checksum_string(header.checksum).c_str(), checksum_string(actual).c_str());
  std::printf("decoding:    %s\n", decoding_outcome(verdict.result));
  std::printf("ratio:       %.4f (stream bytes / array bytes)\n",
              ratio_of(stream.size, array_bytes));
  std::printf("file ratio:  %.4f (file bytes / array bytes, as -l)\n",
              ratio_of(file.size(), array_bytes));
}

const char* const list_header = "%-7s %-20s %12s %12s %7s %-5s %s\n";

// What -l and info read of a chunked frame: its header, index and slab heads, never its
// streams.
struct chunked_listing {
  ndzip::chunked_frame_info info;
  std::vector<ndzip::slab_info> slabs;  // those read, in order
  std::vector<std::uint64_t> offsets;   // of their heads
  std::uint64_t file_bytes = 0;         // the input's size (as far as it was read, for a pipe)
  std::uint64_t index_checksum = 0;     // as the trailer records it, once read
  std::string error;                    // what is wrong with the frame, if anything
};

// The index and trailer, then each slab's head where the index puts it (a regular file:
// nothing else is read), or every part in order, the streams skipped (a pipe). Checks as
// inspect_chunked_frame does; a failure is left in listing.error.
void read_chunked_listing(input_file& file, const std::string& name, chunked_listing& listing) {
  const ndzip::chunked_frame_info& info = listing.info;
  const std::uint64_t count = info.slab_count;
  const std::size_t end_bytes = static_cast<std::size_t>(8 * count + ndzip::chunked_trailer_bytes);
  byte_buffer bytes;
  const auto read_head = [&](std::uint64_t s) {
    return naming(name, [&] { return ndzip::read_slab_head(info, s, bytes.data(), bytes.size()); });
  };
  const auto trailer_checksum = [&] {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= std::uint64_t{std::to_integer<std::uint8_t>(bytes[end_bytes - 8 + i])} << (8 * i);
    return v;
  };
  if (const auto size = file.regular_size()) {
    listing.file_bytes = *size;
    // No overflow: count <= 2^32.
    const std::uint64_t least = ndzip::chunked_header_bytes +
                                (ndzip::slab_head_bytes + 8) * count +
                                ndzip::chunked_trailer_bytes;
    if (*size < least)
      throw std::runtime_error(name + ": not a valid chunked ndzip frame: truncated: " +
                               std::to_string(count) + " slabs take " + std::to_string(least) +
                               " bytes at least with the header, index and trailer, but the "
                               "file has " + std::to_string(*size));
    const std::uint64_t index_offset = *size - end_bytes;
    file.read_at(index_offset, end_bytes, bytes);
    listing.offsets = naming(name, [&] {
      return ndzip::read_chunked_end(info, bytes.data(), bytes.size(), index_offset);
    });
    listing.index_checksum = trailer_checksum();
    for (std::uint64_t s = 0; s < count; ++s) {
      const std::uint64_t at = listing.offsets[s];
      const std::uint64_t next = s + 1 < count ? listing.offsets[s + 1] : index_offset;
      file.read_at(at, ndzip::slab_head_bytes, bytes);
      const ndzip::slab_info slab = read_head(s);
      if (slab.record_bytes() != next - at)
        throw std::runtime_error(name + ": chunked frame, slab " + std::to_string(s) +
                                 ": its head and stream take " +
                                 std::to_string(slab.record_bytes()) +
                                 " bytes, but the index gives it " + std::to_string(next - at));
      listing.slabs.push_back(slab);
    }
    return;
  }
  // In order: each head, its stream skipped.
  std::uint64_t at = ndzip::chunked_header_bytes;
  listing.file_bytes = at;
  for (std::uint64_t s = 0; s < count; ++s) {
    bytes.clear();
    file.read_up_to(bytes, ndzip::slab_head_bytes);
    listing.file_bytes += bytes.size();
    const ndzip::slab_info slab = read_head(s);
    const std::uint64_t rest = slab.record_bytes() - ndzip::slab_head_bytes;
    const std::uint64_t skipped = file.skip(rest);
    listing.file_bytes += skipped;
    if (skipped != rest)
      throw std::runtime_error(name + ": chunked frame, slab " + std::to_string(s) +
                               ": truncated: its head announces " +
                               std::to_string(slab.record_bytes()) + " bytes with its stream, " +
                               std::to_string(ndzip::slab_head_bytes + skipped) + " are there");
    listing.offsets.push_back(at);
    listing.slabs.push_back(slab);
    at += slab.record_bytes();
  }
  bytes.clear();
  file.read_up_to(bytes, end_bytes);
  listing.file_bytes += bytes.size();
  const auto offsets = naming(
      name, [&] { return ndzip::read_chunked_end(info, bytes.data(), bytes.size(), at); });
  listing.index_checksum = trailer_checksum();
  for (std::uint64_t s = 0; s < count; ++s)
    if (offsets[s] != listing.offsets[s])
      throw std::runtime_error(name + ": chunked frame: the index puts slab " +
                               std::to_string(s) + " at " + std::to_string(offsets[s]) +
                               ", but it lies at " + std::to_string(listing.offsets[s]) +
                               " (the index disagrees with the slabs)");
  bytes.clear();
  file.read_up_to(bytes, 1);
  if (!bytes.empty())
    throw std::runtime_error(name + ": not a valid chunked ndzip frame: trailing data after its "
                             "trailer");
}

// The slabs' table of -l and info, each line after `indent`.
void print_slabs(const chunked_listing& listing, const char* indent) {
  const ndzip::chunked_frame_info& info = listing.info;
  std::printf("%s%-6s %-15s %-10s %-26s %12s %7s\n", indent, "slab", "rows", "mode", "coded as",
              "stream bytes", "ratio");
  for (std::size_t s = 0; s < listing.slabs.size(); ++s) {
    const ndzip::slab_info& slab = listing.slabs[s];
    const auto extents = info.slab_extents(s);
    const ndzip::array_shape shape(info.type, info.dimensions, extents.data());
    const ndzip::array_shape coded =
        slab.coded_dimensions == info.dimensions ? shape : ndzip::folded_shape(shape, slab.coded_dimensions);
    const std::string rows = std::to_string(info.first_row(s)) + "-" +
                             std::to_string(info.first_row(s) + extents[0] - 1);
    const std::string coded_text =
        coded.extents_string() + " (" + std::to_string(slab.coded_dimensions) + "-D" +
        (slab.coded_dimensions == info.dimensions ? ")" : ", folded)");
    std::printf("%s%-6zu %-15s %-10s %-26s %12llu %7.4f\n", indent, s, rows.c_str(),
                ndzip::codec_mode_name(slab.mode), coded_text.c_str(),
                static_cast<unsigned long long>(slab.stream_bytes),
                ratio_of(static_cast<std::size_t>(slab.stream_bytes), shape.byte_size()));
  }
}

// -l and info on a chunked frame (`head`: its first bytes, read already): the header, the index
// and every slab head checked and listed, without reading or decoding the streams (-d verifies
// and decodes them). A damaged frame is reported after what could be read of it.
void list_chunked(run_context& ctx, const std::string& path, input_file& file, byte_buffer head) {
  const options& opts = ctx.opts();
  const std::string name = input_name(path);
  file.read_up_to(head, ndzip::chunked_header_bytes);
  chunked_listing listing;
  listing.info = chunked_header_of(name, head);
  try {
    read_chunked_listing(file, name, listing);
  } catch (const std::runtime_error& e) {
    listing.error = e.what();
  }
  const ndzip::chunked_frame_info& info = listing.info;
  const ndzip::array_shape shape(info.type, info.dimensions, info.extents.data());
  const std::size_t array_bytes = shape.byte_size();
  const bool sound = listing.error.empty();
  if (opts.verbosity >= 2) {
    if (ctx.done != 0) std::printf("\n");
    std::printf("file:        %s\n", path == "-" ? "-" : path.c_str());
    std::printf("format:      ndzip-kokkos chunked frame, version %d\n",
                ndzip::frame_version_chunked);
    std::printf("type:        %s\n", ndzip::element_type_name(shape.type()));
    std::printf("dimensions:  %d\n", shape.rank());
    std::printf("extents:     %s (slowest first)\n", shape.extents_string().c_str());
    std::printf("elements:    %zu\n", shape.element_count());
    std::printf("array:       %zu bytes\n", array_bytes);
    std::printf("slabs:       %s\n", slabs_text(info).c_str());
    std::printf("file size:   %llu bytes%s\n", static_cast<unsigned long long>(listing.file_bytes),
                sound || file.regular_size() ? "" : " (as far as it was read)");
    if (sound)
      std::printf("index:       ok (XXH3-64 %s)\n", checksum_string(listing.index_checksum).c_str());
    std::printf("checking:    %s\n",
                sound ? "ok (the header, the index and trailer, every slab head; the slabs' "
                        "streams and checksums are read by -d)"
                      : "FAILED");
    std::printf("file ratio:  %.4f (file bytes / array bytes, as -l)\n",
                ratio_of(static_cast<std::size_t>(listing.file_bytes), array_bytes));
    print_slabs(listing, "  ");
  } else {
    if (ctx.done == 0)
      std::printf(list_header, "Type", "Extents", "Compressed", "Uncompressed", "Ratio", "Check",
                  "Filename");
    std::printf("%-7s %-20s %12s %12s %7.4f %-5s %s\n", ndzip::element_type_name(shape.type()),
                shape.extents_string().c_str(), human_bytes(listing.file_bytes).c_str(),
                human_bytes(array_bytes).c_str(),
                ratio_of(static_cast<std::size_t>(listing.file_bytes), array_bytes),
                sound ? "ok" : "BAD", display_name(path, false).c_str());
    print_slabs(listing, "    ");
  }
  std::fflush(stdout);
  ctx.in_total += array_bytes;
  ctx.out_total += listing.file_bytes;
  ++ctx.done;
  if (!sound) throw std::runtime_error(listing.error);
}

// A line (or with -v, info's block) per frame; "ok" only once the frame has passed every check
// of -d, its stream decoded included. A damaged frame is reported after its line. A chunked
// frame: list_chunked.
void list_one(run_context& ctx, const std::string& path) {
  const options& opts = ctx.opts();
  input_file file(path);
  byte_buffer head;
  file.read_up_to(head, ndzip::frame_header_bytes);
  if (is_chunked_frame(head)) return list_chunked(ctx, path, file, std::move(head));
  const frame_file frame = read_frame(file, std::move(head));
  const array_desc array = frame_array(frame.header);
  const frame_verdict verdict = check_frame(ctx, path, frame);
  if (opts.verbosity >= 2) {
    describe_frame(path, frame, verdict, ctx.done == 0);
  } else {
    if (ctx.done == 0)
      std::printf(list_header, "Type", "Extents", "Compressed", "Uncompressed", "Ratio", "Check",
                  "Filename");
    std::printf("%-7s %-20s %12s %12s %7.4f %-5s %s\n",
                ndzip::element_type_name(array.shape.type()), array.shape.extents_string().c_str(),
                human_bytes(frame.bytes.size()).c_str(),
                human_bytes(array.shape.byte_size()).c_str(),
                ratio_of(frame.bytes.size(), array.shape.byte_size()),
                verdict.result == frame_verdict::kind::sound ? "ok" : "BAD",
                display_name(path, false).c_str());
  }
  std::fflush(stdout);
  ctx.in_total += array.shape.byte_size();
  ctx.out_total += frame.bytes.size();
  ++ctx.done;
  if (verdict.result != frame_verdict::kind::sound) throw std::runtime_error(verdict.error);
}

void print_total(const run_context& ctx) {
  const options& opts = ctx.opts();
  const std::size_t inputs = opts.files.size();
  if (inputs < 2 || ctx.done == 0) return;
  const double ratio = ctx.in_total == 0
                           ? 0.0
                           : static_cast<double>(ctx.out_total) / static_cast<double>(ctx.in_total);
  const std::string failed = ctx.failed > 0 ? ", " + std::to_string(ctx.failed) + " failed" : "";
  switch (opts.op) {
    case operation::compress:
      if (opts.verbosity >= 1)
        std::fprintf(stderr, "%s compressed : %.2f%% (%s => %s)%s\n", file_count(ctx.done).c_str(),
                     100 * ratio, human_bytes(ctx.in_total).c_str(),
                     human_bytes(ctx.out_total).c_str(), failed.c_str());
      break;
    case operation::decompress:
      if (opts.verbosity >= 1)
        std::fprintf(stderr, "%s decompressed : %s => %s%s\n", file_count(ctx.done).c_str(),
                     human_bytes(ctx.in_total).c_str(), human_bytes(ctx.out_total).c_str(),
                     failed.c_str());
      break;
    case operation::list:
      if (opts.verbosity >= 2)
        std::printf("\ntotal:       %s%s, %llu array bytes, %llu file bytes, file ratio %.4f\n",
                    file_count(ctx.done).c_str(), failed.c_str(),
                    static_cast<unsigned long long>(ctx.in_total),
                    static_cast<unsigned long long>(ctx.out_total), ratio);
      else
        std::printf("%-7s %-20s %12s %12s %7.4f %-5s %s\n", "",
                    (file_count(ctx.done) + failed).c_str(), human_bytes(ctx.out_total).c_str(),
                    human_bytes(ctx.in_total).c_str(), ratio, "", "(total)");
      break;
  }
}

}  // namespace

int run_operands(const options& opts) {
  run_context ctx(opts);
  const std::size_t inputs = opts.in_out ? 1 : opts.files.size();
  for (std::size_t i = 0; i < inputs; ++i) {
    const std::string& in = opts.files[i];
    try {
      switch (opts.op) {
        case operation::compress:
          compress_one(ctx, in);
          break;
        case operation::decompress:
          decompress_one(ctx, in);
          break;
        case operation::list:
          list_one(ctx, in);
          break;
      }
    } catch (const std::bad_alloc&) {
      print_error(input_name(in) + ": out of memory");
      ++ctx.failed;
    } catch (const std::exception& e) {
      print_error(codec_message(e));  // messages from the library start with "ndzip: "
      ++ctx.failed;
    }
  }
  if (!opts.in_out) print_total(ctx);
  return ctx.failed > 0 ? 1 : 0;
}

}  // namespace ndzip_cli
