// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// The progress bar: one line on standard error, redrawn a few times a second, naming the input,
// what is being done with it (reading, compressing, writing, ...), the bytes done of how many,
// and the rate. It appears only once an input has taken a second, so that small files never
// flicker, and only where the caller enables it (a terminal on standard error, not -q).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace ndzip_cli {

class progress_bar {
 public:
  // Draws nothing and starts no thread unless `enabled`.
  progress_bar(bool enabled, std::string label);
  ~progress_bar();  // erases the line
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;

  // Starts a step ("reading"), of `total` bytes where known; the count restarts at 0.
  void step(std::string what, std::optional<std::uint64_t> total);
  // `bytes` more of the current step are done. Cheap: called from the I/O loops.
  void advance(std::size_t bytes) { m_done.fetch_add(bytes, std::memory_order_relaxed); }
  // Erases the line (before a message is printed in its place).
  void erase();

 private:
  using clock = std::chrono::steady_clock;
  void run();
  void draw();

  std::string m_label;
  clock::time_point m_start = clock::now();
  std::mutex m_mutex;  // guards the step's description, m_stop and m_drawn
  std::condition_variable m_wake;
  std::string m_what;
  std::optional<std::uint64_t> m_total;
  clock::time_point m_step_start = m_start;
  std::atomic<std::uint64_t> m_done{0};
  bool m_stop = false;
  bool m_drawn = false;
  std::thread m_thread;  // last: started once everything above is initialized
};

// "37.3 MB", "1.02 GB", "512 B" (decimal units, as zstd prints).
std::string human_bytes(std::uint64_t bytes);

}  // namespace ndzip_cli
