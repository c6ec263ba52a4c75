#include <kusari/training/log_report.h>

#include <filesystem>

#include <kusari/core/json_text.h>
#include <kusari/serializers/atomic_file.h>
#include <kusari/training/serialize_values.h>
#include <kusari/training/trainer.h>

namespace kusari::training {

std::string log_to_json(const std::vector<Observation>& log) {
  if (log.empty()) return "[]";
  std::string out = "[";
  for (size_t i = 0; i < log.size(); ++i) {
    out += i == 0 ? "\n    {" : ",\n    {";
    bool first = true;
    for (const auto& [key, value] : log[i]) {
      out += first ? "\n        " : ",\n        ";
      out += json_string(key) + ": " + json_number(value);
      first = false;
    }
    out += log[i].empty() ? "}" : "\n    }";
  }
  return out + "\n]";
}

LogReport::LogReport(LogReportOptions options) : options_(std::move(options)) {
  if (!options_.trigger) options_.trigger = Trigger(1, "epoch");
}

void LogReport::operator()(Trainer& trainer) {
  const Observation& observation = trainer.observation();
  if (options_.keys.empty()) {
    summary_.add(observation);
  } else {
    Observation selected;
    for (const std::string& key : options_.keys) {
      if (auto it = observation.find(key); it != observation.end()) selected.insert(*it);
    }
    summary_.add(selected);
  }
  if (!options_.trigger(trainer)) return;
  Observation entry = summary_.compute_mean();
  summary_.clear();
  const Updater& updater = trainer.updater();
  entry["epoch"] = static_cast<double>(updater.epoch());
  entry["iteration"] = static_cast<double>(updater.iteration());
  entry["elapsed_time"] = trainer.elapsed_time();
  if (options_.postprocess) options_.postprocess(entry);
  log_.push_back(std::move(entry));
  if (options_.filename.empty()) return;
  serializers::AtomicFile file((std::filesystem::path(trainer.out()) / options_.filename).string());
  file.write(log_to_json(log_));
  file.write("\n");
  file.commit();
}

void LogReport::serialize(Serializer& serializer) {
  options_.trigger.serialize(serializer["trigger"]);
  summary_.serialize(serializer["summary"]);
  // The entries flattened: entry i holds the next sizes[i] keys and values.
  std::vector<int64_t> sizes;
  std::vector<std::string> keys;
  std::vector<double> values;
  for (const Observation& entry : log_) {
    sizes.push_back(static_cast<int64_t>(entry.size()));
    for (const auto& [key, value] : entry) {
      keys.push_back(key);
      values.push_back(value);
    }
  }
  serialize_vector(serializer["log"], "sizes", sizes);
  serialize_strings(serializer["log"], "keys", keys);
  serialize_vector(serializer["log"], "values", values);
  if (!serializer.is_loading()) return;
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0) throw ValueError(cat("LogReport: loaded a negative entry size ", size));
    total += size;
  }
  if (total != static_cast<int64_t>(keys.size()) || keys.size() != values.size()) {
    throw ValueError(cat("LogReport: loaded entry sizes summing to ", total, " with ", keys.size(), " keys and ",
                         values.size(), " values"));
  }
  std::vector<Observation> loaded;
  size_t next = 0;
  for (int64_t size : sizes) {
    Observation& entry = loaded.emplace_back();
    for (int64_t k = 0; k < size; ++k, ++next) entry[keys[next]] = values[next];
  }
  log_ = std::move(loaded);
}

}  // namespace kusari::training
