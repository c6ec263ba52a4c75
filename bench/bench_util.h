#pragma once
// Shared by the bench/ programs (kusari's and the libtorch twins; nothing here depends on either
// library): the command-line options (CLI11), the step timer that prints "name: X ms/step, Y samples/s", and
// the process's peak resident memory.

#include <sys/resource.h>

#include <CLI/CLI.hpp>

#include "flag_validators.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
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
  bool cudnn_benchmark = false;   // --cudnn-benchmark 0|1: cuDNN's algorithms timed, not by heuristics (kusari programs)
};

// Parses the command line into `app`'s options: --help prints them with their defaults and exits 0; a bad
// command line (an unknown flag, a missing or malformed value) exits 2 with CLI11's message, which
// names the flag, what it expects and what came.
inline void parse_or_exit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    std::exit(0);
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "%s: %s (--help lists every flag)\n", argv[0], error.what());
    std::exit(2);
  }
}

// A program's own flags, added to the common ones.
using MoreFlags = std::function<void(CLI::App&)>;

// Reads the flags above over `defaults`, and the program's own (`more`) (parse_or_exit).
inline Options parse_options(int argc, char** argv, Options defaults = {}, const MoreFlags& more = {}) {
  Options options = defaults;
  CLI::App app{"One line per workload: \"name: X ms/step, Y samples/s\"."};
  app.add_option("--threads", options.threads, "the library's thread count")->check(flags::positive_integer())
      ->capture_default_str();
  app.add_option("--warmup", options.warmup, "untimed steps first")->check(flags::nonnegative_integer())
      ->capture_default_str();
  app.add_option("--steps", options.min_steps, "at least this many timed steps")->check(flags::positive_integer())
      ->capture_default_str();
  app.add_option("--seconds", options.seconds, "and a timed window at least this long")
      ->check(flags::nonnegative_number())
      ->capture_default_str();
  app.add_option("--dtype", options.dtype, "the parameters' and inputs' dtype (kusari programs)")
      ->check(flags::one_of({"float32", "float64", "float16", "bfloat16"}))->capture_default_str();
  app.add_option("--device", options.device, "cpu, cuda:N or loopback:N (kusari programs)")->capture_default_str();
  app.add_option("--batch", options.batch, "the batch size (0: the program's own)")->check(flags::nonnegative_integer())
      ->capture_default_str();
  app.add_option("--channels-last", options.channels_last, "image inputs in channels-last order (kusari programs)")
      ->capture_default_str();
  app.add_option("--profile", options.profile, "the profiler's report of the timed steps (kusari programs)")
      ->capture_default_str();
  app.add_option("--cudnn-benchmark", options.cudnn_benchmark,
                 "GPUs: cuDNN's convolution algorithms chosen by timing, not by its heuristics (kusari programs)")
      ->capture_default_str();
  if (more) more(app);
  parse_or_exit(app, argc, argv);
  return options;
}

// Text a benchmark appends to its line, computed once the timed steps have run (empty for none).
using Suffix = std::function<std::string()>;

// Runs `step` warmup times, then for at least `min_seconds` (and `min_steps` steps); returns the mean
// milliseconds per timed step.
inline double mean_step_ms(const std::function<void()>& step, int warmup, int min_steps, double min_seconds) {
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
  return elapsed * 1000.0 / static_cast<double>(steps);
}

// Times `step` as mean_step_ms does and prints one line in the bench format followed by suffix().
// Returns the mean milliseconds per step.
inline double time_steps(const std::string& name, int64_t batch_size, const std::function<void()>& step,
                         int warmup = 20, int min_steps = 20, double min_seconds = 2.0, const Suffix& suffix = {}) {
  const double ms = mean_step_ms(step, warmup, min_steps, min_seconds);
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
