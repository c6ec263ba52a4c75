#pragma once
// PlotReport: plots the interval means of observed keys against the epoch or iteration as an SVG
// line chart under the trainer's out directory (Chainer's PlotReport, without matplotlib).

#include <map>
#include <string>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/training/dict_summary.h>
#include <kusari/training/extension.h>

namespace kusari::training {

// Settings of a PlotReport.
struct KUSARI_API PlotReportOptions {
  std::string x_key = "epoch";        // "epoch", "iteration" or an observed key
  Trigger trigger = {1, "epoch"};     // when a point is added and the file rewritten
  std::string filename = "plot.svg";  // under the trainer's out directory
};

// Plots the keys `y_keys` (e.g. {"main/loss", "validation/main/loss"}).
class KUSARI_API PlotReport : public Extension {
 public:
  // Plots `y_keys`; throws ValueError when there is none.
  explicit PlotReport(std::vector<std::string> y_keys, PlotReportOptions options = {});
  // Adds the iteration's observation of the keys; when the interval ends, adds each key's mean as a
  // point at x and rewrites the SVG (under a temporary name, then renamed).
  void operator()(Trainer& trainer) override;
  std::string default_name() const override { return "PlotReport"; }
  // Saves or loads the interval trigger, the running summary and the points.
  void serialize(Serializer& serializer) override;

 private:
  std::vector<std::string> y_keys_;
  PlotReportOptions options_;
  DictSummary summary_;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> points_;  // key -> (xs, ys)
};

}  // namespace kusari::training
