#pragma once
// Shared by the bench/ programs: times a training step and prints "name: X ms/step, Y samples/s".

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

namespace kusari::bench {

// Runs `step` warmup times, then for at least `min_seconds` (and `min_steps` steps), and prints one
// line in the bench format. Returns the mean milliseconds per step.
inline double time_steps(const std::string& name, int64_t batch_size, const std::function<void()>& step,
                         int warmup = 20, int min_steps = 20, double min_seconds = 2.0,
                         const std::string& suffix = "") {
  for (int i = 0; i < warmup; ++i) step();
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  int64_t steps = 0;
  double elapsed = 0;
  while (steps < min_steps || elapsed < min_seconds) {
    step();
    ++steps;
    elapsed = std::chrono::duration<double>(clock::now() - start).count();
  }
  const double ms = elapsed * 1000.0 / static_cast<double>(steps);
  std::printf("%s: %.4f ms/step, %.1f samples/s%s\n", name.c_str(), ms,
              static_cast<double>(batch_size) * 1000.0 / ms, suffix.c_str());
  std::fflush(stdout);
  return ms;
}

}  // namespace kusari::bench
