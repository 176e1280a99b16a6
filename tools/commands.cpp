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

#include "codec.hpp"
#include "decode.hpp"
#include "file_io.hpp"
#include "framing.hpp"
#include "inputs.hpp"
#include "npy_format.hpp"
#include "progress.hpp"
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
  array_file input = read_array_to_compress(in, opts.request(), advance);
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

  ctx.in_total += in_bytes;
  ctx.out_total += out_bytes;
  ++ctx.done;
  if (ctx.summarize())
    std::fprintf(stderr, "%s : %.2f%% (%s => %s, %s)\n", display_name(in, false).c_str(),
                 100.0 * static_cast<double>(out_bytes) / static_cast<double>(in_bytes),
                 human_bytes(in_bytes).c_str(), human_bytes(out_bytes).c_str(),
                 display_name(out, true).c_str());
  if (opts.verbosity >= 2)
    std::fprintf(stderr, "  %s on %s: compressed in %.3f s (%.2f GB/s), %.3f s in all\n",
                 array.shape.to_string().c_str(), opts.backend.c_str(), codec_seconds,
                 static_cast<double>(in_bytes) / codec_seconds / 1e9, seconds_since(start));
}

void decompress_one(run_context& ctx, const std::string& in) {
  const options& opts = ctx.opts();
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
    input = read_frame(in, advance).bytes;
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

  ctx.in_total += in_bytes;
  ctx.out_total += out_bytes;
  ++ctx.done;
  if (ctx.summarize())
    std::fprintf(stderr, "%s : %s => %s (%s, %s)\n", display_name(in, false).c_str(),
                 human_bytes(in_bytes).c_str(), human_bytes(out_bytes).c_str(),
                 array.shape.to_string().c_str(), display_name(out, true).c_str());
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

// A line (or with -v, info's block) per frame; "ok" only once the frame has passed every check
// of -d, its stream decoded included. A damaged frame is reported after its line.
void list_one(run_context& ctx, const std::string& path) {
  const options& opts = ctx.opts();
  const frame_file frame = read_frame(path);
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
