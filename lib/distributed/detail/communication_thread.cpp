#include <kusari/distributed/detail/communication_thread.h>

namespace kusari::distributed {

CommunicationThread::CommunicationThread(bool threaded) {
  if (threaded) worker_ = std::thread([this] { work(); });
}

CommunicationThread::~CommunicationThread() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void CommunicationThread::execute(const std::function<void()>& task) {
  std::exception_ptr error;
  {
    std::lock_guard lock(mutex_);
    error = error_;
  }
  if (!error) {
    try {
      task();
    } catch (...) {
      error = std::current_exception();
    }
  }
  {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = error;
    ++finished_;
  }
  changed_.notify_all();
}

CommunicationThread::Ticket CommunicationThread::submit(std::function<void()> task) {
  if (!worker_.joinable()) {
    const Ticket ticket = ++submitted_;
    execute(task);
    return ticket;
  }
  Ticket ticket;
  {
    std::lock_guard lock(mutex_);
    ticket = ++submitted_;
    queue_.push_back(std::move(task));
  }
  changed_.notify_all();
  return ticket;
}

void CommunicationThread::wait(Ticket ticket) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return finished_ >= ticket || error_; });
  if (error_) std::rethrow_exception(error_);
}

void CommunicationThread::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    execute(task);
    lock.lock();
  }
}

}  // namespace kusari::distributed
