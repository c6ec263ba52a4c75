#include <kusari/data/serial_iterator.h>

namespace kusari::data {

SerialIterator::SerialIterator(DatasetPtr dataset, int64_t batch_size, bool repeat, bool shuffle, uint64_t seed)
    : dataset_(std::move(dataset)),
      schedule_(dataset_size(dataset_, "SerialIterator"), batch_size, repeat, shuffle, seed) {}

std::vector<Example> SerialIterator::next() {
  std::vector<Example> batch;
  for (const BatchEntry& entry : schedule_.next()) batch.push_back(dataset_->get(entry.index, entry.epoch));
  return batch;
}

}  // namespace kusari::data
