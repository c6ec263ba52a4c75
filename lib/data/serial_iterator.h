#pragma once
// SerialIterator: fetches each minibatch in the calling thread.

#include <kusari/core/api.h>
#include <kusari/data/iterator.h>

namespace kusari::data {

// Chainer's SerialIterator with a seeded, reproducible order (see BatchSchedule).
class KUSARI_API SerialIterator : public Iterator {
 public:
  // Iterates over `dataset` in batches of batch_size; shuffled with `seed` when shuffle is set; forever
  // when repeat is set, else once.
  SerialIterator(DatasetPtr dataset, int64_t batch_size, bool repeat = true, bool shuffle = true, uint64_t seed = 0);
  // Fetches the examples of the next batch in this thread.
  std::vector<Example> next() override;
  // Back to the start of epoch 0.
  void reset() override { schedule_.reset(); }
  // Saves or loads the schedule (see BatchSchedule::serialize).
  void serialize(Serializer& serializer) override { schedule_.serialize(serializer); }

 protected:
  const BatchSchedule& schedule() const override { return schedule_; }

 private:
  DatasetPtr dataset_;
  BatchSchedule schedule_;
};

}  // namespace kusari::data
