#include <kusari/training/plot_report.h>

#include <filesystem>

#include <kusari/serializers/atomic_file.h>
#include <kusari/training/serialize_values.h>
#include <kusari/training/svg_plot.h>
#include <kusari/training/trainer.h>

namespace kusari::training {

PlotReport::PlotReport(std::vector<std::string> y_keys, PlotReportOptions options)
    : y_keys_(std::move(y_keys)), options_(std::move(options)) {
  if (y_keys_.empty()) throw ValueError("PlotReport: expected at least one key to plot, got none");
  if (!options_.trigger) options_.trigger = Trigger(1, "epoch");
}

void PlotReport::operator()(Trainer& trainer) {
  const Observation& observation = trainer.observation();
  Observation selected;
  for (const std::string& key : y_keys_) {
    if (auto it = observation.find(key); it != observation.end()) selected.insert(*it);
  }
  if (auto it = observation.find(options_.x_key); it != observation.end()) selected.insert(*it);
  summary_.add(selected);
  if (!options_.trigger(trainer)) return;
  Observation means = summary_.compute_mean();
  summary_.clear();
  means["epoch"] = static_cast<double>(trainer.updater().epoch());
  means["iteration"] = static_cast<double>(trainer.updater().iteration());
  const auto x = means.find(options_.x_key);
  if (x == means.end()) return;  // nothing to place the points at in this interval
  for (const std::string& key : y_keys_) {
    const auto y = means.find(key);
    if (y == means.end()) continue;
    auto& [xs, ys] = points_[key];
    xs.push_back(x->second);
    ys.push_back(y->second);
  }
  std::vector<PlotSeries> series;
  for (const std::string& key : y_keys_) {
    const auto it = points_.find(key);
    if (it != points_.end() && !it->second.first.empty()) series.push_back({key, it->second.first, it->second.second});
  }
  serializers::AtomicFile file((std::filesystem::path(trainer.out()) / options_.filename).string());
  file.write(svg_line_plot(series, options_.x_key));
  file.commit();
}

void PlotReport::serialize(Serializer& serializer) {
  options_.trigger.serialize(serializer["trigger"]);
  summary_.serialize(serializer["summary"]);
  for (const std::string& key : y_keys_) {
    auto& [xs, ys] = points_[key];
    serialize_vector(serializer["points"][key], "x", xs);
    serialize_vector(serializer["points"][key], "y", ys);
    if (xs.size() != ys.size()) {
      throw ValueError(cat("PlotReport: loaded ", xs.size(), " x values and ", ys.size(), " y values for '", key, "'"));
    }
  }
}

}  // namespace kusari::training
