#pragma once
// Internal to the CUDA backend, and plain C++ so that the host suite tests it in every build: the watch
// over device collectives in flight. An NCCL collective completes on the device, long after its host
// call returned, so the MPI stall inspector never sees a rank that does not join one: the device just
// waits, and so does the next host call that synchronizes with it. The watch polls every queued
// collective: past the stall warning (KUSARI_STALL_WARNING) it prints which collective is late, on which
// device and since when, and past the stall timeout (KUSARI_STALL_TIMEOUT) it ends the job through the
// callback its owner gave (the communicator's MPI_Abort), so a stalled rank is reported, never a hang.
// A collective's age counts from when the host queued it, so it includes the device work queued before
// it on its stream: KUSARI_STALL_TIMEOUT must exceed the longest step, as for the stall inspector.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kusari::kernels::cuda {

// When the watch speaks up (the stall inspector's settings).
struct WatchSettings {
  double warning_seconds = 60;  // print after this long (0: no watch)
  double timeout_seconds = 0;   // end the job after this long (0: never)
  std::string origin;           // who reports, at the start of every line ("rank 3")
};

// The collectives queued and not yet seen complete; thread-safe, with no thread of its own.
class PendingCollectives {
 public:
  using Clock = std::chrono::steady_clock;  // the clock of queue times and ages

  // What check() found at one time.
  struct Verdict {
    std::vector<std::string> warnings;  // one line per collective that has just passed the warning
    std::optional<std::string> expired; // the line of the oldest collective past the timeout
  };

  // Records collective `what` queued at `queued`; done() (cheap, callable from any thread) says
  // whether it has completed.
  void add(std::string what, std::function<bool()> done, Clock::time_point queued);
  // Forgets the collectives done() reports complete, and judges the rest at `now`.
  Verdict check(Clock::time_point now, const WatchSettings& settings);
  // How many are still recorded.
  size_t pending() const;

 private:
  struct Entry {
    std::string what;
    std::function<bool()> done;
    Clock::time_point queued;
    bool warned = false;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

// PendingCollectives and a thread that checks them every `poll` (none when warning_seconds is 0).
class CollectiveWatch {
 public:
  // warn(line) prints a late collective's line (stderr by default); end_job(line) is called once, on the
  // watch's thread, for the first collective past the timeout, and should not return (MPI_Abort).
  CollectiveWatch(WatchSettings settings, std::function<void(const std::string&)> end_job,
                  std::function<void(const std::string&)> warn = {},
                  std::chrono::milliseconds poll = std::chrono::milliseconds(100));
  // Stops the thread (collectives still pending are no longer watched).
  ~CollectiveWatch();
  CollectiveWatch(const CollectiveWatch&) = delete;
  CollectiveWatch& operator=(const CollectiveWatch&) = delete;

  // Watches collective `what`, queued now, until done() reports it complete (nothing without a thread).
  void add(std::string what, std::function<bool()> done);
  // Whether a thread watches (not after it ended the job or stopped on an error).
  bool watching() const { return thread_.joinable() && !ended_; }

 private:
  void run();

  WatchSettings settings_;
  std::function<void(const std::string&)> end_job_;
  std::function<void(const std::string&)> warn_;
  std::chrono::milliseconds poll_;
  PendingCollectives pending_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> ended_{false};
  std::thread thread_;
};

}  // namespace kusari::kernels::cuda
