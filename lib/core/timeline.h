#pragma once
// The timeline (Horovod's HOROVOD_TIMELINE, for kusari): with KUSARI_TIMELINE=PATH every process writes
// the spans of its work — forward, backward, each gradient bucket's pack, all-reduce and install, the
// update, waits for data, evaluation — as Chrome trace events to PATH.rank<R>.json (PATH's ".json", if
// any, moved to the end), which chrome://tracing and Perfetto open. Without the variable a span records
// nothing and formats no name.

#include <chrono>
#include <string>

#include <kusari/core/api.h>
#include <kusari/core/error.h>
#include <kusari/core/profiler.h>

namespace kusari::timeline {

// Whether KUSARI_TIMELINE is set (read once).
KUSARI_API bool enabled();
// The rank the process's events and file name carry (0 until set; the first communicator sets it).
KUSARI_API void set_rank(int rank);
// Writes the events recorded so far and closes the JSON array; the file stays valid after every call
// (it runs at exit too, and later events reopen the array).
KUSARI_API void flush();

// Work that ran on a device from `start` (the host's steady clock) for `duration`, in the lane named
// `lane` ("cuda:0 stream 7"; one lane per name, below the host threads). Nothing without the timeline.
KUSARI_API void add_device_event(std::string name, std::chrono::steady_clock::time_point start,
                                 std::chrono::nanoseconds duration, const std::string& lane);

// Work on this thread from construction to destruction; also a phase of the profiler's.
class KUSARI_API Span {
 public:
  // Named cat(name...) ("backward"; "bucket ", 2, " allreduce"), formatted only when the timeline is on
  // (or the profiler records).
  template <class... Parts>
  explicit Span(const Parts&... name) : phase_(profiler::ScopeKind::phase, name...) {
    if (enabled()) begin(cat(name...));
  }
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  void begin(std::string name);
  profiler::Scope phase_;
  std::string name_;
  std::chrono::steady_clock::time_point start_;
  bool active_ = false;
};

}  // namespace kusari::timeline
