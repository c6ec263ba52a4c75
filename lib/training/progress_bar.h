#pragma once
// ProgressBar: shows how far training has come, how fast it goes and when it will end.

#include <cstdint>
#include <deque>
#include <iostream>
#include <optional>

#include <kusari/core/api.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// Settings of a ProgressBar.
struct KUSARI_API ProgressBarOptions {
  std::optional<TrainingLength> training_length{};  // default: the stop trigger's
  int64_t update_interval = 100;                   // iterations between redraws
  int64_t bar_length = 50;                         // characters of each bar
  std::ostream* out = nullptr;                     // default: std::cout
  std::optional<bool> terminal{};  // redraw in place; default: whether out is std::cout on a terminal
};

// Every update_interval iterations, on a terminal redraws (with \r and ANSI cursor codes) a bar for the
// whole run and one for the current epoch, the iteration and epoch counts, iterations per second and
// the estimated time left; elsewhere (a file, a pipe) prints one plain line with the same numbers.
class KUSARI_API ProgressBar : public Extension {
 public:
  // Throws ValueError for an update_interval or bar_length below 1.
  explicit ProgressBar(ProgressBarOptions options = {});
  // Records the time of this iteration and redraws every update_interval iterations.
  void operator()(Trainer& trainer) override;
  std::string default_name() const override { return "ProgressBar"; }
  // Takes the training length (throws ValueError when neither the options nor the stop trigger give
  // one) and starts the clock.
  void initialize(Trainer& trainer) override;
  // On a terminal, clears what was drawn.
  void finalize(Trainer& trainer) override;

 private:
  // One point of the recent history that speeds are measured over.
  struct Timing {
    int64_t iteration;
    double epoch_detail;
    double seconds;
  };
  void draw(const Trainer& trainer, double seconds);

  ProgressBarOptions options_;
  TrainingLength length_;
  std::ostream* out_;
  bool terminal_;
  std::deque<Timing> recent_;
};

}  // namespace kusari::training
