// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Results of ndzip-bench: one row per (input, backend, codec), printed as an aligned table while
// the run goes on and written as CSV and JSON at the end, with corpus aggregates (total bytes /
// total time) per backend and codec.

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace ndzip::perf {

struct result_row {
  std::string mode;     // dataset, aggregate, synthetic or sweep
  std::string dataset;  // file name, "synthetic" or "(all)"
  std::string type;     // float or double
  std::string dims;     // extents slowest first, "x"-separated
  std::string backend;  // serial, openmp, cuda, ... or "host" for peers
  std::string codec;    // ndzip or a peer's name
  int threads = 1;
  double bytes = 0;             // input bytes
  double compressed_bytes = 0;
  double compress_s = 0;        // median times
  double decompress_s = 0;
  double deep_copy_s = 0;       // the same bytes copied on the same backend
  double compress_spread = 0;   // (slowest - fastest) / median of the runs
  double decompress_spread = 0;
  std::string timing = "resident";  // or "with-copies": host-device copies inside the timing
  bool verified = false;        // bit-exact round trip
  std::string same_stream;      // ndzip: "ref", "yes" or "NO" against the first backend; peers: "-"

  double ratio() const { return compressed_bytes / bytes; }
  double compress_gbps() const { return bytes / 1e9 / compress_s; }
  double decompress_gbps() const { return bytes / 1e9 / decompress_s; }
  double deep_copy_gbps() const { return bytes / 1e9 / deep_copy_s; }
  // Share of the memory-bound ceiling: a codec moves about (1 + ratio) bytes per input byte,
  // deep_copy moves 2.
  double ceiling_gbps() const { return 2 * deep_copy_gbps() / (1 + ratio()); }
};

class report {
 public:
  explicit report(std::string method) : m_method(std::move(method)) {}
  void print_header() const;
  // From now on, rows of `backend` take the ceiling from this copy rate (GB/s, measured once on
  // a fixed size: --ceiling-mib) instead of a copy of their own bytes.
  void set_copy_rate(const std::string& backend, double gbps);
  void add(result_row row);  // prints the row
  // Appends one aggregate row per (backend, codec) over the rows of mode "dataset".
  void add_aggregates();
  const std::vector<result_row>& rows() const { return m_rows; }
  // Each replaces `path` with a complete, synced file or fails naming it and why, the previous
  // file kept whole (durable_file.hpp); `append` keeps the rows already in the CSV file.
  void write_csv(const std::string& path, bool append) const;
  void write_json(const std::string& path) const;

 private:
  std::string m_method;
  std::vector<result_row> m_rows;
  std::map<std::string, double> m_copy_gbps;  // backend -> fixed-size copy rate
};

}  // namespace ndzip::perf
