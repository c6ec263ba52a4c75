#pragma once
// Iterator: hands out minibatches of a data set epoch after epoch (Chainer's iterator interface).

#include <cstdint>
#include <optional>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>
#include <kusari/data/batch_schedule.h>
#include <kusari/data/dataset.h>

namespace kusari::data {

// The interface trainers and evaluators draw batches from.
class KUSARI_API Iterator {
 public:
  virtual ~Iterator() = default;
  // The next minibatch; empty once a non-repeating iterator has gone through the data set.
  virtual std::vector<Example> next() = 0;
  // Back to the start of epoch 0.
  virtual void reset() = 0;
  // Saves or loads the position and order, so a loaded iterator continues as the saved one would have.
  virtual void serialize(Serializer& serializer) = 0;

  // Examples per batch.
  int64_t batch_size() const { return schedule().batch_size(); }
  // Completed passes over the data set.
  int64_t epoch() const { return schedule().epoch(); }
  // True when the last batch completed an epoch.
  bool is_new_epoch() const { return schedule().is_new_epoch(); }
  // Epochs done as a fraction (epoch + position / size).
  double epoch_detail() const { return schedule().epoch_detail(); }
  // epoch_detail() before the last batch; empty before the first batch.
  std::optional<double> previous_epoch_detail() const { return schedule().previous_epoch_detail(); }

 protected:
  // The counters as of the last batch handed out.
  virtual const BatchSchedule& schedule() const = 0;
  // The size of `dataset`; throws ValueError naming the iterator `kind` when it is null.
  static int64_t dataset_size(const DatasetPtr& dataset, const char* kind);
};

}  // namespace kusari::data
