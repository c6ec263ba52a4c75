// The watch over device collectives in flight (detail/collective_watch.h).

#include <kusari/kernels/cuda/detail/collective_watch.h>

#include <algorithm>
#include <cstdio>
#include <exception>

#include <kusari/core/error.h>

namespace kusari::kernels::cuda {
namespace {

// "kusari: <origin>: <what> has not completed on the device after <age> s: ...": a late collective's line.
std::string late_line(const std::string& origin, const std::string& what, double age) {
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.1f", age);
  return cat("kusari: ", origin.empty() ? "" : origin + ": ", what, " has not completed on the device after ", seconds,
             " s: a rank has not joined it (stalled, or taking another path)");
}

}  // namespace

void PendingCollectives::add(std::string what, std::function<bool()> done, Clock::time_point queued) {
  const std::lock_guard lock(mutex_);
  entries_.push_back({std::move(what), std::move(done), queued});
}

PendingCollectives::Verdict PendingCollectives::check(Clock::time_point now, const WatchSettings& settings) {
  const std::lock_guard lock(mutex_);
  std::erase_if(entries_, [](const Entry& e) { return e.done(); });
  Verdict verdict;
  for (Entry& e : entries_) {  // oldest first: added in queue order
    const double age = std::chrono::duration<double>(now - e.queued).count();
    if (settings.timeout_seconds > 0 && age >= settings.timeout_seconds && !verdict.expired) {
      verdict.expired = late_line(settings.origin, e.what, age);
    }
    if (!e.warned && settings.warning_seconds > 0 && age >= settings.warning_seconds) {
      e.warned = true;
      verdict.warnings.push_back(late_line(settings.origin, e.what, age));
    }
  }
  return verdict;
}

size_t PendingCollectives::pending() const {
  const std::lock_guard lock(mutex_);
  return entries_.size();
}

CollectiveWatch::CollectiveWatch(WatchSettings settings, std::function<void(const std::string&)> end_job,
                                 std::function<void(const std::string&)> warn, std::chrono::milliseconds poll)
    : settings_(settings), end_job_(std::move(end_job)), warn_(std::move(warn)), poll_(poll) {
  if (!warn_) {
    warn_ = [](const std::string& line) {
      std::fprintf(stderr, "%s\n", line.c_str());
      std::fflush(stderr);
    };
  }
  if (settings_.warning_seconds > 0) thread_ = std::thread([this] { run(); });
}

CollectiveWatch::~CollectiveWatch() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CollectiveWatch::add(std::string what, std::function<bool()> done) {
  if (watching()) pending_.add(std::move(what), std::move(done), PendingCollectives::Clock::now());
}

void CollectiveWatch::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    try {
      const PendingCollectives::Verdict verdict = pending_.check(PendingCollectives::Clock::now(), settings_);
      for (const std::string& line : verdict.warnings) warn_(line);
      if (verdict.expired) {
        ended_ = true;
        end_job_(cat(*verdict.expired, "; ending the job (KUSARI_STALL_TIMEOUT=", settings_.timeout_seconds, ")"));
        return;
      }
    } catch (const std::exception& e) {  // the watch stops; the collectives go on unwatched
      ended_ = true;
      warn_(cat("kusari: ", settings_.origin, settings_.origin.empty() ? "" : ": ",
                "the watch over device collectives stopped: ", e.what()));
      return;
    }
    lock.lock();
    wake_.wait_for(lock, poll_, [this] { return stopping_; });
  }
}

}  // namespace kusari::kernels::cuda
