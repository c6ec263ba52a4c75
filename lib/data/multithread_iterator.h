#pragma once
// MultithreadIterator: the batches of SerialIterator, loaded ahead by worker threads.

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <kusari/core/api.h>
#include <kusari/data/iterator.h>

namespace kusari::data {

// Yields exactly the batches a SerialIterator with the same arguments yields; worker threads fetch the
// examples of the next n_prefetch batches (one example per task) while the caller works on the current one.
class KUSARI_API MultithreadIterator : public Iterator {
 public:
  // n_threads 0 means one per hardware thread. The data set's get() must be safe to call concurrently.
  MultithreadIterator(DatasetPtr dataset, int64_t batch_size, bool repeat = true, bool shuffle = true,
                      uint64_t seed = 0, int n_threads = 0, int n_prefetch = 2);
  // Stops and joins the workers (examples being fetched are finished first).
  ~MultithreadIterator() override;
  MultithreadIterator(const MultithreadIterator&) = delete;
  MultithreadIterator& operator=(const MultithreadIterator&) = delete;

  // Waits for the next prefetched batch; rethrows the first error a worker met while fetching it.
  std::vector<Example> next() override;
  // Back to the start of epoch 0 (prefetched batches are dropped).
  void reset() override;
  // Saves the position of the last batch handed out, or loads one and drops prefetched batches.
  void serialize(Serializer& serializer) override;

 protected:
  const BatchSchedule& schedule() const override { return current_; }

 private:
  struct Pending;
  struct Task {
    std::shared_ptr<Pending> batch;
    size_t slot = 0;
    BatchEntry entry;
  };

  // Plans the batch after the last planned one and queues its examples for the workers.
  void plan_one();
  // Forgets every planned batch (workers finish the example in hand and drop it).
  void discard_planned();
  // The loop each worker thread runs.
  void work();

  DatasetPtr dataset_;
  BatchSchedule current_;  // as of the last batch handed out
  BatchSchedule planned_;  // as of the last batch planned
  int n_prefetch_;
  std::deque<std::shared_ptr<Pending>> pending_;  // planned batches, oldest first (caller's thread only)
  std::mutex mutex_;
  std::condition_variable task_ready_;
  std::condition_variable example_done_;
  std::deque<Task> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace kusari::data
