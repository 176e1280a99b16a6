// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
// Repeated timing for the perf binaries: warm-up, then repeat until both a minimum number of
// runs and a minimum total time are reached; report the median (robust on noisy machines).

#include <algorithm>
#include <chrono>
#include <vector>

namespace ndzip::perf {

struct timing {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  int runs = 0;

  // (slowest - fastest) / median: how far the runs spread around the reported figure.
  double spread() const { return median_s > 0 ? (max_s - min_s) / median_s : 0; }
};

// `run` must complete its work before returning (fence the execution space inside it).
template <class F>
timing measure(F&& run, int min_runs = 5, double min_total_s = 1.0) {
  using clock = std::chrono::steady_clock;
  run();  // warm-up: first-touch, caches, lazy initialisation
  std::vector<double> seconds;
  double total = 0;
  while (static_cast<int>(seconds.size()) < min_runs || total < min_total_s) {
    const auto start = clock::now();
    run();
    const double s = std::chrono::duration<double>(clock::now() - start).count();
    seconds.push_back(s);
    total += s;
  }
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  const double median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  return {median, seconds.front(), seconds.back(), static_cast<int>(n)};
}

}  // namespace ndzip::perf
