#pragma once
// DictSummary: running weighted means of observations, key by key (Chainer's DictSummary). Values
// reported on a device are summed there, and read once when a mean is computed.

#include <map>
#include <string>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>
#include <kusari/training/reporter.h>

namespace kusari::training {

// Accumulates observations over an interval and gives each key's weighted mean.
class KUSARI_API DictSummary {
 public:
  // Adds every value of `observation` with `weight` (> 0; e.g. a batch size); keys may differ between
  // calls. A value still on a device is added on the device (nothing read to the host).
  void add(const Observation& observation, double weight = 1);
  // Adds `other`'s weighted sums and weights key by key, as if its observations had been added here.
  void merge(const DictSummary& other);
  // Σ weight·value / Σ weight for every key seen since the last clear() (device sums read here).
  Observation compute_mean() const;
  // Forgets everything.
  void clear() { totals_.clear(); }
  // Whether nothing has been added since the last clear().
  bool empty() const { return totals_.empty(); }
  // Saves or loads the keys with their weighted sums and total weights.
  void serialize(Serializer& serializer);

 private:
  // A key's weighted sum: the host values' and, for values added on a device, a float64 0-d array
  // there (undefined until one is).
  struct Total {
    double weighted_sum = 0;
    double weight = 0;
    Array device_sum;
    // The whole weighted sum on the host (reads device_sum).
    double sum() const { return weighted_sum + (device_sum.defined() ? device_sum.item<double>() : 0.0); }
  };
  std::map<std::string, Total> totals_;
};

}  // namespace kusari::training
