#pragma once
// CommunicationThread: runs one optimizer's MPI work in submission order on a thread of its own, so
// all-reduces proceed while the main thread computes. Internal header.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace kusari::distributed {

// A FIFO of tasks run by one worker thread (or at once, on the caller's thread, when not threaded:
// MPI without MPI_THREAD_MULTIPLE). The first task that throws stops the queue: later tasks are
// skipped and every wait() rethrows that exception.
class CommunicationThread {
 public:
  // Position of a task in the queue (1 for the first).
  using Ticket = int64_t;

  // A queue with its own thread when `threaded`, else one that runs each task inside submit().
  explicit CommunicationThread(bool threaded);
  // Runs every task already submitted, then joins the thread: ranks that destroy their queues after
  // the same submissions all complete the same collectives (dropping the tasks that had not started
  // would strand the ranks whose thread had started one).
  ~CommunicationThread();
  CommunicationThread(const CommunicationThread&) = delete;
  CommunicationThread& operator=(const CommunicationThread&) = delete;

  // Queues `task`; returns its ticket.
  Ticket submit(std::function<void()> task);
  // Waits until the task `ticket` and every earlier one have run; rethrows a task's exception.
  void wait(Ticket ticket);
  // Waits for every task submitted so far.
  void wait_all() { wait(submitted_); }
  // Submits `task` and waits for it.
  void run(std::function<void()> task) { wait(submit(std::move(task))); }
  // Whether tasks run on a thread of their own.
  bool threaded() const { return worker_.joinable(); }

 private:
  void work();
  // Runs one task, recording its exception (caller holds no lock).
  void execute(const std::function<void()>& task);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  Ticket submitted_ = 0;
  Ticket finished_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace kusari::distributed
