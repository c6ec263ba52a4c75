#include <kusari/training/best_value_trigger.h>

#include <kusari/core/error.h>
#include <kusari/training/serialize_values.h>
#include <kusari/training/trainer.h>

namespace kusari::training {

BestValueTrigger::BestValueTrigger(std::string key, Better better, Trigger trigger)
    : key_(std::move(key)), better_(better), interval_(trigger ? std::move(trigger) : Trigger(1, "epoch")) {}

bool BestValueTrigger::operator()(const Trainer& trainer) {
  const Observation& observation = trainer.observation();
  if (auto it = observation.find(key_); it != observation.end()) summary_.add({{key_, it->second}});
  if (!interval_(trainer)) return false;
  const Observation means = summary_.compute_mean();
  summary_.clear();
  const auto mean = means.find(key_);
  if (mean == means.end()) {
    std::string seen;
    for (const auto& [key, value] : observation) seen += cat(seen.empty() ? "" : ", ", "'", key, "'");
    throw ValueError(cat("BestValueTrigger: '", key_, "' was not observed in the interval; the observation has ",
                         seen.empty() ? "no keys" : seen));
  }
  const double value = mean->second;
  const bool improved =
      !best_ || (better_ == Better::lower ? value < *best_ : value > *best_);
  if (improved) best_ = value;
  return improved;
}

void BestValueTrigger::serialize(Serializer& serializer) {
  interval_.serialize(serializer["interval_trigger"]);
  summary_.serialize(serializer["summary"]);
  bool has_best = best_.has_value();
  double best = best_.value_or(0);
  serialize_flag(serializer, "has_best", has_best);
  serializer("best_value", best);
  best_ = has_best ? std::optional<double>(best) : std::nullopt;
}

}  // namespace kusari::training
