#include <kusari/data/multithread_iterator.h>

#include <exception>

namespace kusari::data {

// One planned batch; examples, remaining and failure are guarded by the iterator's mutex.
struct MultithreadIterator::Pending {
  explicit Pending(BatchSchedule after) : schedule_after(std::move(after)) {}
  BatchSchedule schedule_after;  // the counters once this batch is handed out
  std::vector<Example> examples;
  size_t remaining = 0;
  size_t failed_slot = 0;
  std::exception_ptr failure;  // of the lowest failed slot
};

MultithreadIterator::MultithreadIterator(DatasetPtr dataset, int64_t batch_size, bool repeat, bool shuffle,
                                         uint64_t seed, int n_threads, int n_prefetch)
    : dataset_(std::move(dataset)),
      current_(dataset_size(dataset_, "MultithreadIterator"), batch_size, repeat, shuffle, seed),
      planned_(current_),
      n_prefetch_(n_prefetch) {
  if (n_threads < 0 || n_prefetch < 1) {
    throw ValueError(cat("MultithreadIterator: expected n_threads >= 0 and n_prefetch >= 1, got ", n_threads, " and ",
                         n_prefetch));
  }
  if (n_threads == 0) n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int t = 0; t < n_threads; ++t) workers_.emplace_back([this] { work(); });
}

MultithreadIterator::~MultithreadIterator() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    tasks_.clear();
  }
  task_ready_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void MultithreadIterator::plan_one() {
  const std::vector<BatchEntry> entries = planned_.next();
  auto batch = std::make_shared<Pending>(planned_);
  batch->examples.resize(entries.size());
  batch->remaining = entries.size();
  {
    std::lock_guard lock(mutex_);
    for (size_t slot = 0; slot < entries.size(); ++slot) tasks_.push_back({batch, slot, entries[slot]});
  }
  task_ready_.notify_all();
  pending_.push_back(std::move(batch));
}

void MultithreadIterator::discard_planned() {
  {
    std::lock_guard lock(mutex_);
    tasks_.clear();
  }
  pending_.clear();
  planned_ = current_;
}

void MultithreadIterator::work() {
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mutex_);
      task_ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (stopping_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    Example example;
    std::exception_ptr failure;
    try {
      example = dataset_->get(task.entry.index, task.entry.epoch);
    } catch (...) {
      failure = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      Pending& batch = *task.batch;
      batch.examples[task.slot] = std::move(example);
      if (failure && (!batch.failure || task.slot < batch.failed_slot)) {
        batch.failure = failure;
        batch.failed_slot = task.slot;
      }
      --batch.remaining;
    }
    example_done_.notify_all();
  }
}

std::vector<Example> MultithreadIterator::next() {
  while (static_cast<int>(pending_.size()) < n_prefetch_) plan_one();
  std::shared_ptr<Pending> batch = std::move(pending_.front());
  pending_.pop_front();
  plan_one();  // keep n_prefetch batches loading while the caller works on this one
  {
    std::unique_lock lock(mutex_);
    example_done_.wait(lock, [&] { return batch->remaining == 0; });
  }
  current_ = batch->schedule_after;
  if (batch->failure) std::rethrow_exception(batch->failure);
  return std::move(batch->examples);
}

void MultithreadIterator::reset() {
  current_.reset();
  discard_planned();
}

void MultithreadIterator::serialize(Serializer& serializer) {
  current_.serialize(serializer);
  if (serializer.is_loading()) discard_planned();
}

}  // namespace kusari::data
