#pragma once
// Hyperparameters measured in epochs (warm-up lengths, milestones) are stated for the paper's 90
// epochs; unless given on the command line they scale with the run's --epoch, so the imagenet preset
// keeps the paper's values and a 15-epoch run keeps the paper's proportions.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kusari::recipes {

// A flag in epochs whose default is `paper` epochs of `paper_epochs`, scaled to the run's length.
class EpochScaled {
 public:
  // A value whose paper default is `paper` out of `paper_epochs` epochs; a `list` flag takes any number
  // of comma-separated epochs (milestones), else exactly one (a warm-up length).
  EpochScaled(std::vector<double> paper, bool list, double paper_epochs = 90)
      : paper_(std::move(paper)), paper_epochs_(paper_epochs), list_(list) {}
  // Adds the flag (one number, or a comma-separated list).
  void add_to(CLI::App& app, const std::string& flag, const std::string& what);
  // Replaces the paper's value (one that depends on other flags, such as the batch).
  void set_paper(std::vector<double> paper, double paper_epochs = 90) {
    paper_ = std::move(paper);
    paper_epochs_ = paper_epochs;
  }
  // The given value, or the paper's scaled by epochs / paper_epochs; also shown as the flag's default.
  void resolve(double epochs);
  // The resolved values.
  const std::vector<double>& values() const { return values_; }
  // The resolved single value.
  double value() const { return values_.at(0); }

 private:
  std::vector<double> paper_;
  double paper_epochs_;
  bool list_;
  std::vector<double> values_;
  CLI::Option* option_ = nullptr;
};

}  // namespace kusari::recipes
