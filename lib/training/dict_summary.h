#pragma once
// DictSummary: running weighted means of observations, key by key (Chainer's DictSummary).

#include <map>
#include <string>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>
#include <kusari/training/reporter.h>

namespace kusari::training {

// Accumulates observations over an interval and gives each key's weighted mean.
class KUSARI_API DictSummary {
 public:
  // Adds every value of `observation` with `weight` (> 0; e.g. a batch size); keys may differ between calls.
  void add(const Observation& observation, double weight = 1);
  // Adds `other`'s weighted sums and weights key by key, as if its observations had been added here.
  void merge(const DictSummary& other);
  // Σ weight·value / Σ weight for every key seen since the last clear().
  Observation compute_mean() const;
  // Forgets everything.
  void clear() { totals_.clear(); }
  // Whether nothing has been added since the last clear().
  bool empty() const { return totals_.empty(); }
  // Saves or loads the keys with their weighted sums and total weights.
  void serialize(Serializer& serializer);

 private:
  struct Total {
    double weighted_sum = 0;
    double weight = 0;
  };
  std::map<std::string, Total> totals_;
};

}  // namespace kusari::training
