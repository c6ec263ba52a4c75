#pragma once
// BatchSchedule: the bookkeeping of Chainer's SerialIterator without the data: which examples each
// batch holds, the epoch counters, and how the last partial batch of an epoch wraps into the next.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/core/serializer.h>

namespace kusari::data {

// Where one example of a batch comes from: its index in the data set and the epoch it belongs to.
struct KUSARI_API BatchEntry {
  int64_t index = 0;
  int64_t epoch = 0;
};

// The order of examples over epochs. With shuffling, epoch e visits the data set in the order
// random_permutation(size, seed, e). Copies are cheap (the order is shared, never modified).
class KUSARI_API BatchSchedule {
 public:
  // Throws ValueError on a batch size below 1, or on an empty data set that would repeat forever.
  BatchSchedule(int64_t dataset_size, int64_t batch_size, bool repeat, bool shuffle, uint64_t seed);
  // The next batch: batch_size entries, continued from the next epoch's order when an epoch ends and
  // repeat is on; without repeat the last batch is the remainder, and after it every batch is empty.
  std::vector<BatchEntry> next();
  // Back to the start of epoch 0.
  void reset();
  // Saves or loads current_position, epoch, is_new_epoch, previous_epoch_detail, seed and (when shuffling)
  // order, so a loaded schedule continues exactly where the saved one was.
  void serialize(Serializer& serializer);

  // Examples per batch.
  int64_t batch_size() const { return batch_size_; }
  // Completed passes over the data set.
  int64_t epoch() const { return epoch_; }
  // True when the last batch completed an epoch.
  bool is_new_epoch() const { return is_new_epoch_; }
  // epoch + (position in the current epoch) / size.
  double epoch_detail() const;
  // epoch_detail() before the last batch; empty before the first.
  std::optional<double> previous_epoch_detail() const;
  // Index into the current epoch's order of the next example.
  int64_t current_position() const { return position_; }

 private:
  // The order of epoch `epoch` (null without shuffling, meaning 0, 1, 2, ...).
  std::shared_ptr<const std::vector<int64_t>> order_of(int64_t epoch) const;
  int64_t index_at(int64_t position) const;

  int64_t dataset_size_;
  int64_t batch_size_;
  bool repeat_;
  bool shuffle_;
  uint64_t seed_;
  int64_t position_ = 0;
  int64_t epoch_ = 0;
  bool is_new_epoch_ = false;
  double previous_epoch_detail_ = -1;  // negative before the first batch
  std::shared_ptr<const std::vector<int64_t>> order_;
};

}  // namespace kusari::data
