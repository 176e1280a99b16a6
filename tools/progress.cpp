// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "progress.hpp"

#include <cstdio>
#include <utility>

namespace ndzip_cli {

namespace {

constexpr auto first_draw = std::chrono::seconds(1);
constexpr auto redraw = std::chrono::milliseconds(200);

}  // namespace

std::string human_bytes(std::uint64_t bytes) {
  const char* const units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(text, sizeof text,
                  value < 10    ? "%.2f %s"
                  : value < 100 ? "%.1f %s"
                                : "%.0f %s",
                  value, units[unit]);
  return text;
}

progress_bar::progress_bar(bool enabled, std::string label) : m_label(std::move(label)) {
  if (enabled) m_thread = std::thread([this] { run(); });
}

progress_bar::~progress_bar() {
  if (m_thread.joinable()) {
    {
      std::lock_guard lock(m_mutex);
      m_stop = true;
    }
    m_wake.notify_all();
    m_thread.join();
  }
  erase();
}

void progress_bar::step(std::string what, std::optional<std::uint64_t> total) {
  std::lock_guard lock(m_mutex);
  m_what = std::move(what);
  m_total = total;
  m_step_start = clock::now();
  m_done.store(0, std::memory_order_relaxed);
}

void progress_bar::erase() {
  std::lock_guard lock(m_mutex);
  if (m_drawn) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    m_drawn = false;
  }
}

void progress_bar::run() {
  std::unique_lock lock(m_mutex);
  if (m_wake.wait_until(lock, m_start + first_draw, [this] { return m_stop; })) return;
  while (!m_stop) {
    draw();
    m_wake.wait_for(lock, redraw, [this] { return m_stop; });
  }
}

// With m_mutex held.
void progress_bar::draw() {
  const std::uint64_t done = m_done.load(std::memory_order_relaxed);
  const double seconds = std::chrono::duration<double>(clock::now() - m_step_start).count();
  std::string line = m_label + " : " + m_what;
  if (done > 0 || m_total) {
    line += ' ' + human_bytes(done);
    if (m_total && *m_total > 0) {
      char percent[16];
      std::snprintf(
          percent, sizeof percent, " (%u%%)",
          static_cast<unsigned>(100.0 * static_cast<double>(done) / static_cast<double>(*m_total)));
      line += " / " + human_bytes(*m_total) + percent;
    }
    if (seconds > 0 && done > 0) {
      char rate[32];
      std::snprintf(rate, sizeof rate, "  %.2f GB/s", static_cast<double>(done) / seconds / 1e9);
      line += rate;
    }
  }
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "  %.1f s",
                std::chrono::duration<double>(clock::now() - m_start).count());
  line += elapsed;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  m_drawn = true;
}

}  // namespace ndzip_cli
