#pragma once
// ProfileReport: profiles a window of iterations after a warm-up (core/profiler.h: GPU kernels, copies
// and memsets by kernel and by kusari function, host time by function) and writes the report into the
// trainer's output directory and to the standard output (the recipes' --profile N).

#include <cstdint>
#include <string>

#include <kusari/core/api.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// Starts the profiler once `warmup` iterations have run (at once when a resumed run is past them) and
// stops it `iterations` later (or when the run ends first), then writes the report to <out>/<filename>
// (atomically) and prints it; once per run.
class KUSARI_API ProfileReport : public Extension {
 public:
  // Profiles iterations warmup + 1 ... warmup + iterations (iterations >= 1, else ValueError).
  ProfileReport(int64_t warmup, int64_t iterations, std::string filename = "profile.txt", bool print = true);
  void operator()(Trainer& trainer) override;
  void initialize(Trainer& trainer) override;
  void finalize(Trainer& trainer) override;
  std::string default_name() const override { return "ProfileReport"; }
  // Last in an iteration, so that its window holds the other extensions' work of those iterations.
  int priority() const override { return kPrioritySnapshot - 1; }

 private:
  void start_if_due(int64_t iteration);
  void report(Trainer& trainer);
  int64_t warmup_, iterations_;
  std::string filename_;
  bool print_;
  bool recording_ = false, done_ = false;
  int64_t started_at_ = 0;
};

}  // namespace kusari::training
