// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "bench_report.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "durable_file.hpp"

namespace ndzip::perf {

namespace {

void print_row(const result_row& r) {
  std::printf(
      "%-22s %-7s %-22s %-6s %-14s %7.4f %9.2f %5.1f%% %9.2f %5.1f%% %4.0f/%-3.0f%% %9.2f %-3s %s\n",
      r.dataset.c_str(), r.backend.c_str(), r.codec.c_str(), r.type.c_str(), r.dims.c_str(),
      r.ratio(), r.compress_gbps(), 100 * r.compress_gbps() / r.ceiling_gbps(),
      r.decompress_gbps(), 100 * r.decompress_gbps() / r.ceiling_gbps(),
      100 * r.compress_spread, 100 * r.decompress_spread, r.deep_copy_gbps(),
      r.verified ? "yes" : "NO", r.same_stream.c_str());
  std::fflush(stdout);
}

// A JSON string literal for s.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + '"';
}

// Replaces `path` by a file holding `text`, all or nothing (durable_file.hpp): on a full disk
// or any other failure the previous file stays whole, and the error names the file and why.
void write_whole(const std::string& path, const std::string& text) {
  try {
    durable_file::replacement file(path);
    file.write(text);
    file.commit_replacing();
  } catch (const std::exception& e) {
    throw std::runtime_error(durable_file::quoted_path(path) + " not written: " + e.what());
  }
}

// What `path` holds, or nothing if there is no such file.
std::optional<std::string> existing_contents(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::string contents;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0)
    contents.append(chunk, static_cast<std::size_t>(in.gcount()));
  if (in.bad() || !in.eof())
    throw std::runtime_error("cannot read " + durable_file::quoted_path(path) + ": " +
                             std::strerror(errno));
  return contents;
}

}  // namespace

void report::print_header() const {
  std::printf("%s\n", m_method.c_str());
  std::printf("%-22s %-7s %-22s %-6s %-14s %7s %9s %6s %9s %6s %9s %9s %-3s %s\n", "input",
              "backend", "codec", "type", "extents", "ratio", "compress", "", "decomp", "",
              "spread", "deep_copy", "ok", "same");
}

void report::set_copy_rate(const std::string& backend, double gbps) {
  m_copy_gbps[backend] = gbps;
}

void report::add(result_row row) {
  if (const auto rate = m_copy_gbps.find(row.backend); rate != m_copy_gbps.end())
    row.deep_copy_s = row.bytes / 1e9 / rate->second;
  print_row(row);
  m_rows.push_back(std::move(row));
}

void report::add_aggregates() {
  std::map<std::pair<std::string, std::string>, result_row> totals;
  for (const auto& r : m_rows) {
    if (r.mode != "dataset") continue;
    auto [it, inserted] = totals.try_emplace({r.backend, r.codec});
    auto& t = it->second;
    if (inserted) {
      t = {"aggregate", "(all)", "mixed", "-", r.backend, r.codec, r.threads};
      t.timing = r.timing;
      t.verified = true;
      t.same_stream = r.same_stream == "-" ? "-" : "yes";
    }
    t.bytes += r.bytes;
    t.compressed_bytes += r.compressed_bytes;
    t.compress_s += r.compress_s;
    t.decompress_s += r.decompress_s;
    t.deep_copy_s += r.deep_copy_s;
    t.verified = t.verified && r.verified;
    if (r.same_stream == "NO") t.same_stream = "NO";
    if (r.same_stream == "ref") t.same_stream = "ref";
  }
  for (auto& entry : totals) add(std::move(entry.second));
}

void report::write_csv(const std::string& path, bool append) const {
  // --append: the rows so far and these, in a new file that replaces the old one whole.
  const std::optional<std::string> before = append ? existing_contents(path) : std::nullopt;
  std::ostringstream out;
  if (before)
    out << *before;
  else
    out << "mode,dataset,type,dims,backend,codec,threads,bytes,ratio,compress_gbps,"
           "decompress_gbps,deep_copy_gbps,compress_fraction,decompress_fraction,verified,"
           "same_stream,compress_spread,decompress_spread,timing\n";
  for (const auto& r : m_rows) {
    char numbers[256];
    std::snprintf(numbers, sizeof numbers, "%d,%.0f,%.6f,%.4f,%.4f,%.4f,%.4f,%.4f", r.threads,
                  r.bytes, r.ratio(), r.compress_gbps(), r.decompress_gbps(), r.deep_copy_gbps(),
                  r.compress_gbps() / r.ceiling_gbps(), r.decompress_gbps() / r.ceiling_gbps());
    out << r.mode << ',' << r.dataset << ',' << r.type << ',' << r.dims << ',' << r.backend << ','
        << r.codec << ',' << numbers << ',' << (r.verified ? "yes" : "no") << ','
        << r.same_stream << ',' << r.compress_spread << ',' << r.decompress_spread << ','
        << r.timing << '\n';
  }
  write_whole(path, out.str());
}

void report::write_json(const std::string& path) const {
  std::ostringstream out;
  out << "{\n  \"method\": " << quoted(m_method) << ",\n  \"rows\": [";
  for (std::size_t i = 0; i < m_rows.size(); ++i) {
    const auto& r = m_rows[i];
    char numbers[400];
    std::snprintf(numbers, sizeof numbers,
                  "\"threads\": %d, \"bytes\": %.0f, \"ratio\": %.6f, \"compress_gbps\": %.4f, "
                  "\"decompress_gbps\": %.4f, \"deep_copy_gbps\": %.4f, "
                  "\"compress_spread\": %.4f, \"decompress_spread\": %.4f",
                  r.threads, r.bytes, r.ratio(), r.compress_gbps(), r.decompress_gbps(),
                  r.deep_copy_gbps(), r.compress_spread, r.decompress_spread);
    out << (i ? ",\n    " : "\n    ") << "{\"mode\": " << quoted(r.mode)
        << ", \"dataset\": " << quoted(r.dataset) << ", \"type\": " << quoted(r.type)
        << ", \"dims\": " << quoted(r.dims) << ", \"backend\": " << quoted(r.backend)
        << ", \"codec\": " << quoted(r.codec) << ", " << numbers
        << ", \"verified\": " << (r.verified ? "true" : "false")
        << ", \"same_stream\": " << quoted(r.same_stream)
        << ", \"timing\": " << quoted(r.timing) << "}";
  }
  out << "\n  ]\n}\n";
  write_whole(path, out.str());
}

}  // namespace ndzip::perf
