#pragma once
// Shared by the bench/ programs (kusari's and the libtorch twins; nothing here depends on either
// library): the command-line options, the step timer that prints "name: X ms/step, Y samples/s", and
// the process's peak resident memory.

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>

namespace kusari::bench {

// What every bench program reads from its command line; the program gives the defaults.
struct Options {
  int threads = 1;         // --threads N: the library's thread count
  int warmup = 20;         // --warmup N: untimed steps first
  int min_steps = 20;      // --steps N: at least this many timed steps
  double seconds = 2.0;    // --seconds S: and at least this long a timed window
  std::string dtype = "float32";  // --dtype NAME: the parameters' and inputs' dtype (kusari programs)
  std::string device = "cpu";     // --device NAME: where the model and inputs live (kusari programs)
  int batch = 0;                  // --batch N: the batch size (0: the program's own)
  bool channels_last = false;     // --channels-last 0|1: image inputs in channels-last order (kusari programs)
  bool profile = false;           // --profile 0|1: the profiler's report of the timed steps (kusari programs)
};

// Reads --threads, --warmup, --steps, --seconds, --dtype, --device, --batch, --channels-last and --profile over
// `defaults`; --help prints them and exits 0,
// anything else (an unknown flag, a missing or malformed value) exits 2 with a message on stderr.
inline Options parse_options(int argc, char** argv, Options defaults = {}) {
  const char* usage =
      "flags: --threads N, --warmup STEPS, --steps LEAST_TIMED_STEPS, --seconds LEAST_TIMED_SECONDS, --dtype NAME, "
      "--device cpu|cuda:N|loopback:N, --batch N, --channels-last 0|1, --profile 0|1";
  Options options = defaults;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--help") {
      std::printf("%s\n", usage);
      std::exit(0);
    }
    const auto fail = [&](const std::string& message) {
      std::fprintf(stderr, "%s: %s (%s)\n", argv[0], message.c_str(), usage);
      std::exit(2);
    };
    if (i + 1 >= argc) fail("missing the value of " + flag);
    const std::string value = argv[i + 1];
    try {
      if (flag == "--threads") {
        options.threads = std::stoi(value);
      } else if (flag == "--warmup") {
        options.warmup = std::stoi(value);
      } else if (flag == "--steps") {
        options.min_steps = std::stoi(value);
      } else if (flag == "--seconds") {
        options.seconds = std::stod(value);
      } else if (flag == "--dtype") {
        options.dtype = value;
      } else if (flag == "--device") {
        options.device = value;
      } else if (flag == "--batch") {
        options.batch = std::stoi(value);
      } else if (flag == "--channels-last") {
        options.channels_last = std::stoi(value) != 0;
      } else if (flag == "--profile") {
        options.profile = std::stoi(value) != 0;
      } else {
        fail("unknown flag " + flag);
      }
    } catch (const std::logic_error&) {  // std::stoi / std::stod found no number, or one out of range
      fail("expected a number after " + flag + ", got \"" + value + "\"");
    }
  }
  return options;
}

// Text a benchmark appends to its line, computed once the timed steps have run (empty for none).
using Suffix = std::function<std::string()>;

// Runs `step` warmup times, then for at least `min_seconds` (and `min_steps` steps), and prints one
// line in the bench format followed by suffix(). Returns the mean milliseconds per step.
inline double time_steps(const std::string& name, int64_t batch_size, const std::function<void()>& step,
                         int warmup = 20, int min_steps = 20, double min_seconds = 2.0, const Suffix& suffix = {}) {
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
              static_cast<double>(batch_size) * 1000.0 / ms, suffix ? suffix().c_str() : "");
  std::fflush(stdout);
  return ms;
}

// time_steps with the warm-up, step count and window of `options`.
inline double time_steps(const std::string& name, int64_t batch_size, const std::function<void()>& step,
                         const Options& options, const Suffix& suffix = {}) {
  return time_steps(name, batch_size, step, options.warmup, options.min_steps, options.seconds, suffix);
}

// The peak resident set size of this process so far, in MiB (getrusage's ru_maxrss).
inline long peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;  // Linux reports kibibytes
}

// The " peak_rss_mb=N" suffix the memory-measuring benchmarks append to their line.
inline std::string peak_rss_suffix() { return " peak_rss_mb=" + std::to_string(peak_rss_mb()); }

}  // namespace kusari::bench
