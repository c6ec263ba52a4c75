#include <kusari/data/batch_schedule.h>

#include <algorithm>
#include <bit>

#include <kusari/data/random_stream.h>

namespace kusari::data {

BatchSchedule::BatchSchedule(int64_t dataset_size, int64_t batch_size, bool repeat, bool shuffle, uint64_t seed)
    : dataset_size_(dataset_size), batch_size_(batch_size), repeat_(repeat), shuffle_(shuffle), seed_(seed) {
  if (batch_size < 1) throw ValueError(cat("iterator: expected a batch size of at least 1, got ", batch_size));
  if (dataset_size < 0 || (repeat && dataset_size == 0)) {
    throw ValueError(cat("iterator: expected a non-empty data set to repeat over, got ", dataset_size, " examples"));
  }
  order_ = order_of(0);
}

std::shared_ptr<const std::vector<int64_t>> BatchSchedule::order_of(int64_t epoch) const {
  if (!shuffle_) return nullptr;
  return std::make_shared<const std::vector<int64_t>>(
      random_permutation(dataset_size_, seed_, static_cast<uint64_t>(epoch)));
}

int64_t BatchSchedule::index_at(int64_t position) const {
  return order_ ? (*order_)[static_cast<size_t>(position)] : position;
}

std::vector<BatchEntry> BatchSchedule::next() {
  if (!repeat_ && epoch_ > 0) return {};
  previous_epoch_detail_ = epoch_detail();
  is_new_epoch_ = false;
  std::vector<BatchEntry> batch;
  batch.reserve(static_cast<size_t>(batch_size_));
  while (static_cast<int64_t>(batch.size()) < batch_size_) {
    const int64_t take = std::min(batch_size_ - static_cast<int64_t>(batch.size()), dataset_size_ - position_);
    for (int64_t p = position_; p < position_ + take; ++p) batch.push_back({index_at(p), epoch_});
    position_ += take;
    if (position_ < dataset_size_) break;
    position_ = 0;
    ++epoch_;
    is_new_epoch_ = true;
    if (!repeat_) break;
    order_ = order_of(epoch_);
  }
  return batch;
}

void BatchSchedule::reset() {
  position_ = 0;
  epoch_ = 0;
  is_new_epoch_ = false;
  previous_epoch_detail_ = -1;
  order_ = order_of(0);
}

double BatchSchedule::epoch_detail() const {
  if (dataset_size_ == 0) return static_cast<double>(epoch_);
  return static_cast<double>(epoch_) + static_cast<double>(position_) / static_cast<double>(dataset_size_);
}

std::optional<double> BatchSchedule::previous_epoch_detail() const {
  if (previous_epoch_detail_ < 0) return std::nullopt;
  return previous_epoch_detail_;
}

void BatchSchedule::serialize(Serializer& serializer) {
  int64_t new_epoch = is_new_epoch_ ? 1 : 0;
  auto seed = std::bit_cast<int64_t>(seed_);
  int64_t position = position_;
  serializer("current_position", position);
  if (position < 0 || position > dataset_size_) {
    throw ValueError(cat("iterator: loaded current_position ", position, " is outside a data set of size ",
                         dataset_size_));
  }
  position_ = position;
  serialize_count(serializer, "epoch", epoch_, "iterator");
  serializer("is_new_epoch", new_epoch);
  serialize_at_least(serializer, "previous_epoch_detail", previous_epoch_detail_, -1, "iterator");
  serializer("seed", seed);
  is_new_epoch_ = new_epoch != 0;
  seed_ = std::bit_cast<uint64_t>(seed);
  if (!shuffle_) return;
  // Loads into a copy of the current order, so a reader's dry run (see load_npz) finds a target of the
  // expected shape and leaves the order as it is.
  Array order = Array::from_vector(*order_, {dataset_size_}, Dtype::int64, Device::cpu());
  serializer("order", order);
  if (!serializer.is_loading()) return;
  if (!order.defined() || order.shape() != Shape{dataset_size_}) {
    throw ValueError(cat("iterator: expected a loaded order of shape ", Shape{dataset_size_}, ", got ",
                         order.defined() ? order.shape().to_string() : "none"));
  }
  std::vector<int64_t> loaded = order.to_vector<int64_t>();
  std::vector<bool> seen(loaded.size());
  for (size_t i = 0; i < loaded.size(); ++i) {
    const int64_t index = loaded[i];
    if (index < 0 || index >= dataset_size_ || seen[static_cast<size_t>(index)]) {
      throw ValueError(cat("iterator: expected a loaded order that is a permutation of 0..", dataset_size_ - 1,
                           ", got ", index, " at position ", i, index < 0 || index >= dataset_size_ ? "" : " again"));
    }
    seen[static_cast<size_t>(index)] = true;
  }
  order_ = std::make_shared<const std::vector<int64_t>>(std::move(loaded));
}

}  // namespace kusari::data
