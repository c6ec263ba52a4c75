#include <kusari/training/dict_summary.h>

#include <vector>

#include <kusari/core/error.h>
#include <kusari/kernels/routines.h>
#include <kusari/training/serialize_values.h>

namespace kusari::training {

void DictSummary::add(const Observation& observation, double weight) {
  if (!(weight > 0)) throw ValueError(cat("DictSummary::add: expected a weight > 0, got ", weight));
  for (const auto& [key, value] : observation) {
    Total& total = totals_[key];
    if (const Array on_device = value.on_device(); on_device.defined()) {
      Array weighted = on_device.reshape({}).astype(Dtype::float64);
      if (weight != 1) weighted = ops::mul(weighted, ops::scalar_like(weight, weighted));
      if (total.device_sum.defined() && !(total.device_sum.device() == weighted.device())) {
        total.weighted_sum = total.sum();  // a key moved to another device: its sum so far read here
        total.device_sum = Array();
      }
      total.device_sum = total.device_sum.defined() ? ops::add(total.device_sum, weighted) : weighted;
    } else {
      total.weighted_sum += weight * value;
    }
    total.weight += weight;
  }
}

void DictSummary::merge(const DictSummary& other) {
  for (const auto& [key, total] : other.totals_) {
    Total& mine = totals_[key];
    mine.weighted_sum += total.sum();
    mine.weight += total.weight;
  }
}

Observation DictSummary::compute_mean() const {
  Observation means;
  for (const auto& [key, total] : totals_) means[key] = total.sum() / total.weight;
  return means;
}

void DictSummary::serialize(Serializer& serializer) {
  std::vector<std::string> keys;
  std::vector<double> sums, weights;
  for (const auto& [key, total] : totals_) {
    keys.push_back(key);
    sums.push_back(total.sum());
    weights.push_back(total.weight);
  }
  serialize_strings(serializer, "keys", keys);
  serialize_vector(serializer, "weighted_sums", sums);
  serialize_vector(serializer, "weights", weights);
  if (!serializer.is_loading()) return;
  if (sums.size() != keys.size() || weights.size() != keys.size()) {
    throw ValueError(cat("DictSummary: loaded ", keys.size(), " keys with ", sums.size(), " sums and ",
                         weights.size(), " weights"));
  }
  totals_.clear();
  for (size_t i = 0; i < keys.size(); ++i) totals_[keys[i]] = {sums[i], weights[i], Array()};
}

}  // namespace kusari::training
